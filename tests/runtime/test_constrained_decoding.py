"""Grammar-constrained tool calls in the real runtime (web/runtime/grammar/, the
"tool-call-grammar" logits processor; its args from botpsy_agent.grammar).

tiny-qwen3.5 has random weights: unconstrained it writes garbage, so every call it writes
under "required" is the grammar's doing. SmolLM2 checks the Hermes JSON format, whose
<tool_call> is several ordinary tokens; where its real words are not the point (many seeded
calls), tiny-llama (random weights, SmolLM2's tokenizer and format) checks it at a fraction of
the time. Token ids are read from the folders' own
tokenizer and manifest, never written here."""

import json
import re

import pytest

from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.grammar import logits_processor_spec
from botpsy_agent.parsing import ModelOutputParser
from botpsy_agent.validation import check_arguments

# Values a random model can finish (no free strings: those it would write until maxTokens).
BOUNDED_TOOLS = [
    {"type": "function", "function": {"name": "set_alarm", "description": "Set an alarm.", "parameters": {
        "type": "object", "properties": {
            "hour": {"type": "integer", "minimum": 0, "description": "hour"},
            "enabled": {"type": "boolean", "description": "on or off"},
            "repeat": {"type": "string", "enum": ["never", "daily", "weekdays"], "description": "repeat"}},
        "required": ["hour", "enabled"]}}},
    {"type": "function", "function": {"name": "todo_list", "description": "List todos.", "parameters": {
        "type": "object", "properties": {
            "status": {"type": "string", "enum": ["open", "done", "all"], "description": "which"}},
        "required": []}}},
]
SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in BOUNDED_TOOLS}
SEEDS = range(20)
# A stop at the call's end: the test is about the call, not the (random) text after it.
CALL_CLOSE = "</tool_call>"

LOAD = """
async ({key, folderUrl}) => {
  window.clients ??= {};
  const client = new window.botpsyRuntime.ModelClient();
  window.clients[key] = client;
  const info = await client.load(folderUrl, {backend: "wasm", dtype: "q8"});
  return {toolCallFormat: info.toolCallFormat, eos: info.eosTokenIds, callOpen: await client.tokenize("<tool_call>")};
}
"""

GENERATE = """
async ({key, prompt, options, cancelAfter}) => {
  const client = window.clients[key];
  let stats = null;
  const tokens = [], pieces = [];
  for await (const chunk of client.generate(prompt, {...options, onStats: (s) => { stats = s; }})) {
    if (chunk.tokenId !== null) tokens.push(chunk.tokenId);
    pieces.push(chunk.text);
    if (cancelAfter && pieces.join("").length >= cancelAfter) break;
  }
  return {tokens, text: pieces.join(""), stats};
}
"""

SEVERAL = """
async ({key, prompt, options, seeds}) => {
  const client = window.clients[key];
  const runs = [];
  for (const seed of seeds) {
    const pieces = [];
    for await (const chunk of client.generate(prompt, {...options, seed})) pieces.push(chunk.text);
    runs.push(pieces.join(""));
  }
  return runs;
}
"""


def _prompt(folder, tools, user="Set an alarm for seven, please."):
    config = json.loads((folder / "tokenizer_config.json").read_text())
    manifest = json.loads((folder / "manifest.json").read_text())
    chat_format = ChatFormat.from_model_files(config, manifest)
    messages = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": user}]
    return chat_format.render(messages, tools, thinking=False), chat_format


def _calls(text, chat_format, schemas=SCHEMAS):
    parser = ModelOutputParser(chat_format.tool_call_format, schemas)
    parser.feed(text)
    parser.finish()
    return parser.calls


@pytest.fixture(scope="module")
def models(runtime_page, server, exported_model):
    loaded = {}
    for key, name in (("qwen", "tiny-qwen3.5"), ("smol", "smollm2-135m"), ("llama", "tiny-llama")):
        folder = exported_model(name)
        info = runtime_page.evaluate(LOAD, {"key": key, "folderUrl": f"{server}/models/{folder.name}/"})
        prompt, chat_format = _prompt(folder, BOUNDED_TOOLS)
        loaded[key] = {**info, "folder": folder, "prompt": prompt, "format": chat_format}
    assert loaded["qwen"]["toolCallFormat"] == "qwen3_coder_xml"
    assert loaded["smol"]["toolCallFormat"] == "hermes_json"
    assert len(loaded["smol"]["callOpen"]) > 1  # SmolLM2 spells <tool_call> with several tokens
    assert (loaded["llama"]["toolCallFormat"], loaded["llama"]["callOpen"]) == ("hermes_json", loaded["smol"]["callOpen"])
    return loaded


