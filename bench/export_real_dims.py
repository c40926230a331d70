"""Export a random-weight Qwen3.5 at the real BotPsy-0.8B dimensions; print time, peak RAM and sizes.

Not a test: a figure to watch (goal: peak RAM < 12 GB on this machine). Peak RAM is sampled
per export phase (this process plus any child processes), so the phase that peaks is named.

    nice .venv/bin/python bench/export_real_dims.py --out /tmp/real-dims [--dtype fp32,q8,q4] [--no-verify]
        [--layers 4]   # fewer layers, same widths: a quicker stand-in while iterating
"""

import argparse
import contextlib
import resource
import sys
import time


def real_dims_config(layers: int = 24):
    from transformers import Qwen3_5TextConfig

    return Qwen3_5TextConfig(
        vocab_size=248320, hidden_size=1024, intermediate_size=3584, num_hidden_layers=layers,
        num_attention_heads=8, num_key_value_heads=2, head_dim=256,
        linear_num_key_heads=16, linear_num_value_heads=16, linear_key_head_dim=128, linear_value_head_dim=128,
        linear_conv_kernel_dim=4, tie_word_embeddings=True, max_position_embeddings=32768,
        rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                         "mrope_section": [11, 11, 10], "mrope_interleaved": True},
        eos_token_id=248046, pad_token_id=248044,  # BotPsy's <|im_end|> and <|endoftext|>
    )


MONITOR = """
import sys, time, psutil
watched, interval = psutil.Process(int(sys.argv[1])), float(sys.argv[2])
while True:
    try:
        rss = sum(p.memory_info().rss for p in [watched] + watched.children(recursive=True))
    except psutil.Error:
        break
    print(f"{time.time():.3f} {rss}", flush=True)
    time.sleep(interval)
"""


class RssSampler:
    """Samples the resident memory of this process and its children from a separate process
    (a thread would stall while C code holds the GIL); keeps the peak per phase label."""

    def __init__(self, interval: float = 0.1):
        self.interval = interval
        self.marks = [(time.time(), "build model")]  # (start time, label)

    def mark(self, label: str):
        self.marks.append((time.time(), label))

    def __enter__(self):
        import os
        import subprocess
        import tempfile

        self._log = tempfile.TemporaryFile(mode="w+")
        self._monitor = subprocess.Popen([sys.executable, "-c", MONITOR, str(os.getpid()), str(self.interval)],
                                         stdout=self._log)
        return self

    def __exit__(self, *exc):
        self._monitor.terminate()
        self._monitor.wait()

    def peaks(self) -> dict[str, int]:
        """Largest sample per label (the monitor's own few MB excluded), in label order."""
        import bisect

        self._log.seek(0)
        starts = [start for start, _ in self.marks]
        peaks = {label: 0 for _, label in self.marks}
        for line in self._log:
            stamp, rss = line.split()
            index = bisect.bisect_right(starts, float(stamp)) - 1
            label = self.marks[max(index, 0)][1]
            peaks[label] = max(peaks[label], int(rss))
        return {label: peak for label, peak in peaks.items() if peak}  # gaps shorter than a sample: none


def phase_progress(sampler: RssSampler):
    """A Progress whose phases also label the RSS samples (`after <phase>` until the next one)."""
    from botpsy_export.progress import Progress

    class SampledProgress(Progress):
        @contextlib.contextmanager
        def phase(self, label, total=None):
            sampler.mark(label)
            try:
                with super().phase(label, total) as bar:
                    yield bar
            finally:
                sampler.mark(f"after {label}")

    return SampledProgress(True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--dtype", default="fp32,q8,q4")
    parser.add_argument("--no-verify", dest="verify", action="store_false")
    parser.add_argument("--layers", type=int, default=24, help="decoder layers (real model: 24)")
    args = parser.parse_args(argv)
    if args.layers < 4:
        parser.error("--layers must be at least 4: every 4th layer is full attention and the graph needs one")

    import torch
    from transformers import Qwen3_5ForCausalLM

    from botpsy_export.api import export_loaded
    from botpsy_export.architectures import architecture_for
    from botpsy_export.qwen3_5_tokenizer import qwen3_5_tokenizer
    from botpsy_export.sources import LoadedSource
    from botpsy_export.summary import format_summary

    with RssSampler() as sampler:
        started = time.perf_counter()
        torch.manual_seed(0)
        model = Qwen3_5ForCausalLM(real_dims_config(args.layers)).eval()
        parameters = sum(p.numel() for p in model.parameters())
        built = time.perf_counter() - started
        # BotPsy's own tokenizer (Qwen3.5's vocabulary): the prompts, special ids and LM head width are the real ones.
        arch = architecture_for("qwen3_5_text")(model, qwen3_5_tokenizer())
        del model  # the exporter releases the weights once the graphs are written
        loaded = LoadedSource("qwen3.5-real-dims-random", "random weights, real 0.8B dims", arch)
        manifest = export_loaded(loaded, args.out, dtypes=args.dtype, verify=args.verify,
                                 progress=phase_progress(sampler))
        total = time.perf_counter() - started

    own_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    child_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    print(format_summary(manifest, args.out))
    print(f"\nlayers {args.layers}; parameters (tied): {parameters / 1e6:.0f} M; build {built:.1f} s; "
          f"export total {total:.1f} s")
    print("phases (s): " + ", ".join(f"{k} {v}" for k, v in manifest["phase_seconds"].items()))
    print("peak RSS per phase (GiB, sampled every 0.1 s, children included): "
          + ", ".join(f"{k} {v / 2**30:.2f}" for k, v in sampler.peaks().items()))
    print(f"peak RAM (max RSS): {own_peak:.2f} GiB this process, {child_peak:.2f} GiB largest child "
          "(goal < 12)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
