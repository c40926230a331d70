"""Greedy decoding with guessed tokens (web/runtime/decode/prompt-lookup.js, draft-feeder.js): the
tokens after the last few are guessed from where those occurred earlier in the context, and
one model call checks them all. The decoder keeps exactly the tokens and logits it would get
one call at a time; the state ends holding exactly the tokens fed and confirmed, so a next prompt reuses
it as before. KV-only models cut unused guesses off; the hybrid model goes back to the state
before the call and runs the confirmed tokens again."""

import pytest

# --- guessing from the context, on its own ------------------------------------------

PROPOSE = """
async (cases) => {
  const {proposeDraft} = await import("/web/runtime/decode/prompt-lookup.js");
  return cases.map(([history, maxTokens, options]) => proposeDraft(history, maxTokens, options));
}
"""


def test_guesses_continue_the_latest_earlier_occurrence_of_the_longest_matching_tail(runtime_page):
    results = runtime_page.evaluate(PROPOSE, [
        [[1, 2, 3, 9, 9, 1, 2, 3, 7, 8, 5, 2, 3], 2],   # tail 2 3: latest earlier occurrence is followed by 7 8
        [[5, 6, 7, 1, 6, 7, 2, 4, 5, 6, 7], 4],          # tail 5 6 7 beats the later 6 7
        [[1, 2, 3, 4], 3],                                # nothing occurred before
        [[4, 4, 4, 4], 5],                                # a repeat predicts more of itself
        [[1, 2, 1, 2, 3], 0],                             # nothing asked
        [[7, 2, 3, 5, 9, 2, 3], 2],                       # a 2-token match is enough by default...
        [[7, 2, 3, 5, 9, 2, 3], 2, {"minNgram": 3}],      # ...not when 3 are asked for
    ])
    assert results == [[7, 8], [1, 6, 7, 2], [], [4], [], [5, 9], []]


# --- the feeder against a scripted model ----------------------------------------------
# The "model" gives one-hot logits for RULE(previous token); the decoder is argmax. The
# same greedy loop runs with guesses and without; the calls the runner saw are returned.
SCRIPTED = """
async ({truncatable, maxDraft, prompt, count}) => {
  const {DraftFeeder} = await import("/web/runtime/decode/draft-feeder.js");
  const {argmax} = await import("/web/runtime/decode/sampling.js");
  const vocab = 16;
  const rule = (token) => [3, 4, 5, 6, 3, 4, 5, 7, 1, 2, 3, 4, 5, 6, 3, 9][token];
  const oneHot = (token) => { const row = new Float32Array(vocab); row[rule(token)] = 1; return row; };
  class ScriptedRunner {
    constructor() { this.processedIds = []; this.cache = {truncatable}; this.calls = []; }
    get scoresSeveralPositions() { return true; }
    async step(ids) { this.calls.push(["step", ids.length]); this.processedIds.push(...ids); return oneHot(ids.at(-1)); }
    async score(ids) { this.calls.push(["score", ids.length]); this.processedIds.push(...ids); return ids.map(oneHot); }
    async truncate(length) { this.calls.push(["truncate", length]); this.processedIds.length = length; }
    checkpoint() { return this.processedIds.length; }
    rewind(length) { this.calls.push(["rewind", length]); this.processedIds.length = length; }
    releaseCheckpoint() {}
  }
  const runner = new ScriptedRunner();
  runner.processedIds = prompt.slice();
  const feeder = new DraftFeeder(runner, maxDraft);
  const history = prompt.slice();
  let logits = oneHot(prompt.at(-1));
  for (let i = 0; i < count; i++) {
    const token = argmax(logits);
    history.push(token);
    if (i === count - 1) break;  // the last token is not fed, as in generation.js
    logits = await feeder.next(token, history);
  }
  await feeder.settle();
  return {generated: history.slice(prompt.length), processed: runner.processedIds, calls: runner.calls, stats: feeder.stats};
}
"""


# The model answers 8 -> 1 -> 4 -> 3 -> 6 -> 5 -> 4 -> 3 -> 6 -> 5 ...; the prompt's "4 3 6 9 9"
# makes the first guesses after 4 3 6 wrong (recurrent state guesses only from 3-token matches).
PROMPT = [0, 1, 2, 4, 3, 6, 9, 9, 8]


