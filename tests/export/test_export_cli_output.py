"""What a person sees from `botpsy-web export`: the summary, and no advice that does not apply
(transformers suggests CUDA kernel packages when the CPU reference runs the DeltaNet layers)."""

import subprocess
import sys


def test_export_prints_the_summary_without_kernel_install_advice(tmp_path):
    out = tmp_path / "tiny"
    done = subprocess.run(
        [sys.executable, "-m", "botpsy_web.cli", "export", "--model", "tiny-qwen3.5", "--out", str(out),
         "--dtype", "fp32", "--quiet"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Exported tiny-qwen3.5 (qwen3_5)" in done.stdout
    assert "falling back to its reference PyTorch implementation" not in done.stderr + done.stdout
    assert "install" not in done.stderr, done.stderr
