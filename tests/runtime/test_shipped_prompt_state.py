"""A prompt state shipped with the model folder (`botpsy-web prompt-state`, web/runtime/state/
shipped-prompt-state.js): `botpsy-web prompt-state` computes, through the app's own warm-up on WASM,
the state of the page's default prompt (system prompt + default tools) and writes it beside the
model with its key. A first visit whose prompt starts with that prompt restores it instead of
prefilling, and answers with exactly the tokens and logits of a visit that computed it, on any
thread count. Anything else (other tools, another system prompt or template, another backend or
dtype, a damaged or truncated file) is computed as without it, with no error."""

import hashlib
import json
import shutil

import pytest
from filelock import FileLock

from botpsy_web.bench_scenario import folder_agent
from botpsy_web.prompt_state import ship_prompt_state
from botpsy_web.prompt_state.key import default_prompt, file_sha256, tokens_sha256
from botpsy_web.verify_browser import open_harness

MODEL = "tiny-qwen3.5"
SHIPPED = "tiny-qwen3.5-shipped"  # a copy of MODEL's folder that ships the state; MODEL's own does not
DTYPE = "q8"
QUESTION = "<|im_start|>user\nWhat time is it in Tokyo?<|im_end|>\n<|im_start|>assistant\n"
GREEDY = {"maxTokens": 6, "stopOnEos": False}

LOAD = """
async ({folderUrl, backend, dtype}) => {
  window.client?.terminate();
  window.client = new window.botpsyRuntime.ModelClient();
  const info = await window.client.load(folderUrl, {backend, dtype});
  return {backend: info.backend, dtype: info.dtype, threads: info.threads};
}
"""

# Greedy tokens of a prompt, with a SHA-256 of all their logits (compared between visits).
ANSWER = """
async ({prompt, options}) => {
  let stats = null;
  const tokens = [], logits = [];
  for await (const chunk of window.client.generate(prompt, {...options, returnLogits: true, onStats: (s) => { stats = s; }})) {
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


@pytest.fixture(scope="module")
def shipped(models_dir, exported_model):
    """SHIPPED: MODEL's folder copied, with the state `botpsy-web prompt-state` computes for it."""
    source = exported_model(MODEL)
    folder = models_dir / SHIPPED
    with FileLock(models_dir / f".{SHIPPED}.lock"):  # xdist workers share models_dir
        if not (folder / "manifest.json").is_file() or \
                (folder / "manifest.json").read_bytes() != (source / "manifest.json").read_bytes():
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(source, folder)
        result = ship_prompt_state(folder, dtype=DTYPE)
    return result


class Visit:
    """A first visit: a fresh browser profile on the runtime's harness page."""

    def __init__(self, page, server):
        self.page, self.server = page, server

    def load(self, name, backend="wasm", dtype=DTYPE):
        return self.page.evaluate(LOAD, {"folderUrl": f"{self.server}/models/{name}/", "backend": backend, "dtype": dtype})

    def prefill(self, prompt, persist=True):
        return self.page.evaluate("([p, persist]) => window.client.prefill(p, {persist})", [prompt, persist])

    def answer(self, prompt, **options):
        return self.page.evaluate(ANSWER, {"prompt": prompt, "options": {**GREEDY, **options}})

    def tokens(self, text):
        return self.page.evaluate("(text) => window.client.tokenize(text)", text)

    def stored_bytes(self, name):
        usage = self.page.evaluate("() => window.client.storageUsage()")
        folder_url = f"{self.server}/models/{name}/"
        return next(({"bytes": m["bytes"], "derived": m["derivedBytes"]} for m in usage["models"]
                     if m["folderUrl"] == folder_url), {"bytes": 0, "derived": 0})


@pytest.fixture
def first_visit(browser, open_guarded_page, server):
    """first_visit(isolated=True, serve=None) -> a Visit in a new browser context. isolated=False:
    the page is not cross-origin isolated (WASM runs one thread). serve: {url suffix: bytes} to
    answer instead of the server's files (a damaged state, an edited index)."""
    opened = []

    def open_visit(isolated=True, serve=None):
        context, page, guard = open_guarded_page(browser)
        opened.append((context, guard))
        if not isolated:
            context.route(f"{server}/web/runtime/harness.html", _without_isolation)
        for suffix, body in (serve or {}).items():
            context.route(f"{server}/models/{SHIPPED}/{suffix}", _answering(body))
        page.set_default_timeout(300_000)
        open_harness(page, server)
        return Visit(page, server)

    yield open_visit
    for context, guard in opened:
        context.close()
        guard.assert_clean()


