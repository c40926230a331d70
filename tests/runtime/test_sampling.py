"""Choosing tokens from logits (web/runtime/decode/sampling.js, logits-processors.js, stop-strings.js),
run in the browser on hand-made logits."""

import pytest

SAMPLE_MANY = """
async ({logits, options, seed, draws}) => {
  const s = await import("/web/runtime/decode/sampling.js");
  const rng = s.createRng(seed);
  const picks = [];
  for (let i = 0; i < draws; i++) picks.push(s.sampleToken(Float32Array.from(logits), options, rng));
  return picks;
}
"""


def sample(page, logits, options, seed=7, draws=200):
    return page.evaluate(SAMPLE_MANY, {"logits": logits, "options": options, "seed": seed, "draws": draws})


def test_greedy_picks_the_highest_logit(runtime_page):
    assert set(sample(runtime_page, [0.1, 2.5, -1.0, 2.4], {"temperature": 0})) == {1}


def test_same_seed_same_samples_other_seed_other_samples(runtime_page):
    logits = [1.0, 1.1, 0.9, 1.05, 0.95]
    first = sample(runtime_page, logits, {"temperature": 1.0}, seed=42)
    assert first == sample(runtime_page, logits, {"temperature": 1.0}, seed=42)
    assert first != sample(runtime_page, logits, {"temperature": 1.0}, seed=43)
    assert len(set(first)) == 5


def test_top_k_and_top_p_restrict_the_candidates(runtime_page):
    logits = [3.0, 2.9, 2.8, 0.0, -1.0]
    assert set(sample(runtime_page, logits, {"temperature": 1.0, "topK": 2})) == {0, 1}
    assert set(sample(runtime_page, logits, {"temperature": 5.0, "topK": 1})) == {0}
    # probabilities ~[0.35, 0.32, 0.29, ...]: top-p 0.5 keeps the first two only
    assert set(sample(runtime_page, logits, {"temperature": 1.0, "topP": 0.5})) == {0, 1}


def test_sampling_follows_the_softmax(runtime_page):
    picks = sample(runtime_page, [0.0, 0.0, 2.0], {"temperature": 1.0}, draws=4000)
    share = picks.count(2) / len(picks)
    assert 0.75 < share < 0.83  # e^2 / (e^2 + 2) = 0.787


def test_repetition_penalty_demotes_seen_tokens(runtime_page):
    result = runtime_page.evaluate("""async () => {
      const s = await import("/web/runtime/decode/sampling.js");
      const logits = Float32Array.from([2.0, 1.9, -1.0]);
      s.applyRepetitionPenalty(logits, [0, 2, 0], 1.5);
      return Array.from(logits);
    }""")
    assert result == pytest.approx([2.0 / 1.5, 1.9, -1.5])


def test_bad_sampling_options_are_named(runtime_page):
    message = runtime_page.evaluate("""async () => {
      const s = await import("/web/runtime/decode/sampling.js");
      try { s.validateSamplingOptions({topP: 0}); return "no error"; } catch (e) { return e.message; }
    }""")
    assert "topP" in message


def test_logits_processor_runs_and_unknown_names_are_listed(runtime_page):
    result = runtime_page.evaluate("""async () => {
      const p = await import("/web/runtime/decode/logits-processors.js");
      const [bias] = await p.createLogitsProcessors([{name: "token-bias", args: {bias: {"0": -100}}}], {vocabSize: 3});
      const logits = Float32Array.from([5, 1, 0]);
      bias.process(logits, []);
      let unknown;
      try { await p.createLogitsProcessors([{name: "json-schema"}], {vocabSize: 3}); } catch (e) { unknown = e.message; }
      return {logits: Array.from(logits), unknown};
    }""")
    assert result["logits"] == [-95, 1, 0]
    assert 'unknown logits processor "json-schema"' in result["unknown"]
    assert "token-bias" in result["unknown"]


STOP_FILTER = """
async ({stops, pieces}) => {
  const {StopStringFilter} = await import("/web/runtime/decode/stop-strings.js");
  const filter = new StopStringFilter(stops);
  const out = [];
  for (const piece of pieces) {
    const {text, stopped} = filter.push(piece);
    out.push(text);
    if (stopped) return {out, stopped: true};
  }
  out.push(filter.finish());
  return {out, stopped: false};
}
"""


def test_stop_string_split_across_pieces_is_never_shown(runtime_page):
    result = runtime_page.evaluate(STOP_FILTER, {"stops": ["</answer>"], "pieces": ["42 is", " it</ans", "wer> more"]})
    assert result["stopped"]
    assert "".join(result["out"]) == "42 is it"


def test_text_that_only_looked_like_a_stop_string_is_released(runtime_page):
    result = runtime_page.evaluate(STOP_FILTER, {"stops": ["</answer>"], "pieces": ["a </an", "d b", " c"]})
    assert not result["stopped"]
    assert result["out"][0] == "a "
    assert "".join(result["out"]) == "a </and b c"


def test_generate_options_are_checked(runtime_page):
    message = runtime_page.evaluate("""async () => {
      const g = await import("/web/runtime/decode/generation.js");
      try { g.normalizeGenerateOptions({maxToken: 5}, {}); return "no error"; } catch (e) { return e.message; }
    }""")
    assert "unknown generate option(s): maxToken" in message
