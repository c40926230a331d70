"""A prompt split across calls gives the same next-token logits as the prompt in one call,
for every dtype: the browser's prefix reuse relies on it (int8 activations are scaled per token)."""

import numpy as np
import pytest

from botpsy_export.architectures import StateSpec
from botpsy_export.runner import OnnxStepper

from .conftest import BUILTIN_MODELS, read_manifest


@pytest.mark.parametrize("model_name", BUILTIN_MODELS)
@pytest.mark.parametrize("dtype", ["fp32", "q8", "q4"])
def test_splitting_a_prompt_across_calls_does_not_change_the_logits(exported_model, model_name, dtype):
    folder = exported_model(model_name)
    manifest = read_manifest(folder)
    specs = [StateSpec(c["input"], c["output"], c["kind"], tuple(c["shape"]), c["seq_axis"])
             for c in manifest["cache"]]
    stepper = OnnxStepper(folder / manifest["dtypes"][dtype]["file"], specs)
    prompt = list(np.random.default_rng(7).integers(3, manifest["vocab_size"], size=96))

    whole = stepper.feed(prompt)
    stepper.reset()
    stepper.feed(prompt[:60])
    split = stepper.feed(prompt[60:])

    assert np.argmax(split) == np.argmax(whole)
    assert np.max(np.abs(split - whole)) < 1e-3
