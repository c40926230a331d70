"""Prompt state across page loads (web/runtime/state/prompt-state.js): a prefill marked `persist`
stores its state beside the model; a later page load that starts with the same tokens restores
it instead of computing them, and answers with exactly the tokens and logits (same bits) of the
visit that computed it. A state made by anything else (another dtype or backend, another
tool set), damaged, or deleted with the model is never used: the prompt is computed again."""

import re

import pytest

# A system prompt with tool schemas, as the agent's warm-up prefix is (up to where the user's
# message begins), and the same with one tool changed.
TOOL_LINES = [
    '{"name": "add_note", "description": "Save a note for later.", "parameters": {"text": "string"}}',
    '{"name": "list_notes", "description": "List the saved notes.", "parameters": {}}',
    '{"name": "add_todo", "description": "Add a todo with an optional due time.", "parameters": {"text": "string"}}',
    '{"name": "get_time", "description": "The current date and time.", "parameters": {}}',
    '{"name": "convert_units", "description": "Convert a value between units.", "parameters": {"value": "number"}}',
]
OTHER_TOOL = '{"name": "search_files", "description": "Search the files the user added.", "parameters": {"query": "string"}}'


def system_prefix(tools):
    return ("<|im_start|>system\nYou are BotPsy, a helpful assistant running privately on the user's device.\n"
            "# Tools\n<tools>\n" + "\n".join(tools) + "\n</tools><|im_end|>\n")


PREFIX = system_prefix(TOOL_LINES)
OTHER_PREFIX = system_prefix(TOOL_LINES + [OTHER_TOOL])
QUESTION = "<|im_start|>user\nName three colours.<|im_end|>\n<|im_start|>assistant\n"
GREEDY = {"maxTokens": 8, "stopOnEos": False}

# (model, backend, dtype, another dtype or backend for the mismatch test). KV-only tiny-llama
# (SmolLM2's architecture and tokenizer at toy size) cuts a stored state back to a shorter common
# start; tiny-qwen3.5's conv/recurrent state resumes only at its stored end. WebGPU runs the standard graph, its state in GPU buffers (SwiftShader is slow:
# only the return visit itself runs there).
CASES = [("tiny-llama", "wasm", "q8", ("wasm", "fp32")),
         ("tiny-qwen3.5", "wasm", "fp32", ("wasm", "q8"))]
WEBGPU_CASE = ("tiny-qwen3.5", "webgpu", "fp32", ("wasm", "fp32"))
case_id = lambda case: "-".join(case[:3])  # noqa: E731
# What does not depend on the architecture (the checksum, deleting with the model) runs on one.
HYBRID_ONLY = pytest.mark.parametrize("visit", CASES[1:], ids=[case_id(c) for c in CASES[1:]], indirect=True)

STATE_URL_PART = "/.botpsy-derived/prompt-state/"

# Greedy tokens of a prompt, with a SHA-256 of all their logits (compared across page loads).
ANSWER = """
async ({prompt, options}) => {
  const client = window.clients.model;
  let stats = null;
  const tokens = [], logits = [];
  for await (const chunk of client.generate(prompt, {...options, returnLogits: true, onStats: (s) => { stats = s; }})) {
    if (chunk.tokenId === null) continue;
    tokens.push(chunk.tokenId);
    logits.push(new Uint8Array(chunk.logits.buffer));
  }
  const all = new Uint8Array(logits.reduce((n, l) => n + l.length, 0));
  let at = 0;
  for (const l of logits) { all.set(l, at); at += l.length; }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return {tokens, stats, logitsSha256: Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")};
}
"""

# The stored prompt-state entries of the Cache API store: [url].
STATE_URLS = f"""
async () => {{
  const cache = await caches.open("botpsy-models-v1");
  return (await cache.keys()).map((r) => r.url).filter((url) => url.includes({STATE_URL_PART!r}));
}}
"""

DAMAGE = """
async ([url, damage]) => {
  const cache = await caches.open("botpsy-models-v1");
  const stored = await cache.match(url);
  const bytes = new Uint8Array(await stored.clone().arrayBuffer());
  const broken = damage === "truncated" ? bytes.slice(0, bytes.length >> 1) : bytes.slice();
  if (damage !== "truncated") broken[broken.length - 100] ^= 0x01;
  await cache.put(url, new Response(broken, {headers: stored.headers}));
}
"""