def _generate(page, key, prompt, cancel_after=None, **options):
    return page.evaluate(GENERATE, {"key": key, "prompt": prompt, "options": options, "cancelAfter": cancel_after})


def _spec(model, mode, tools=BOUNDED_TOOLS):
    return logits_processor_spec(tools, model["toolCallFormat"], mode)


@pytest.mark.parametrize("key", ["qwen", "llama"])
def test_required_gives_a_valid_call_for_every_seed_at_temperature_one(models, runtime_page, key):
    model = models[key]
    runs = runtime_page.evaluate(SEVERAL, {"key": key, "prompt": model["prompt"], "seeds": list(SEEDS), "options": {
        "temperature": 1.0, "maxTokens": 200, "stopStrings": [CALL_CLOSE], "logitsProcessors": [_spec(model, "required")]}})
    for seed, text in zip(SEEDS, runs):
        calls = _calls(text, model["format"])
        assert calls, f"seed {seed}: no call in {text!r}"
        assert text.startswith("<tool_call>"), f"seed {seed}: the reply does not start with a call: {text!r}"
        first = calls[0]
        assert first.error is None, f"seed {seed}: {first.error} in {text!r}"
        assert first.name in SCHEMAS
        assert check_arguments(first.arguments, SCHEMAS[first.name]) == [], f"seed {seed}: {first.arguments}"


@pytest.mark.parametrize("key", ["qwen", "llama"])
def test_greedy_calls_write_the_greedy_call_at_any_temperature(models, runtime_page, key):
    """args.greedyCalls (the agent's default): a call's tokens, and the reply's choice of one, are
    picked greedily whatever the temperature, so sampling never changes which tool runs with what.
    Without it the same seeds write different calls (a random model's second-best tokens)."""
    model = models[key]
    spec = logits_processor_spec(BOUNDED_TOOLS, model["toolCallFormat"], "required", greedy_calls=True)
    options = {"maxTokens": 200, "stopStrings": [CALL_CLOSE]}
    greedy = _generate(runtime_page, key, model["prompt"], temperature=0, logitsProcessors=[_spec(model, "required")], **options)
    sampled = runtime_page.evaluate(SEVERAL, {"key": key, "prompt": model["prompt"], "seeds": [1, 2, 3, 4], "options": {
        **options, "temperature": 1.5, "logitsProcessors": [spec]}})
    assert sampled == [greedy["text"]] * 4
    free = runtime_page.evaluate(SEVERAL, {"key": key, "prompt": model["prompt"], "seeds": [1, 2, 3, 4], "options": {
        **options, "temperature": 1.5, "logitsProcessors": [_spec(model, "required")]}})
    assert len(set(free)) > 1, free
    stats = _generate(runtime_page, key, model["prompt"], temperature=1.5, seed=1, logitsProcessors=[spec], **options)["stats"]
    assert stats["grammarGreedyPicks"] > 0  # the record says how many tokens the call made greedy


@pytest.mark.parametrize("key", ["qwen", "llama"])
def test_a_named_tool_is_the_one_called(models, runtime_page, key):
    model = models[key]
    runs = runtime_page.evaluate(SEVERAL, {"key": key, "prompt": model["prompt"], "seeds": [1, 2, 3], "options": {
        "temperature": 1.0, "maxTokens": 200, "stopStrings": [CALL_CLOSE], "logitsProcessors": [_spec(model, "todo_list")]}})
    for text in runs:
        first = _calls(text, model["format"])[0]
        assert (first.name, first.error) == ("todo_list", None), text
        assert check_arguments(first.arguments, SCHEMAS["todo_list"]) == []


