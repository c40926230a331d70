"""Greedy constrained decoding skips the grammar's mask where it cannot change the pick
(web/runtime/grammar/tool-call-grammar.js): the best token is checked on its own, and the
whole-vocabulary mask is computed only when that token is refused. A person gets exactly the
tokens every mask would give, in fewer masks. `everyMask: true` in the processor's args masks
every step: the reference here."""

import json

import pytest

from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.grammar import logits_processor_spec

BOUNDED_TOOLS = [{"type": "function", "function": {"name": "set_alarm", "description": "Set an alarm.", "parameters": {
    "type": "object", "properties": {
        "hour": {"type": "integer", "minimum": 0, "description": "hour"},
        "repeat": {"type": "string", "enum": ["never", "daily"], "description": "repeat"}},
    "required": ["hour"]}}}]
# A free string value: inside it nearly the whole vocabulary is allowed, the mask's costliest case.
NOTE_TOOL = {"type": "function", "function": {"name": "notes_create", "description": "Write a note.", "parameters": {
    "type": "object", "properties": {"text": {"type": "string", "description": "the note"}}, "required": ["text"]}}}

LOAD = """
async ({key, folderUrl}) => {
  window.clients ??= {};
  const client = new window.botpsyRuntime.ModelClient();
  window.clients[key] = client;
  const info = await client.load(folderUrl, {backend: "wasm", dtype: "q8"});
  return {toolCallFormat: info.toolCallFormat, callOpen: await client.tokenize("<tool_call>")};
}
"""
GENERATE = """
async ({key, prompt, options}) => {
  let stats = null;
  const tokens = [], pieces = [];
  for await (const chunk of window.clients[key].generate(prompt, {...options, onStats: (s) => { stats = s; }})) {
    if (chunk.tokenId !== null) tokens.push(chunk.tokenId);
    pieces.push(chunk.text);
  }
  return {tokens, text: pieces.join(""), stats};
}
"""


def _prompt(folder, tools, user):
    config = json.loads((folder / "tokenizer_config.json").read_text())
    chat_format = ChatFormat.from_model_files(config, json.loads((folder / "manifest.json").read_text()))
    messages = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": user}]
    return chat_format.render(messages, tools, thinking=False), chat_format


@pytest.fixture(scope="module")
def models(runtime_page, server, exported_model):
    loaded = {}
    for key, name in (("qwen", "tiny-qwen3.5"), ("smol", "smollm2-135m")):
        folder = exported_model(name)
        info = runtime_page.evaluate(LOAD, {"key": key, "folderUrl": f"{server}/models/{folder.name}/"})
        prompt, _ = _prompt(folder, [*BOUNDED_TOOLS, NOTE_TOOL], user="Note that the dentist moved to Friday.")
        loaded[key] = {**info, "prompt": prompt}
    return loaded


def _run(page, key, prompt, processors, **options):
    return page.evaluate(GENERATE, {"key": key, "prompt": prompt, "options": {
        "temperature": 0, "maxTokens": 48, "stopOnEos": False, "draftTokens": 0, **options,
        "logitsProcessors": processors}})


def _every_mask(spec):
    return {**spec, "args": {**spec["args"], "everyMask": True}}


@pytest.mark.parametrize("key", ["qwen", "smol"])
@pytest.mark.parametrize("mode", ["required", "auto"])
def test_greedy_gives_the_tokens_of_every_mask_with_fewer_masks(models, runtime_page, key, mode):
    model = models[key]
    spec = logits_processor_spec([*BOUNDED_TOOLS, NOTE_TOOL], model["toolCallFormat"], mode)
    reference = _run(runtime_page, key, model["prompt"], [_every_mask(spec)])
    quick = _run(runtime_page, key, model["prompt"], [spec])
    assert quick["tokens"] == reference["tokens"]
    assert reference["stats"]["grammarMasksSkipped"] == 0
    assert quick["stats"]["grammarMasks"] <= reference["stats"]["grammarMasks"]
    if key == "smol":  # real weights: their best tokens fit the grammar (tiny-qwen3.5's random ones rarely do)
        assert quick["stats"]["grammarMasksSkipped"] > 0
        assert quick["stats"]["grammarMasks"] < reference["stats"]["grammarMasks"]


@pytest.mark.parametrize("key", ["qwen", "smol"])
def test_pushed_toward_a_forbidden_call_greedy_picks_what_every_mask_picks(models, runtime_page, key):
    """Pushed hard toward opening a call that "none" forbids, greedy keeps refusing the best
    token; every pick after a refusal is one the grammar allows, as with every mask."""
    model = models[key]
    push = {"name": "token-bias", "args": {"bias": {str(model["callOpen"][0]): 60}}}
    spec = logits_processor_spec(BOUNDED_TOOLS, model["toolCallFormat"], "none")
    reference = _run(runtime_page, key, model["prompt"], [push, _every_mask(spec)], maxTokens=24)
    quick = _run(runtime_page, key, model["prompt"], [push, spec], maxTokens=24)
    assert quick["tokens"] == reference["tokens"]
    assert "<tool_call>" not in quick["text"]


def test_sampling_masks_every_step(models, runtime_page):
    model = models["qwen"]
    spec = logits_processor_spec(BOUNDED_TOOLS, model["toolCallFormat"], "required")
    sampled = _run(runtime_page, "qwen", model["prompt"], [spec], temperature=1.0, seed=3, maxTokens=16)
    assert sampled["stats"]["grammarMasksSkipped"] == 0 and sampled["stats"]["grammarMasks"] > 0


@pytest.mark.parametrize("key", ["qwen", "smol"])
def test_a_call_picked_greedily_while_sampling_skips_masks_as_greedy_does(models, runtime_page, key):
    """greedyCalls (the agent's default) at temperature > 0: the call's tokens are picked greedily,
    so its steps skip the mask where the best token fits, as greedy decoding does; the tokens are
    those of every mask."""
    model = models[key]
    spec = logits_processor_spec(BOUNDED_TOOLS, model["toolCallFormat"], "required", greedy_calls=True)
    reference = _run(runtime_page, key, model["prompt"], [_every_mask(spec)], temperature=1.0, seed=3)
    quick = _run(runtime_page, key, model["prompt"], [spec], temperature=1.0, seed=3)
    assert quick["tokens"] == reference["tokens"]
    assert reference["stats"]["grammarMasksSkipped"] == 0
    assert quick["stats"]["grammarGreedyPicks"] > 0
    if key == "smol":  # real weights: their best tokens fit the grammar (tiny-qwen3.5's random ones rarely do)
        assert quick["stats"]["grammarMasksSkipped"] > 0
        assert quick["stats"]["grammarMasks"] < reference["stats"]["grammarMasks"]
