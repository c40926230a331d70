"""`botpsy-web export --model SRC --out DIR [--dtype q4,q8,fp32]`."""

import sys


def register(subparsers):
    parser = subparsers.add_parser(
        "export", help="export a checkpoint to a verified, quantized ONNX folder",
        description="Export a Hugging Face folder or Hub id, a .gguf file, or a built-in model "
                    "(tiny-qwen3.5, smollm2-135m, qwen2.5-coder-0.5b, qwen2.5-coder-1.5b) to an ONNX folder that the page loads.",
    )
    parser.add_argument("--model", required=True, metavar="SRC",
                        help="built-in name, local Hugging Face folder, .gguf file, or Hub id")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument("--dtype", default="fp32,q8,q4", metavar="LIST",
                        help="comma-separated dtypes among fp32, q8, q4, fp16, q4f16 "
                             "(default: fp32,q8,q4; fp16 and q4f16 need WebGPU with shader-f16)")
    parser.add_argument("--no-verify", dest="verify", action="store_false",
                        help="skip the parity checks against PyTorch")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)


class _OptionalKernelAdviceFilter:
    """Drops transformers' advice to install CUDA kernel packages (causal_conv1d,
    flash-linear-attention): the export runs the PyTorch reference on the CPU once, for
    verification, where the reference implementation is what it wants."""

    def filter(self, record) -> bool:
        return "falling back to its reference PyTorch implementation" not in record.getMessage()


def run(args) -> int:
    import logging

    logging.getLogger("transformers.integrations.hub_kernels").addFilter(_OptionalKernelAdviceFilter())
    from .api import export_model
    from .errors import ExportError, VerificationFailedError
    from .summary import format_summary

    try:
        manifest = export_model(args.model, args.out, dtypes=args.dtype, verify=args.verify,
                                progress=not args.quiet)
    except VerificationFailedError as error:
        from .api import read_manifest

        print(format_summary(read_manifest(error.folder), error.folder), file=sys.stderr)
        print(f"error: {error}", file=sys.stderr)
        return 1
    except ExportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_summary(manifest, args.out))
    print(f"peak memory: {_peak_memory_gib():.1f} GiB (this process's largest resident set)")
    return 0


def _peak_memory_gib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 << 20)  # Linux reports KiB