@pytest.mark.parametrize("key", ["qwen", "smol"])
def test_none_lets_no_call_open_even_when_the_model_is_pushed_to(models, runtime_page, key):
    model = models[key]
    push = {"name": "token-bias", "args": {"bias": {str(model["callOpen"][0]): 30}}}
    options = {"temperature": 1.0, "maxTokens": 24, "stopOnEos": False}
    if len(model["callOpen"]) == 1:  # one token opens a call: pushing it opens one unless forbidden
        free = _generate(runtime_page, key, model["prompt"], seed=5, logitsProcessors=[push], **options)
        assert "<tool_call>" in free["text"]
    runs = runtime_page.evaluate(SEVERAL, {"key": key, "prompt": model["prompt"], "seeds": [5, 6, 7], "options": {
        **options, "logitsProcessors": [_spec(model, "none")]}})
    for text in runs:
        assert "<tool_call>" not in text and _calls(text, model["format"]) == []


# Earlier turns answered with bare call objects: SmolLM2 follows suit (left alone it writes prose or code).
UNTAGGED_EXAMPLES = [
    {"role": "user", "content": "Set an alarm for six."},
    {"role": "assistant", "content": '{"name": "set_alarm", "arguments": {"hour": 6, "enabled": true}}'},
    {"role": "user", "content": "Show my open todos."},
    {"role": "assistant", "content": '{"name": "todo_list", "arguments": {"status": "open"}}'},
    {"role": "user", "content": "Set an alarm for seven, every day."}]
UNTAGGED_OPENING = re.compile(r'\s*(```(json)?[ \t]*\n\s*)?\{\s*"name"\s*:\s*"(set_alarm|todo_list)"')
UNTAGGED_OBJECT = re.compile(r'\s*[{\[`]')


def test_auto_makes_a_call_opened_without_tags_at_the_reply_start_valid(models, runtime_page):
    """Hermes JSON replies may be a bare (or fenced) call object, as Qwen2.5-Coder writes them:
    at temperature 1 SmolLM2 opens some, and each one that names an offered tool is a whole,
    valid call for it (the grammar's doing: the processor hands such a reply to the call's own
    grammar), read back as such; "none" lets no object, array or fence open there at all."""
    model = models["smol"]
    chat_format = model["format"]
    messages = [{"role": "system", "content": "You are a helpful assistant."}, *UNTAGGED_EXAMPLES]
    prompt = chat_format.render(messages, BOUNDED_TOOLS, thinking=False)
    seeds = list(range(8))
    options = {"temperature": 1.0, "maxTokens": 80}
    runs = runtime_page.evaluate(SEVERAL, {"key": "smol", "prompt": prompt, "seeds": seeds, "options": {
        **options, "logitsProcessors": [_spec(model, "auto")]}})
    opened = [text for text in runs if UNTAGGED_OPENING.match(text)]
    assert len(opened) >= 2, runs
    for text in opened:
        [call] = _calls(text, chat_format)
        assert call.error is None and call.opening in ("bare_json", "fenced_json", "double_braced_json"), text
        assert check_arguments(call.arguments, SCHEMAS[call.name]) == [], text
    # Under "none" the reply may not start with an object, an array or a fence, whatever it would name:
    # no call, offered or invented, and the replies are words. Its start decides that: 16 tokens.
    forbidden = runtime_page.evaluate(SEVERAL, {"key": "smol", "prompt": prompt, "seeds": seeds, "options": {
        **options, "maxTokens": 16, "logitsProcessors": [_spec(model, "none")]}})
    assert all(_calls(text, chat_format) == [] and not UNTAGGED_OBJECT.match(text) for text in forbidden), forbidden


def test_auto_leaves_an_untagged_object_with_a_name_no_tool_has_free(models, runtime_page):
    """Pushed hard towards `{"name": "get_weather"` (no such tool), the reply stays the model's
    own text under "auto", as the parser reads it (prose, JSON data): the grammar takes over only
    once an offered name is written. Taking over at the name's first quote instead was measured
    (bench/RESULTS.md, issue 26): it turned BFCL irrelevance answers, where Qwen2.5-Coder invents
    a tool because none fits, into wrong calls of offered tools."""
    model = models["smol"]
    invented = runtime_page.evaluate("async (text) => window.clients.smol.tokenize(text)",
                                     '{"name": "get_weather", "arguments": {}}')
    push = {"name": "token-bias", "args": {"bias": {str(token): 25 for token in invented}}}
    options = {"maxTokens": 60}
    free = _generate(runtime_page, "smol", model["prompt"], logitsProcessors=[push], **options)
    assert free["text"].lstrip().startswith('{"name": "get_weather'), free["text"]
    constrained = _generate(runtime_page, "smol", model["prompt"],
                            logitsProcessors=[push, _spec(model, "auto")], **options)
    assert constrained["tokens"] == free["tokens"]
    assert _calls(constrained["text"], model["format"]) == []
    assert constrained["stats"]["grammarUntaggedCalls"] == 0


