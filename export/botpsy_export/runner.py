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
        self.reset()

    def reset(self):
        self.states = [np.zeros(spec.shape, dtype=np.float32) for spec in self.specs]
        self.length = 0

    def snapshot(self):
        return [s.copy() for s in self.states], self.length

    def restore(self, snapshot):
        states, self.length = snapshot
        self.states = [s.copy() for s in states]

    def feed(self, token_ids) -> np.ndarray:
        """Run the new tokens; returns the last position's logits [vocab]."""
        ids = np.asarray(token_ids, dtype=np.int64).reshape(1, -1)
        count = ids.shape[1]
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones((1, self.length + count), dtype=np.int64),
            "position_ids": np.arange(self.length, self.length + count, dtype=np.int64)[None],
        }
        feeds.update({spec.input: state for spec, state in zip(self.specs, self.states)})
        logits, *self.states = self.session.run(None, feeds)
        self.length += count
        return logits[0, -1]
