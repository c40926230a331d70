"""Export a random-weight Qwen3.5 at the real BotPsy-0.8B dimensions; print time, peak RAM and sizes.

Not a test: a figure to watch (goal: peak RAM < 12 GB on this machine).

    nice .venv/bin/python bench/export_real_dims.py --out /tmp/real-dims [--dtype fp32,q8,q4] [--no-verify]
"""

import argparse
import resource
import sys
import time


def real_dims_config():
    from transformers import Qwen3_5TextConfig

    return Qwen3_5TextConfig(
        vocab_size=248320, hidden_size=1024, intermediate_size=3584, num_hidden_layers=24,
        num_attention_heads=8, num_key_value_heads=2, head_dim=256,
        linear_num_key_heads=16, linear_num_value_heads=16, linear_key_head_dim=128, linear_value_head_dim=128,
        linear_conv_kernel_dim=4, tie_word_embeddings=True, max_position_embeddings=32768,
        rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                         "mrope_section": [11, 11, 10], "mrope_interleaved": True},
        eos_token_id=2,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--dtype", default="fp32,q8,q4")
    parser.add_argument("--no-verify", dest="verify", action="store_false")
    args = parser.parse_args(argv)

    import torch
    from transformers import Qwen3_5ForCausalLM

    from botpsy_export.api import export_loaded
    from botpsy_export.architectures import architecture_for
    from botpsy_export.builtins import smollm2_tokenizer
    from botpsy_export.sources import LoadedSource
    from botpsy_export.summary import format_summary

    started = time.perf_counter()
    torch.manual_seed(0)
    model = Qwen3_5ForCausalLM(real_dims_config()).eval()
    parameters = sum(p.numel() for p in model.parameters())
    built = time.perf_counter() - started
    # Token ids of the (smaller) SmolLM2 tokenizer are all valid in a 248k vocabulary.
    arch = architecture_for("qwen3_5_text")(model, smollm2_tokenizer())
    del model  # the exporter releases the weights once the graphs are written
    loaded = LoadedSource("qwen3.5-real-dims-random", "random weights, real 0.8B dims", arch)
    manifest = export_loaded(loaded, args.out, dtypes=args.dtype, verify=args.verify, progress=True)
    total = time.perf_counter() - started

    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(format_summary(manifest, args.out))
    print(f"\nparameters (tied): {parameters / 1e6:.0f} M; build {built:.1f} s; export total {total:.1f} s")
    print("phases (s): " + ", ".join(f"{k} {v}" for k, v in manifest["phase_seconds"].items()))
    print(f"peak RAM (max RSS): {peak_gib:.2f} GiB (goal < 12)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