def _answering(body):
    return lambda route: route.fulfill(status=200, body=body, headers={"Cross-Origin-Resource-Policy": "same-origin"})


def _without_isolation(route):
    response = route.fetch()
    headers = {name: value for name, value in response.headers.items()
               if name.lower() not in ("cross-origin-opener-policy", "cross-origin-embedder-policy")}
    route.fulfill(response=response, headers=headers)


def computed_answer(visit, prompt):
    """What a visit without any state answers: the prompt start prefilled, then the question."""
    visit.load(MODEL)
    assert visit.prefill(prompt, persist=False)["restoredTokens"] == 0
    return visit.answer(prompt + QUESTION)


def prompt_with(folder, *, system_prompt=None, without_tool=None):
    """The page's default prompt for `folder`, with another system prompt or one default tool fewer."""
    from botpsy_agent.agent import AgentOptions
    from botpsy_agent.browser_session import builtin_tools
    from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS

    agent = folder_agent(folder, AgentOptions(system_prompt=system_prompt) if system_prompt else None)
    for tool in builtin_tools():
        if tool.name != without_tool:
            agent.add_tool(tool, enabled_by_default=tool.name in DEFAULT_ENABLED_TOOLS)
    return agent.render_prompt_prefix()


def test_the_command_ships_the_state_of_the_pages_default_prompt_with_its_key(shipped, models_dir):
    folder, entry = shipped.folder, shipped.entry
    manifest = json.loads((folder / "manifest.json").read_text())
    index = json.loads((folder / "prompt-states.json").read_text())
    assert index["states"] == [entry] and entry["file"] == "prompt-states/wasm-q8.bin"

    assert entry["prompt"] == default_prompt(folder)
    assert entry["tokensSha256"] == tokens_sha256(folder, entry["prompt"])
    assert entry["tokenCount"] > 1000  # the system prompt and the default tools' schemas
    identity = entry["identity"]
    assert (identity["backend"], identity["dtype"], identity["graph"]) == ("wasm", DTYPE, "appending")
    spec = manifest["dtypes"][DTYPE]
    assert identity["modelFiles"] == {path: manifest["files"][path]["sha256"]
                                      for path in [spec["appending_file"], *spec["files"][1:]]}
    assert entry["size"] == shipped.file.stat().st_size and entry["sha256"] == file_sha256(shipped.file)
    assert entry["size"] < entry["rawBytes"], "packed smaller than the state"
    assert "MB" in shipped.describe() and "lossless" in shipped.describe()

    again = ship_prompt_state(folder, dtype=DTYPE)
    assert not again.computed and again.entry == entry, "a current state is not computed again"
    assert not (models_dir / MODEL / "prompt-states.json").exists(), "the source folder is left alone"


def test_a_first_visit_restores_the_shipped_state_and_answers_as_a_visit_that_computed_it(shipped, first_visit):
    prompt = shipped.entry["prompt"]
    computed = computed_answer(first_visit(), prompt)

    visit = first_visit()
    visit.load(SHIPPED)
    warmed = visit.prefill(prompt)  # the page's warm-up: persist
    answer = visit.answer(prompt + QUESTION)

    assert warmed["restoredTokens"] == warmed["promptTokens"] == shipped.entry["tokenCount"] == len(visit.tokens(prompt))
    assert warmed["promptState"]["source"] == "shipped" and warmed["promptState"]["rejected"] is None
    assert warmed["promptState"]["storedBytes"] is None, "the folder holds it: the browser keeps no second copy"
    assert answer["stats"]["reusedTokens"] >= warmed["promptTokens"]
    assert answer["tokens"] == computed["tokens"]
    assert answer["logitsSha256"] == computed["logitsSha256"]
    stored = visit.stored_bytes(SHIPPED)
    assert stored["derived"] == 0 and stored["bytes"] >= shipped.entry["size"], "kept like a model file"


def test_a_first_prompt_without_warm_up_restores_it_too(shipped, first_visit):
    prompt = shipped.entry["prompt"]
    visit = first_visit()
    visit.load(SHIPPED)
    answer = visit.answer(prompt + QUESTION)
    assert answer["stats"]["restoredTokens"] == shipped.entry["tokenCount"]
    assert answer["tokens"] == visit.answer(prompt + QUESTION, reusePrefix=False)["tokens"]