class Visit:
    """One model folder driven through the runtime harness page, page load after page load."""

    def __init__(self, page, server, runtime_driver, folder, backend, dtype):
        self.page, self.server, self.driver = page, server, runtime_driver
        self.folder, self.backend, self.dtype = folder, backend, dtype
        self.folder_url = f"{server}/models/{folder.name}/"
        # SwiftShader takes seconds a token: three still give three steps of logits to compare
        self.greedy = {**GREEDY, "maxTokens": 3} if backend == "webgpu" else GREEDY

    def load(self, backend=None, dtype=None):
        info = self.driver.load(self.page, self.server, self.folder, backend=backend or self.backend,
                                dtype=dtype or self.dtype)
        assert (info["backend"], info["dtype"]) == (backend or self.backend, dtype or self.dtype)
        return info

    def reload(self, **load_options):
        """A new page load (the stored data stays), with the model loaded again."""
        self.page.reload()
        self.page.wait_for_function("() => window.botpsyRuntime !== undefined")
        return self.load(**load_options)

    def prefill(self, prompt, persist=True):
        return self.page.evaluate("([p, persist]) => window.clients.model.prefill(p, {persist})", [prompt, persist])

    def answer(self, prompt, **options):
        return self.page.evaluate(ANSWER, {"prompt": prompt, "options": {**self.greedy, **options}})

    def tokenize(self, text):
        return self.page.evaluate("(text) => window.clients.model.tokenize(text)", text)

    def usage(self):
        usage = self.page.evaluate("() => window.clients.model.storageUsage()")
        return next((m for m in usage["models"] if m["folderUrl"] == self.folder_url), None)

    def state_urls(self):
        self.usage()  # waits for a state still being written
        return [url for url in self.page.evaluate(STATE_URLS) if url.startswith(self.folder_url)]

    def forget_states(self):
        """Deletes the stored prompt states, keeping the model files (no download again)."""
        self.page.evaluate("""async (urls) => {
            const cache = await caches.open("botpsy-models-v1");
            for (const url of urls) await cache.delete(url);
        }""", self.state_urls())
        assert self.state_urls() == []


@pytest.fixture(scope="module", params=CASES, ids=[case_id(case) for case in CASES])
def visit(request, runtime_page, server, exported_model, runtime_driver):
    name, backend, dtype, other = request.param
    visit = Visit(runtime_page, server, runtime_driver, exported_model(name), backend, dtype)
    visit.kv_only = name == "tiny-llama"
    visit.other = other
    visit.load()
    return visit


@pytest.fixture
def first_visit(visit):
    """Nothing stored; the prefix is prefilled with persist and the first answer taken."""
    visit.forget_states()
    visit.load()
    stored = visit.prefill(PREFIX)
    assert stored["restoredTokens"] == 0 and stored["reusedTokens"] == 0
    assert stored["promptState"]["storedBytes"] > 0
    return stored, visit.answer(PREFIX + QUESTION)


@pytest.mark.parametrize("visit", CASES + [WEBGPU_CASE], ids=[case_id(c) for c in CASES + [WEBGPU_CASE]], indirect=True)
def test_a_return_visit_restores_the_prefix_and_answers_with_the_same_tokens_and_logits(visit, first_visit):
    stored, first = first_visit
    assert visit.usage()["derivedBytes"] == stored["promptState"]["storedBytes"]

    visit.reload()
    restored = visit.prefill(PREFIX)
    again = visit.answer(PREFIX + QUESTION)

    assert restored["restoredTokens"] == restored["promptTokens"] == len(visit.tokenize(PREFIX))
    assert restored["promptState"]["storedBytes"] is None, "the same state is not written again"
    assert again["stats"]["reusedTokens"] >= restored["promptTokens"]
    assert again["tokens"] == first["tokens"]
    assert again["logitsSha256"] == first["logitsSha256"]
    assert visit.answer(PREFIX + QUESTION, reusePrefix=False)["tokens"] == first["tokens"]


