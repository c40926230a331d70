"""Drive an exported graph with onnxruntime the way web/ does: states in, states out."""

import numpy as np
import onnxruntime as ort

from .appending_graph import NUM_LOGITS
from .architectures import StateSpec
from .exact_int8 import exact_int8_session


class OnnxStepper:
    """Feeds any number of new tokens per call and carries every cache/state tensor."""

    def __init__(self, graph_path, state_specs: list[StateSpec], threads: int = 2):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self.session = exact_int8_session(graph_path, options)
        self.specs = state_specs
        self.position_rows = self._position_rows()
        self.reset()

    def _position_rows(self) -> int:
        """Read from the graph, not the architecture: 0 when it takes no position_ids,
        1 for [1, seq], n for [n, 1, seq] (multi-axis RoPE)."""
        shape = next((i.shape for i in self.session.get_inputs() if i.name == "position_ids"), None)
        if shape is None:
            return 0
        if len(shape) == 2:
            return 1
        if len(shape) == 3 and isinstance(shape[0], int):
            return shape[0]
        raise ValueError(f"the graph's position_ids has shape {shape}; expected [1, seq] or [n, 1, seq]")

    def reset(self):
        self.states = [np.zeros(spec.shape, dtype=np.float32) for spec in self.specs]
        self.length = 0

    def snapshot(self):
        return [s.copy() for s in self.states], self.length

    def restore(self, snapshot):
        states, self.length = snapshot
        self.states = [s.copy() for s in states]

    def attention_mask(self, count: int) -> np.ndarray:
        return np.ones((1, self.length + count), dtype=np.int64)

    def input_feeds(self, token_ids) -> dict:
        """input_ids, attention_mask and (when the graph takes it) position_ids for new tokens
        after the `length` processed ones; the cache states are not included."""
        ids = np.asarray(token_ids, dtype=np.int64).reshape(1, -1)
        count = ids.shape[1]
        feeds = {"input_ids": ids, "attention_mask": self.attention_mask(count)}
        if self.position_rows:
            positions = np.arange(self.length, self.length + count, dtype=np.int64)[None]
            if self.position_rows > 1:
                positions = np.broadcast_to(positions, (self.position_rows, 1, count)).copy()
            feeds["position_ids"] = positions
        return feeds

    def feed(self, token_ids) -> np.ndarray:
        """Run the new tokens; returns the last position's logits [vocab]."""
        feeds = self.input_feeds(token_ids)
        count = feeds["input_ids"].shape[1]
        feeds.update({spec.input: state for spec, state in zip(self.specs, self.states)})
        logits, *self.states = self.session.run(None, feeds)
        self.length += count
        return logits[0, -1]


class AppendingStepper(OnnxStepper):
    """Drives an appending graph (`appending_graph.py`) the way web/runtime does on WASM: the
    past fed is exactly the processed positions (as for a standard graph); the graph returns
    only the new positions, which are appended to the cache here. Given a standard graph, the
    new positions are the end of its present outputs."""

    def feed(self, token_ids) -> np.ndarray:
        return self.feed_scoring(token_ids, 1)[-1]

    def feed_scoring(self, token_ids, num_logits: int) -> np.ndarray:
        """Run the new tokens; returns the logits of the last `num_logits` of them [num_logits, vocab]
        (the graph's num_logits input; a graph without it scores only the last position)."""
        feeds = self.input_feeds(token_ids)
        count = feeds["input_ids"].shape[1]
        feeds.update({spec.input: state for spec, state in zip(self.specs, self.states)})
        if NUM_LOGITS in {i.name for i in self.session.get_inputs()}:
            feeds[NUM_LOGITS] = np.array([num_logits], dtype=np.int64)
        elif num_logits != 1:
            raise ValueError(f"the graph has no {NUM_LOGITS} input: it scores only the last position")
        logits, *outputs = self.session.run(None, feeds)
        for index, (spec, output) in enumerate(zip(self.specs, outputs)):
            if spec.seq_axis is None:
                self.states[index] = output
                continue
            held = output.shape[spec.seq_axis]
            if held == self.length + count:  # a standard graph: present = past + new, keep the new
                output = np.take(output, range(self.length, held), axis=spec.seq_axis)
            elif held != count:
                raise ValueError(f"{spec.output} holds {held} positions along axis {spec.seq_axis}, "
                                 f"expected the {count} new ones (or the {self.length} fed + {count} new)")
            self.states[index] = np.concatenate([self.states[index], output], axis=spec.seq_axis)
        self.length += count
        return logits[0]
