"""The appending-graph state (web/runtime/state/appending-cache.js) on its own, in the browser, with
stand-in graph outputs: new positions are written after the processed ones, the buffers grow
in steps of 64 positions and keep what they held, truncating forgets positions, and a
snapshot keeps seeing its own positions however the live state is cut back and extended
(copy-on-write). Each position's K value encodes the token id that produced it, so reading
the buffer back tells which tokens the state holds."""

import pytest

# Runs `ops` on an AppendingCacheState with one key cache [1, 2 heads, seq, 3] and one
# conv state; "read" records {ids, capacity, conv}: the token ids the live KV buffer holds
# in [0, length) (checked equal across both heads), the capacity, and the conv state (the
# last token id the state saw).
SCENARIO = """
async (ops) => {
  const {AppendingCacheState} = await import("/web/runtime/state/appending-cache.js");
  const {TensorRefs} = await import("/web/runtime/state/cache-state.js");
  class Tensor {
    constructor(type, data, dims) {
      if (data.length !== dims.reduce((a, b) => a * b, 1)) throw new Error(`bad tensor [${dims}]`);
      Object.assign(this, {type, data, dims, location: "cpu"});
    }
  }
  const entries = [
    {input: "past.key", output: "present.key", kind: "key", dtype: "float32", shape: [1, 2, 0, 3], seq_axis: 2},
    {input: "past.conv", output: "present.conv", kind: "conv", dtype: "float32", shape: [1, 1], seq_axis: null},
  ];
  const kvOnly = ops[0]?.[0] === "kv-only";
  const state = new AppendingCacheState({Tensor}, kvOnly ? entries.slice(0, 1) : entries, new TensorRefs());
  const snapshots = {};
  const results = [];
  const value = (id, head, d) => 1000 * id + 10 * head + d;
  for (const [op, arg] of ops) {
    try {
      if (op === "step") {  // what an appending graph returns for new tokens `arg`
        const key = new Float32Array(2 * arg.length * 3);
        for (let h = 0; h < 2; h++) for (let i = 0; i < arg.length; i++) for (let d = 0; d < 3; d++) {
          key[(h * arg.length + i) * 3 + d] = value(arg[i], h, d);
        }
        state.feeds();
        state.adoptOutputs({"present.key": new Tensor("float32", key, [1, 2, arg.length, 3]),
                            "present.conv": new Tensor("float32", new Float32Array([arg.at(-1)]), [1, 1])},
                           state.length + arg.length);
      } else if (op === "steps-returning") {  // a graph that returns `arg` positions for one new token
        state.adoptOutputs({"present.key": new Tensor("float32", new Float32Array(2 * arg * 3), [1, 2, arg, 3]),
                            "present.conv": new Tensor("float32", new Float32Array(1), [1, 1])}, state.length + 1);
      } else if (op === "snapshot") snapshots[arg] = state.snapshot();
      else if (op === "restore") state.restore(snapshots[arg]);
      else if (op === "truncate") await state.truncate(arg);
      else if (op === "reset") state.reset();
      else if (op === "read") {
        const feeds = state.feeds();
        const key = feeds["past.key"];
        const capacity = key.dims[2];
        const ids = [];
        for (let p = 0; p < state.length; p++) {
          const id = (key.data[p * 3] - value(0, 0, 0)) / 1000;
          if (key.data[(capacity + p) * 3 + 2] !== value(id, 1, 2)) throw new Error(`heads disagree at ${p}`);
          ids.push(id);
        }
        results.push({ids, capacity: state.capacity, conv: feeds["past.conv"]?.data[0] ?? null});
      }
    } catch (error) {
      results.push({error: error.message});
    }
  }
  return results;
}
"""


@pytest.fixture
def run(runtime_page):
    return lambda *ops: runtime_page.evaluate(SCENARIO, [list(op) for op in ops])


def ids(start, stop):
    return list(range(start, stop))


def test_new_positions_go_after_the_processed_ones_in_a_buffer_with_room(run):
    [first, second] = run(("step", [1, 2, 3]), ("read",), ("step", [4]), ("read",))
    assert first == {"ids": [1, 2, 3], "capacity": 64, "conv": 3}
    assert second == {"ids": [1, 2, 3, 4], "capacity": 64, "conv": 4}


def test_growing_past_the_capacity_keeps_every_position(run):
    [grown, again] = run(("step", ids(1, 60)), ("step", ids(60, 70)), ("read",), ("step", ids(70, 140)), ("read",))
    assert grown == {"ids": ids(1, 70), "capacity": 128, "conv": 69}
    assert again == {"ids": ids(1, 140), "capacity": 192, "conv": 139}


def test_after_a_reset_or_a_cut_the_buffers_shrink_to_what_the_next_run_needs(run):
    # every step feeds the whole capacity: room left by a long run would slow short ones
    [long, after_reset] = run(("kv-only",), ("step", ids(1, 200)), ("read",), ("reset",), ("step", [7]), ("read",))
    assert (long["capacity"], after_reset) == (256, {"ids": [7], "capacity": 64, "conv": None})
    [after_cut] = run(("kv-only",), ("step", ids(1, 200)), ("truncate", 5), ("step", [7]), ("read",))
    assert after_cut == {"ids": [1, 2, 3, 4, 5, 7], "capacity": 64, "conv": None}


def test_truncating_forgets_the_positions_after_the_cut(run):
    [cut] = run(("kv-only",), ("step", ids(1, 10)), ("truncate", 4), ("step", [50, 51]), ("read",))
    assert cut == {"ids": [1, 2, 3, 4, 50, 51], "capacity": 64, "conv": None}


def test_state_with_conv_or_recurrent_parts_cannot_be_truncated(run):
    [refused] = run(("step", ids(1, 10)), ("truncate", 4))
    assert "cannot be truncated" in refused["error"]


def test_a_snapshot_keeps_its_positions_when_the_live_state_is_cut_below_it_and_extended(run):
    # The hybrid model's prefix reuse: resume from a short snapshot, write over the
    # positions a longer snapshot covers, then resume from the longer one.
    [edited, resumed, extended] = run(
        ("step", ids(1, 6)), ("snapshot", "short"),
        ("step", ids(6, 20)), ("snapshot", "long"),
        ("restore", "short"), ("step", [90, 91, 92]), ("read",),
        ("restore", "long"), ("read",),
        ("step", [93]), ("read",))
    assert edited == {"ids": ids(1, 6) + [90, 91, 92], "capacity": 64, "conv": 92}
    assert resumed == {"ids": ids(1, 20), "capacity": 64, "conv": 19}
    assert extended == {"ids": ids(1, 20) + [93], "capacity": 64, "conv": 93}


def test_a_snapshot_survives_a_fresh_run_of_the_live_state(run):
    [fresh, resumed] = run(
        ("step", ids(1, 30)), ("snapshot", "turn1"),
        ("reset",), ("step", ids(200, 240)), ("read",),
        ("restore", "turn1"), ("read",))
    assert fresh == {"ids": ids(200, 240), "capacity": 64, "conv": 239}
    assert resumed == {"ids": ids(1, 30), "capacity": 64, "conv": 29}


def test_a_graph_that_returns_past_and_new_positions_is_refused_by_name(run):
    # e.g. a manifest whose appending_file is a standard graph
    [refused] = run(("step", [1, 2]), ("steps-returning", 3))
    assert 'appending graph output "present.key"' in refused["error"]
    assert "[1, 2, 3, 3]" in refused["error"] and "expected float32 [1, 2, 1, 3]" in refused["error"]
