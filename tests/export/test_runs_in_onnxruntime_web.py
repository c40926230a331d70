"""Every exported dtype runs in onnxruntime-web 1.30 (WASM, under Node) and computes what
native onnxruntime computes: the contrib ops (CausalConvWithState, LinearAttention,
GatherBlockQuantized, MatMulNBits, MatMulInteger) exist in the web build with these schemas."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from botpsy_export.architectures import StateSpec
from botpsy_export.runner import OnnxStepper

from .conftest import read_manifest

SCRIPT = Path(__file__).with_name("run_in_ort_web.mjs")
PROMPT = [17, 4, 902, 33, 1200, 8, 15]


def _specs(manifest):
    return [StateSpec(c["input"], c["output"], c["kind"], tuple(c["shape"]), c["seq_axis"])
            for c in manifest["cache"]]


def external_data_files(folder, entry):
    """The files a dtype's graph reads its weights from (`files` minus the graph)."""
    return [folder / name for name in entry["files"] if name != entry["file"]]


def run_in_web(graph, feeds, tmp_path, data_files=()):
    """Run `graph` once in onnxruntime-web (WASM, Node); returns its outputs by name."""
    feeds_path = tmp_path / "feeds.json"
    feeds_path.write_text(json.dumps({
        name: {"type": "int64" if value.dtype == np.int64 else "float32",
               "dims": list(value.shape), "data": value.ravel().tolist()}
        for name, value in feeds.items()
    }))
    done = subprocess.run(["node", str(SCRIPT), str(graph), str(feeds_path), *map(str, data_files)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return {name: np.array(v["data"], dtype=np.float32).reshape(v["dims"])
            for name, v in json.loads(done.stdout).items()}


@pytest.mark.parametrize("dtype", ["fp32", "q8", "q4"])
def test_tiny_qwen_prefill_then_decode_in_web_matches_native(tiny_qwen, dtype, tmp_path):
    manifest = read_manifest(tiny_qwen)
    graph = tiny_qwen / manifest["dtypes"][dtype]["file"]
    native = OnnxStepper(graph, _specs(manifest))
    native.feed(PROMPT)  # 7 tokens in one call; the web run resumes from these states
    feeds = native.input_feeds([99])
    expected = native.feed([99])

    for spec, state in zip(native.specs, _states_after_prompt(graph, manifest)):
        feeds[spec.input] = state
    web = run_in_web(graph, feeds, tmp_path, external_data_files(tiny_qwen, manifest["dtypes"][dtype]))

    assert web["logits"].shape == (1, 1, manifest["vocab_size"])
    np.testing.assert_allclose(web["logits"][0, -1], expected, atol=2e-4, rtol=0)
    for spec, state in zip(native.specs, native.states):
        np.testing.assert_allclose(web[spec.output], state, atol=2e-4, rtol=0)


def _states_after_prompt(graph, manifest):
    stepper = OnnxStepper(graph, _specs(manifest))
    stepper.feed(PROMPT)
    return stepper.states