def _padding_ids(folder):
    """Logit positions past the tokenizer's tokens (Qwen3.5 pads its vocabulary to 248,320)."""
    data = json.loads((folder / "tokenizer.json").read_text())
    known = set(data["model"]["vocab"].values()) | {token["id"] for token in data["added_tokens"]}
    return [token_id for token_id in range(json.loads((folder / "manifest.json").read_text())["vocab_size"])
            if token_id not in known]


@pytest.mark.parametrize("key", ["qwen", "smol"])
@pytest.mark.parametrize("temperature", [0, 1.0])
def test_auto_leaves_text_before_a_call_byte_identical(models, runtime_page, key, temperature):
    """The grammar allows every real token outside a call: sampling draws the same text. (It never
    allows a padding position, which is no token; the free run leaves those out too.)"""
    model = models[key]
    no_padding = {"name": "token-bias", "args": {"bias": {str(i): -1e9 for i in _padding_ids(model["folder"])}}}
    options = {"temperature": temperature, "seed": 11, "maxTokens": 24, "stopOnEos": False}
    free = _generate(runtime_page, key, model["prompt"], logitsProcessors=[no_padding], **options)
    constrained = _generate(runtime_page, key, model["prompt"], logitsProcessors=[_spec(model, "auto")], **options)
    cut = free["text"].find("<tool_call>")
    if cut < 0:
        assert constrained["tokens"] == free["tokens"]
        assert constrained["text"] == free["text"]
    else:
        assert constrained["text"][:cut] == free["text"][:cut]
    assert constrained["stats"]["grammarMasks"] + constrained["stats"]["grammarMasksSkipped"] > 0  # greedy skips masks


@pytest.mark.parametrize("key", ["qwen", "smol"])
def test_guessed_tokens_give_the_same_constrained_call(models, runtime_page, key):
    """Greedy decoding with guesses (draft-feeder.js) keeps exactly the tokens of one call per token:
    a guess the grammar refuses is never kept. The prompt repeats an earlier call, so guesses happen."""
    model = models[key]
    earlier = ('<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n<parameter=enabled>\n'
               'true\n</parameter>\n</function>\n</tool_call>' if key == "qwen" else
               '<tool_call>\n{"name": "set_alarm", "arguments": {"hour": 7, "enabled": true}}\n</tool_call>')
    prompt = model["prompt"] + earlier + "\n"
    options = {"maxTokens": 40, "logitsProcessors": [_spec(model, "auto")], "reusePrefix": False}
    plain = _generate(runtime_page, key, prompt + "<tool_call>", draftTokens=0, **options)
    drafted = _generate(runtime_page, key, prompt + "<tool_call>", **options)
    assert drafted["tokens"] == plain["tokens"]
    assert drafted["stats"]["draftedTokens"] > 0


def test_cancel_inside_a_call_ends_cleanly_and_the_next_turn_works(models, runtime_page):
    model = models["qwen"]
    spec = _spec(model, "required")
    cancelled = _generate(runtime_page, "qwen", model["prompt"], cancel_after=len("<tool_call>\n<function="),
                          temperature=1.0, seed=3, maxTokens=200, logitsProcessors=[spec])
    assert cancelled["stats"] is None  # left early: the generation was cancelled
    after = _generate(runtime_page, "qwen", model["prompt"], temperature=1.0, seed=3, maxTokens=200,
                      stopStrings=[CALL_CLOSE], logitsProcessors=[spec])
    assert after["stats"]["stopReason"] == "stop_string"
    assert _calls(after["text"], model["format"])[0].error is None