@pytest.mark.parametrize("truncatable", [True, False], ids=["kv-only", "recurrent"])
def test_the_feeder_keeps_the_tokens_and_state_of_one_call_per_token(runtime_page, truncatable):
    def run(max_draft):
        return runtime_page.evaluate(SCRIPTED, {"truncatable": truncatable, "maxDraft": max_draft,
                                                "prompt": PROMPT, "count": 24})

    plain, drafted = run(0), run(8)
    assert drafted["generated"] == plain["generated"]
    # exactly prompt + generated minus the last token, as without guesses
    assert drafted["processed"] == plain["processed"] == PROMPT + plain["generated"][:-1]
    assert plain["calls"] == [["step", 1]] * 23
    stats = drafted["stats"]
    assert stats["acceptedDraftTokens"] > 0 and stats["draftedTokens"] > stats["acceptedDraftTokens"]
    assert stats["modelCalls"] < 23 and len(drafted["calls"]) > 0
    kinds = {kind for kind, _ in drafted["calls"]}
    # unused guesses: cut off (KV only) or rewound and the confirmed tokens run again (recurrent state)
    assert ("truncate" in kinds, "rewind" in kinds) == ((True, False) if truncatable else (False, True))


# --- real models in the browser ---------------------------------------------------------

# Long enough (~400 tokens) that attention sums over hundreds of keys: where onnxruntime's
# 1-row MatMul path would round differently from a call of several tokens.
NOTES = ("The harbour office keeps a log of every boat that comes in: its name, its cargo, the hour "
         "it tied up and the berth it was given, so that the night watch knows who is where. ") * 8
COPYING = ("<|im_start|>system\n" + NOTES + "<|im_end|>\n<|im_start|>user\nRepeat this list exactly, twice: "
           "apples, pears, plums, cherries, lemons, limes, figs, dates.<|im_end|>\n<|im_start|>assistant\n"
           "apples, pears, plums, cherries,")
CASES = [("smollm2-135m", "fp32"), ("smollm2-135m", "q8"), ("tiny-qwen3.5", "fp32"), ("tiny-qwen3.5", "q8")]


@pytest.fixture(scope="module", params=CASES, ids=["-".join(case) for case in CASES])
def loaded(request, runtime_page, server, exported_model, runtime_driver):
    name, dtype = request.param
    info = runtime_driver.load(runtime_page, server, exported_model(name), dtype=dtype)
    assert info["cacheMode"] == "appending"
    return request.param


def test_guessed_tokens_give_the_tokens_of_one_call_per_token(loaded, runtime_page, runtime_driver):
    options = {"maxTokens": 40, "stopOnEos": False}
    plain = runtime_driver.generate_keeping_logits(runtime_page, COPYING, "plain", draftTokens=0, reusePrefix=False,
                                                   **options)
    drafted = runtime_driver.generate_keeping_logits(runtime_page, COPYING, "drafted", reusePrefix=False, **options)
    assert drafted["tokens"] == plain["tokens"]
    stats = drafted["stats"]
    assert plain["stats"]["draftedTokens"] == 0 and plain["stats"]["modelCalls"] == 39
    assert stats["acceptedDraftTokens"] > 0
    assert stats["modelCalls"] < 39
    # the same bits whichever call computed a position (the exported softmax sums in key order)
    assert runtime_driver.max_logit_diff(runtime_page, "plain", "drafted") == 0


def test_after_guessing_the_next_prompt_reuses_the_state_like_a_fresh_run(loaded, runtime_page, runtime_driver):
    options = {"maxTokens": 13, "stopOnEos": False}
    first = runtime_driver.generate(runtime_page, COPYING, **options)
    assert first["stats"]["acceptedDraftTokens"] > 0
    follow_up = COPYING + first["text"] + "<|im_end|>\n<|im_start|>user\nAgain.<|im_end|>\n<|im_start|>assistant\n"
    reused = runtime_driver.generate(runtime_page, follow_up, **options)
    fresh = runtime_driver.generate(runtime_page, follow_up, reusePrefix=False, **options)
    assert reused["stats"]["reusedTokens"] > first["stats"]["promptTokens"]
    assert reused["tokens"] == fresh["tokens"]


def test_sampling_never_guesses(loaded, runtime_page, runtime_driver):
    sampled = runtime_driver.generate(runtime_page, COPYING, maxTokens=8, stopOnEos=False, temperature=0.8, seed=3)
    assert sampled["stats"]["draftedTokens"] == 0 and sampled["stats"]["modelCalls"] == 7


def test_a_bad_draft_tokens_option_is_named(loaded, runtime_page):
    error = runtime_page.evaluate("""async () => {
      try { for await (const _ of window.clients.model.generate("hi", {draftTokens: -1})) {} return null; }
      catch (error) { return error.message; }
    }""")
    assert "draftTokens must be an integer >= 0" in error
