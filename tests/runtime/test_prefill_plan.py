"""How a prompt is cut into prefill calls (web/runtime/decode/prefill-plan.js), run in the browser:
chunks shrink as the context grows so one call's attention scores stay within the budget (a
fixed 1,024-token chunk against a 20,000-token context needed over 1 GiB per score tensor and
ran the 4 GiB WASM heap out of memory), ordinary prompts keep 1,024-token chunks, and every
snapshot point the prefix cache asks for is still a chunk's end."""

import pytest

PLAN = """
async ({length, from, snapshots, heads}) => {
  const plan = await import("/web/runtime/decode/prefill-plan.js");
  const chunks = plan.prefillChunks(length, from, snapshots, heads);
  return {chunks, bytes: chunks.map(([s, e]) => plan.scoreBytes(heads, s, e - s)),
          budget: plan.SCORE_BUDGET_BYTES, max: plan.MAX_PREFILL_CHUNK, min: plan.MIN_PREFILL_CHUNK};
}
"""

HEADS = """
async (manifest) => {
  const plan = await import("/web/runtime/decode/prefill-plan.js");
  try { return plan.attentionHeads(manifest); } catch (error) { return `${error.name}: ${error.message}`; }
}
"""


def plan(page, length, start=0, snapshots=(), heads=14):
    return page.evaluate(PLAN, {"length": length, "from": start, "snapshots": list(snapshots), "heads": heads})


def assert_covers(result, start, length):
    chunks = result["chunks"]
    assert chunks[0][0] == start and chunks[-1][1] == length
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))
    assert all(result["min"] <= end - begin <= result["max"] or end == length for begin, end, _ in chunks)


@pytest.mark.parametrize("heads", [9, 14, 32])
def test_a_long_prompt_keeps_every_calls_scores_within_the_budget(runtime_page, heads):
    result = plan(runtime_page, 20_000, heads=heads)
    assert_covers(result, 0, 20_000)
    assert max(result["bytes"]) <= result["budget"]
    # the chunks shrink with the context: the last ones are a fraction of the first
    sizes = [end - begin for begin, end, _ in result["chunks"]]
    assert sizes[0] == result["max"] and sizes[-2] < result["max"] / 4


def test_a_new_message_after_a_long_conversation_is_cut_small(runtime_page):
    # what ran out of memory: ~1,500 new tokens after ~18,500 reused (Qwen2.5-Coder: 14 heads)
    result = plan(runtime_page, 20_000, start=18_500, heads=14)
    assert_covers(result, 18_500, 20_000)
    assert max(result["bytes"]) <= result["budget"]
    assert len(result["chunks"]) > 1


def test_an_ordinary_prompt_keeps_the_long_chunks(runtime_page):
    result = plan(runtime_page, 2_500, heads=14)
    assert [end - begin for begin, end, _ in result["chunks"]] == [1024, 1024, 452]


def test_every_snapshot_point_ends_a_chunk_that_takes_a_snapshot(runtime_page):
    snapshots = [300, 2_100, 9_000]
    result = plan(runtime_page, 12_000, start=100, snapshots=snapshots)
    assert_covers(result, 100, 12_000)
    assert sorted(end for _, end, snap in result["chunks"] if snap) == snapshots
    assert result["chunks"][-1][2] is False  # the prompt's end is not a snapshot point here


def test_the_context_can_outgrow_the_budget_and_still_progress(runtime_page):
    result = plan(runtime_page, 2_000_000, start=1_999_000, heads=64)
    assert_covers(result, 1_999_000, 2_000_000)
    assert {end - begin for begin, end, _ in result["chunks"][:-1]} == {result["min"]}


def test_the_heads_come_from_the_manifest(runtime_page):
    assert runtime_page.evaluate(HEADS, {"attention_heads": 14}) == 14
    assert runtime_page.evaluate(HEADS, {}) == 32  # a folder exported before the field: sized for 32 heads
    for bad in (0, 2.5, "14"):
        message = runtime_page.evaluate(HEADS, {"attention_heads": bad})
        assert message.startswith("RangeError: manifest.attention_heads must be an integer >= 1"), message