def test_prefix_reuse_after_a_constrained_turn_gives_a_fresh_runs_tokens(models, runtime_page):
    model = models["qwen"]
    spec = _spec(model, "required")
    first = _generate(runtime_page, "qwen", model["prompt"], temperature=1.0, seed=4, maxTokens=30, logitsProcessors=[spec])
    follow_up = (model["prompt"] + first["text"] + "<|im_end|>\n<|im_start|>user\n<tool_response>\nok\n"
                 "</tool_response><|im_end|>\n<|im_start|>assistant\n")
    options = {"temperature": 1.0, "seed": 9, "maxTokens": 20, "logitsProcessors": [_spec(model, "auto")]}
    reused = _generate(runtime_page, "qwen", follow_up, **options)
    fresh = _generate(runtime_page, "qwen", follow_up, reusePrefix=False, **options)
    assert reused["stats"]["reusedTokens"] >= first["stats"]["promptTokens"]
    assert reused["tokens"] == fresh["tokens"]


def test_prefill_compiles_the_grammar_before_the_first_token(models, runtime_page):
    from botpsy_agent.browser_session import builtin_tools

    model = models["qwen"]
    tools = [tool.spec() for tool in builtin_tools()]  # a tool set no other test compiled
    spec = logits_processor_spec(tools, model["toolCallFormat"], "auto")
    prompt, _ = _prompt(model["folder"], tools)
    runtime_page.evaluate("""async ({prompt, spec}) => window.clients.qwen.prefill(prompt, {logitsProcessors: [spec]})""",
                          {"prompt": prompt, "spec": spec})
    result = _generate(runtime_page, "qwen", prompt, maxTokens=4, logitsProcessors=[spec])
    assert result["stats"]["grammarCompileMs"] == 0  # compiled (and cached) by the prefill


def test_a_bad_grammar_spec_is_a_clear_error(models, runtime_page):
    message = runtime_page.evaluate("""async () => {
      try {
        for await (const _ of window.clients.qwen.generate("hi", {logitsProcessors: [{name: "tool-call-grammar", args: {}}]}));
        return "no error";
      } catch (error) { return error.message; }
    }""")
    assert "structuralTag" in message


def test_a_model_loaded_again_after_unload_constrains_again(models, runtime_page, server):
    """Unloading frees the grammar engine's WebAssembly memory (vocabulary table, compiled grammars);
    the next load builds a new one."""
    model = models["qwen"]
    folder_url = f"{server}/models/{model['folder'].name}/"
    spec = _spec(model, "required")
    texts = runtime_page.evaluate("""async ({folderUrl, prompt, spec}) => {
      const client = new window.botpsyRuntime.ModelClient();
      const texts = [];
      for (let round = 0; round < 2; round++) {
        await client.load(folderUrl, {backend: "wasm", dtype: "q8"});
        const pieces = [];
        for await (const chunk of client.generate(prompt, {maxTokens: 12, temperature: 1, seed: 2,
                                                           logitsProcessors: [spec]})) pieces.push(chunk.text);
        texts.push(pieces.join(""));
        await client.unload();
      }
      client.terminate();
      return texts;
    }""", {"folderUrl": folder_url, "prompt": model["prompt"], "spec": spec})
    assert texts[0] == texts[1] and texts[0].startswith("<tool_call>")


def test_prepare_compiles_a_grammar_ahead_and_runs_nothing(models, runtime_page):
    """prepareLogitsProcessors (the agent's warm-up of routed grammars): the grammar is compiled and
    cached, the model's state is left as it was; a grammar nobody prepared compiles at the first token."""
    model = models["qwen"]
    prepared, unprepared = (_spec(model, "auto", tools=[tool]) for tool in BOUNDED_TOOLS)
    answer = runtime_page.evaluate("(p) => window.clients.qwen.prepareLogitsProcessors(p)", [prepared])
    assert answer["prepareMs"] > 0
    first = _generate(runtime_page, "qwen", model["prompt"], maxTokens=2, logitsProcessors=[prepared])
    assert first["stats"]["grammarCompileMs"] == 0, first["stats"]
    other = _generate(runtime_page, "qwen", model["prompt"], maxTokens=2, logitsProcessors=[unprepared])
    assert other["stats"]["grammarCompileMs"] > 0, other["stats"]
    # nothing ran: the next generate of the same prompt reuses as much as the one before it did
    runtime_page.evaluate("(p) => window.clients.qwen.prepareLogitsProcessors(p)", [_spec(model, "none")])
    again = _generate(runtime_page, "qwen", model["prompt"], maxTokens=2, logitsProcessors=[unprepared])
    assert again["stats"]["reusedTokens"] == other["stats"]["reusedTokens"] > 0
    assert again["tokens"] == other["tokens"]
