"""Generation control on a real model: cancel stops within a token, EOS and stop strings end
a generation, maxTokens is respected, logits processors steer sampling, bad input is named."""

import pytest

PROMPT = "<|im_start|>user\nTell me a long story about a lighthouse keeper.<|im_end|>\n<|im_start|>assistant\n"

# Cancels after `after` tokens have arrived and counts what arrives after the cancel.
CANCEL_AFTER = """
async ({prompt, after}) => {
  const client = window.clients.model;
  let stats = null, seen = 0, afterCancel = 0, cancelled = false;
  for await (const chunk of client.generate(prompt, {maxTokens: 200, stopOnEos: false, onStats: (s) => { stats = s; }})) {
    if (chunk.tokenId === null) continue;
    if (cancelled) afterCancel++;
    if (++seen === after) { client.cancel(); cancelled = true; }
  }
  return {seen, afterCancel, stats};
}
"""


@pytest.fixture(scope="module")
def smollm2(runtime_page, server, exported_model, runtime_driver):
    runtime_driver.load(runtime_page, server, exported_model("smollm2-135m"))

    def generate(prompt, **options):
        return runtime_driver.generate(runtime_page, prompt, **options)

    return generate


def test_cancel_stops_within_a_token(runtime_page, smollm2):
    result = runtime_page.evaluate(CANCEL_AFTER, {"prompt": PROMPT, "after": 3})
    assert result["stats"]["stopReason"] == "cancelled"
    assert result["afterCancel"] <= 1
    assert result["stats"]["generatedTokens"] <= 4
    # the model is usable right after a cancel
    assert smollm2(PROMPT, maxTokens=2, stopOnEos=False)["stats"]["generatedTokens"] == 2


def test_leaving_the_loop_early_cancels_the_generation(runtime_page, smollm2):
    next_tokens = runtime_page.evaluate("""async (prompt) => {
      const client = window.clients.model;
      let n = 0;
      for await (const chunk of client.generate(prompt, {maxTokens: 200, stopOnEos: false})) {
        if (++n === 2) break;  // the client cancels the rest
      }
      const next = [];
      for await (const chunk of client.generate(prompt, {maxTokens: 2, stopOnEos: false})) next.push(chunk.tokenId);
      return next.length;
    }""", PROMPT)
    assert next_tokens == 2


def test_max_tokens_and_the_streamed_text_add_up(runtime_page, smollm2):
    result = smollm2(PROMPT, maxTokens=12, stopOnEos=False)
    assert result["stats"]["generatedTokens"] == 12
    assert result["stats"]["stopReason"] == "max_tokens"
    decoded = runtime_page.evaluate("(ids) => window.clients.model.detokenize(ids)", result["tokens"])
    assert result["text"] == decoded
    assert "\ufffd" not in "".join(result["pieces"])


def test_a_logits_processor_steers_every_token(runtime_page, smollm2):
    forced = runtime_page.evaluate("() => window.clients.model.tokenize(' lighthouse')")[0]
    result = smollm2(PROMPT, maxTokens=4, stopOnEos=False,
                     logitsProcessors=[{"name": "token-bias", "args": {"bias": {str(forced): 1000}}}])
    assert result["tokens"] == [forced] * 4


def test_eos_ends_generation_and_is_not_in_the_text(runtime_page, smollm2):
    eos = runtime_page.evaluate("() => window.clients.model.info.eosTokenIds")
    result = smollm2(PROMPT, maxTokens=20, logitsProcessors=[{"name": "token-bias", "args": {"bias": {str(eos[0]): 1000}}}])
    assert result["stats"]["stopReason"] == "eos"
    assert result["tokens"] == [eos[0]]
    assert result["text"] == ""


def test_a_stop_string_ends_generation_and_is_cut_from_the_text(runtime_page, smollm2):
    free = smollm2(PROMPT, maxTokens=10, stopOnEos=False)
    stop = free["text"][3:7]
    assert stop.strip(), free["text"]
    stopped = smollm2(PROMPT, maxTokens=10, stopOnEos=False, stopStrings=[stop])
    assert stopped["stats"]["stopReason"] == "stop_string"
    assert stopped["text"] == free["text"][:free["text"].index(stop)]


def test_bad_requests_get_errors_that_name_the_problem(runtime_page, smollm2):
    message = runtime_page.evaluate("""async () => {
      const errors = [];
      for (const [prompt, options] of [["hi", {temperature: -1}], [[999999999], {}], ["", {}], ["hi", {maxTokens: 0}]]) {
        try { for await (const _ of window.clients.model.generate(prompt, options)) {} errors.push("no error"); }
        catch (e) { errors.push(e.message); }
      }
      return errors;
    }""")
    assert "temperature" in message[0]
    assert "999999999" in message[1]
    assert "empty" in message[2]
    assert "maxTokens" in message[3]


def test_sampling_with_a_seed_is_repeatable(smollm2):
    options = {"maxTokens": 8, "stopOnEos": False, "temperature": 0.9, "topK": 40, "topP": 0.95, "repetitionPenalty": 1.1}
    first = smollm2(PROMPT, seed=11, **options)
    assert smollm2(PROMPT, seed=11, **options)["tokens"] == first["tokens"]
    assert smollm2(PROMPT, seed=12, **options)["tokens"] != first["tokens"]


def test_cancel_also_stops_a_generate_queued_behind_the_running_one(runtime_page, smollm2):
    reasons = runtime_page.evaluate("""async (prompt) => {
      const client = window.clients.model;
      const run = async () => {
        let stats = null;
        for await (const _ of client.generate(prompt, {maxTokens: 200, stopOnEos: false, onStats: (s) => { stats = s; }})) {}
        return stats;
      };
      const first = run(), second = run();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await client.cancel();
      return (await Promise.all([first, second])).map((s) => [s.stopReason, s.generatedTokens]);
    }""", PROMPT)
    assert [reason for reason, _ in reasons] == ["cancelled", "cancelled"]
    assert all(count < 200 for _, count in reasons)