def test_one_thread_restores_the_state_two_threads_computed_and_computes_the_same_bits(shipped, first_visit):
    prompt = shipped.entry["prompt"]
    assert shipped.entry["identity"]["threads"] == 2
    one_thread = first_visit(isolated=False)
    assert one_thread.load(MODEL)["threads"] == 1
    computed = computed_answer(one_thread, prompt)
    two_threads = computed_answer(first_visit(), prompt)

    restoring = first_visit(isolated=False)
    assert restoring.load(SHIPPED)["threads"] == 1
    answer = restoring.answer(prompt + QUESTION)

    assert computed["logitsSha256"] == two_threads["logitsSha256"], "the thread count changes no bit"
    assert answer["stats"]["restoredTokens"] == shipped.entry["tokenCount"]
    assert answer["tokens"] == computed["tokens"] and answer["logitsSha256"] == computed["logitsSha256"]


@pytest.mark.parametrize("change", ["another tool set", "another system prompt or template"])
def test_a_prompt_that_does_not_start_with_the_shipped_one_is_computed(shipped, first_visit, change):
    prompt = (prompt_with(shipped.folder, without_tool="calculator") if change == "another tool set"
              else prompt_with(shipped.folder, system_prompt="You are a terse assistant."))
    assert not prompt.startswith(shipped.entry["prompt"])
    visit = first_visit()
    visit.load(SHIPPED)
    warmed = visit.prefill(prompt)
    assert warmed["restoredTokens"] == 0 and warmed["promptState"]["rejected"] is None
    assert warmed["promptState"]["storedBytes"] > 0, "the browser stores this prompt's own state"
    assert visit.answer(prompt + QUESTION)["tokens"] == visit.answer(prompt + QUESTION, reusePrefix=False)["tokens"]


def test_another_dtype_or_backend_does_not_use_it(shipped, first_visit):
    prompt = shipped.entry["prompt"]
    other_dtype = first_visit()
    other_dtype.load(SHIPPED, dtype="fp32")
    assert other_dtype.prefill(prompt)["restoredTokens"] == 0

    # The same state, its index saying it was computed on WebGPU (as a WebGPU visit's identity reads).
    index = json.loads((shipped.folder / "prompt-states.json").read_text())
    index["states"][0]["identity"].update(backend="webgpu", graph="standard")
    other_backend = first_visit(serve={"prompt-states.json": json.dumps(index).encode()})
    other_backend.load(SHIPPED)
    warmed = other_backend.prefill(prompt)
    assert warmed["restoredTokens"] == 0 and warmed["promptState"]["rejected"] is None


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "flipped byte, index updated"])
def test_a_damaged_shipped_state_is_computed_instead_without_an_error(shipped, first_visit, damage):
    prompt = shipped.entry["prompt"]
    packed = bytearray(shipped.file.read_bytes())
    serve = {}
    if damage == "truncated":
        packed = packed[:len(packed) // 2]
    else:
        packed[len(packed) // 2] ^= 0x01
    if damage == "flipped byte, index updated":  # the store accepts it: the unpacking or the checksum refuses it
        index = json.loads((shipped.folder / "prompt-states.json").read_text())
        index["states"][0].update(sha256=hashlib.sha256(packed).hexdigest(), size=len(packed))
        serve["prompt-states.json"] = json.dumps(index).encode()
    serve[shipped.entry["file"]] = bytes(packed)
    visit = first_visit(serve=serve)
    warnings = []
    visit.page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    visit.load(SHIPPED)

    warmed = visit.prefill(prompt)
    answer = visit.answer(prompt + QUESTION)

    assert warmed["restoredTokens"] == 0 and warmed["promptTokens"] == shipped.entry["tokenCount"]
    rejected = warmed["promptState"]["rejected"]
    expected = {"flipped byte": "integrity", "truncated": "bytes", "flipped byte, index updated": "unpack|checksum"}[damage]
    assert rejected.startswith("shipped:") and any(word in rejected for word in expected.split("|")), rejected
    assert any("shipped with the model was not used" in text for text in warnings)
    assert answer["tokens"] == visit.answer(prompt + QUESTION, reusePrefix=False)["tokens"]


def test_build_site_ships_the_state_with_the_model(shipped, tmp_path):
    from botpsy_web.site.build import SiteOptions, build_site

    built = build_site(SiteOptions(out=tmp_path / "out", models=(shipped.folder,), prompt_states=True))
    served = built.site / "models" / SHIPPED
    assert json.loads((served / "prompt-states.json").read_text())["states"] == [shipped.entry]
    assert file_sha256(served / shipped.entry["file"]) == shipped.entry["sha256"]
    assert built.model_files[SHIPPED][f"models/{SHIPPED}/{shipped.entry['file']}"] == shipped.entry["size"]