def test_a_first_prompt_without_warm_up_restores_the_state_too(visit, first_visit):
    _, first = first_visit
    visit.reload()
    direct = visit.answer(PREFIX + QUESTION)
    assert direct["stats"]["restoredTokens"] == len(visit.tokenize(PREFIX))
    assert direct["tokens"] == first["tokens"]
    assert direct["logitsSha256"] == first["logitsSha256"]


def test_a_changed_tool_set_is_not_served_the_old_state(visit, first_visit):
    visit.reload()
    changed = visit.prefill(OTHER_PREFIX)
    common = next(i for i, (a, b) in enumerate(zip(visit.tokenize(PREFIX), visit.tokenize(OTHER_PREFIX))) if a != b)
    # KV can be cut back to the common start; conv/recurrent state holds the old tools, unusable.
    assert changed["restoredTokens"] == (common if visit.kv_only else 0)
    assert changed["promptState"]["storedBytes"] > 0, "the new prefix's state replaces the old one"
    answer = visit.answer(OTHER_PREFIX + QUESTION)
    assert answer["tokens"] == visit.answer(OTHER_PREFIX + QUESTION, reusePrefix=False)["tokens"]
    assert len(visit.state_urls()) == 1

    visit.reload()
    assert visit.prefill(OTHER_PREFIX)["restoredTokens"] == len(visit.tokenize(OTHER_PREFIX))


@HYBRID_ONLY
@pytest.mark.parametrize("damage", ["flipped byte", "truncated"])
def test_a_damaged_state_is_detected_and_computed_again(visit, first_visit, damage):
    _, first = first_visit
    [url] = visit.state_urls()
    visit.page.evaluate(DAMAGE, [url, damage])
    warnings = []
    visit.page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)

    visit.reload()
    recomputed = visit.prefill(PREFIX)
    answer = visit.answer(PREFIX + QUESTION)

    assert recomputed["restoredTokens"] == 0
    assert re.search("checksum|truncated", recomputed["promptState"]["rejected"])
    assert any("prompt state" in text for text in warnings)
    assert answer["tokens"] == first["tokens"] and answer["logitsSha256"] == first["logitsSha256"]
    assert recomputed["promptState"]["storedBytes"] > 0, "a good state is stored again"
    visit.reload()
    assert visit.prefill(PREFIX)["restoredTokens"] == recomputed["promptTokens"]


def test_a_state_made_with_another_dtype_or_backend_is_never_used(visit, first_visit):
    other_backend, other_dtype = visit.other
    [url] = visit.state_urls()
    visit.page.evaluate("""async (url) => {
        const stored = await (await caches.open("botpsy-models-v1")).match(url);
        window.savedState = {bytes: await stored.arrayBuffer(), headers: [...stored.headers]};
    }""", url)

    visit.load(backend=other_backend, dtype=other_dtype)
    other = visit.prefill(PREFIX)
    assert other["restoredTokens"] == 0 and other["promptState"]["rejected"] is None  # another file name
    [other_url] = visit.state_urls()
    assert other_url != url

    # The first setup's state under the name the other setup looks for: its identity gives it away.
    visit.page.evaluate("""async (url) => {
        const cache = await caches.open("botpsy-models-v1");
        await cache.put(url, new Response(window.savedState.bytes, {headers: window.savedState.headers}));
    }""", other_url)
    visit.load(backend=other_backend, dtype=other_dtype)
    refused = visit.prefill(PREFIX)
    assert refused["restoredTokens"] == 0
    assert "another model setup" in refused["promptState"]["rejected"]
    assert re.search("dtype|backend", refused["promptState"]["rejected"])
    assert refused["promptState"]["storedBytes"] > 0
    visit.load()


@HYBRID_ONLY
def test_removing_the_model_removes_its_states(visit, first_visit):
    assert visit.state_urls() and visit.usage()["derivedBytes"] > 0
    assert visit.page.evaluate("(url) => window.clients.model.deleteModel(url)", visit.folder_url) is True
    assert visit.state_urls() == []
    assert visit.usage() is None
    visit.reload()
    assert visit.prefill(PREFIX)["restoredTokens"] == 0
