"""Drive an exported graph with onnxruntime the way web/ does: states in, states out."""

import numpy as np
import onnxruntime as ort

from .architectures import StateSpec


class OnnxStepper:
    """Feeds any number of new tokens per call and carries every cache/state tensor."""

    def __init__(self, graph_path, state_specs: list[StateSpec], threads: int = 2):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(graph_path), options, providers=["CPUExecutionProvider"])
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
    """Drives an appending graph (`appending_graph.py`) the way web/runtime does on WASM
    (a standard graph too: the new positions are then the end of its present outputs).

    Each seq-axis cache lives in a buffer of `capacity` positions, fed whole as the past
    input; the attention mask has ones for the `length` valid positions, zeros for the unused
    slots [length, capacity), ones for the new tokens. The graph returns only the new
    positions, which are written into the buffer at [length, length + new), growing it
    (x1.5, rounded up to GROWTH_ROUNDING) when they do not fit. Unused slots hold `filler`
    values, which the mask must hide.
    """

    GROWTH_ROUNDING = 64

    def __init__(self, graph_path, state_specs: list[StateSpec], capacity: int = 64, filler: float = 0.0,
                 threads: int = 2):
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        self.initial_capacity = capacity
        self.filler = filler
        super().__init__(graph_path, state_specs, threads)

    def reset(self):
        self.states = [self._buffer(spec, self.initial_capacity) if spec.seq_axis is not None
                       else np.zeros(spec.shape, dtype=np.float32) for spec in self.specs]
        self.length = 0

    def _buffer(self, spec: StateSpec, capacity: int) -> np.ndarray:
        shape = list(spec.shape)
        shape[spec.seq_axis] = capacity
        return np.full(shape, self.filler, dtype=np.float32)

    @property
    def capacity(self) -> int:
        return next((state.shape[spec.seq_axis] for spec, state in zip(self.specs, self.states)
                     if spec.seq_axis is not None), 0)

    def attention_mask(self, count: int) -> np.ndarray:
        mask = np.ones((1, self.capacity + count), dtype=np.int64)
        mask[0, self.length:self.capacity] = 0
        return mask

    def feed(self, token_ids) -> np.ndarray:
        feeds = self.input_feeds(token_ids)
        count = feeds["input_ids"].shape[1]
        feeds.update({spec.input: state for spec, state in zip(self.specs, self.states)})
        logits, *outputs = self.session.run(None, feeds)
        capacity, end = self.capacity, self.length + count
        if end > self.capacity:
            self._grow(end)
        for index, (spec, output) in enumerate(zip(self.specs, outputs)):
            if spec.seq_axis is None:
                self.states[index] = output
                continue
            held = output.shape[spec.seq_axis]
            if held == capacity + count:  # a standard graph: present = buffer + new, keep the new
                output = np.take(output, range(capacity, held), axis=spec.seq_axis)
            elif held != count:
                raise ValueError(f"{spec.output} holds {held} positions along axis {spec.seq_axis}, "
                                 f"expected the {count} new ones (or the {capacity} fed + {count} new)")
            target = [slice(None)] * output.ndim
            target[spec.seq_axis] = slice(self.length, end)
            self.states[index][tuple(target)] = output
        self.length = end
        return logits[0, -1]

    def _grow(self, needed: int):
        capacity = max(needed, int(self.capacity * 1.5))
        capacity = -(-capacity // self.GROWTH_ROUNDING) * self.GROWTH_ROUNDING
        for index, spec in enumerate(self.specs):
            if spec.seq_axis is not None:
                grown = self._buffer(spec, capacity)
                kept = [slice(None)] * grown.ndim
                kept[spec.seq_axis] = slice(0, self.length)
                grown[tuple(kept)] = self.states[index][tuple(kept)]
                self.states[index] = grown
