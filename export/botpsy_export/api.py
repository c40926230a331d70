"""`export_model`: a checkpoint in, a verified folder that web/ loads out (docs/contracts.md §1)."""

import errno
import shutil
import tempfile
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

from .appending_graph import APPENDING_INPUTS, write_appending_graph
from .errors import ExportError, OutOfDiskError, VerificationFailedError
from .folder import MANIFEST, describe_files, write_json, write_model_configs, write_tokenizer_files
from .out_folder import StagedFolder, check_out_folder
from .progress import Progress
from .quantize import VARIANTS, variant_for
from .sources import LoadedSource, load_source
from .to_onnx import export_fp32, model_input_names

FORMAT_VERSION = 1
# Preferred dtype per backend, best first, among the dtypes exported. WASM: int8 dynamic
# (MatMulInteger) decodes ~7x faster than int4 MatMulNBits in onnxruntime-web 1.30 (FACTS,
# bench/export_dtype_speed.mjs). WASM runs fp16 graphs too (shader-f16 is a WebGPU need), and
# fp16 decoded at least as fast as fp32 with half the download (SmolLM2-135M, Node, 1 thread,
# a loaded 2-core machine: fp16 7.4-12.9 tok/s, fp32 3.2-7.4, q8 7.8-8.6, q4f16 ~1.0-1.4, q4
# ~0.8-1.5), so fp16 comes before fp32 there. WebGPU: MatMulNBits has native WebGPU kernels
# while MatMulInteger does not, so q4 there; fp16/q4f16 need `shader-f16`, which
# `recommended_dtype` must not assume, so they come last.
BACKEND_PREFERENCES = {"wasm": ("q8", "fp16", "fp32", "q4", "q4f16"),
                       "webgpu": ("q4", "fp32", "q8", "q4f16", "fp16")}
# For a WebGPU adapter that has `shader-f16` (manifest `recommended_dtype_shader_f16`). Unmeasured
# on a real GPU: this machine only has SwiftShader, which lacks shader-f16. q4f16 first because
# its weights are the smallest and fp16 halves the activation traffic.
SHADER_F16_PREFERENCES = {"webgpu": ("q4f16", "fp16", "q4", "fp32", "q8")}
BYTES_PER_PARAMETER_NEEDED = 4 * 2 + 2  # fp32 graph (untied head) + quantized copies


def export_model(source, out_dir, dtypes=("fp32", "q8", "q4"), verify=True, progress=True) -> dict:
    """Export `source` to `out_dir`; returns the manifest (also written to manifest.json).

    The folder is written beside `out_dir` and replaces it only once verified (out_folder.py):
    until then an earlier export there stays as it was. Raises ExportError subclasses with
    one-line messages; VerificationFailedError when a parity check fails (the folder and its
    manifest are kept as `.<out>.failed`, its `folder`, for inspection).
    """
    dtypes = _normalise_dtypes(dtypes)
    check_out_folder(out_dir)  # before minutes of loading
    bars = Progress(progress)
    with bars.phase("load model"):
        loaded = load_source(str(source), bars)
    return export_loaded(loaded, out_dir, dtypes, verify, bars)


def export_loaded(loaded: LoadedSource, out_dir, dtypes=("fp32", "q8", "q4"), verify=True, progress=True) -> dict:
    """Like `export_model`, for a model already in memory (benchmarks build theirs in code)."""
    dtypes = _normalise_dtypes(dtypes)
    bars = progress if isinstance(progress, Progress) else Progress(progress)
    staged = StagedFolder(out_dir)
    started = time.perf_counter()
    try:
        manifest = _export_verified(loaded, staged, dtypes, verify, bars, started)
        staged.commit()
    except BaseException:
        staged.discard()  # an error or an interrupt: nothing half-written stays behind
        raise
    return manifest


def _export_verified(loaded, staged, dtypes, verify, bars, started) -> dict:
    out = staged.path
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            manifest = _export(loaded, out, dtypes, verify, bars)
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise OutOfDiskError(f"out of disk space while writing {out} (for {staged.out}): free some space or pick "
                                 "another --out") from None
        raise
    manifest["export_seconds"] = round(time.perf_counter() - started + bars.timings.get("load model", 0), 1)
    manifest["phase_seconds"] = bars.timings
    write_json(out / MANIFEST, manifest)
    problem = _verification_problem(manifest)
    if problem:
        failed = staged.keep_as_failed()
        raise VerificationFailedError(f"{problem} (see {failed / MANIFEST}; {staged.out} was left as it was)",
                                      folder=failed)
    return manifest


def _verification_problem(manifest) -> str | None:
    fp32_result = manifest.get("verification", {}).get("fp32")
    if fp32_result is not None and not fp32_result["passed"]:
        return (f"fp32 parity failed: max |logit diff| {fp32_result['max_abs_logit_diff']}, "
                f"greedy match {fp32_result['greedy_match']}")
    for name, result in manifest.get("verification", {}).items():
        appending = result.get("appending")
        if appending is not None and not appending["passed"]:
            return (f"the {name} appending graph disagrees with the {name} standard graph: max |logit diff| "
                    f"{appending['max_abs_logit_diff']}, same greedy tokens {appending['greedy_tokens_equal']}; "
                    f"{appending['criteria']}")
    return None


def read_manifest(out_dir) -> dict:
    import json

    return json.loads((Path(out_dir) / MANIFEST).read_text())


def _normalise_dtypes(dtypes) -> list[str]:
    if isinstance(dtypes, str):
        dtypes = dtypes.split(",")
    names = [name.strip() for name in dtypes if name.strip()]
    if not names:
        raise ExportError(f"no dtype requested; choose from {', '.join(VARIANTS)}")
    for name in names:
        try:
            variant_for(name)
        except ValueError as error:
            raise ExportError(str(error)) from None
    return list(dict.fromkeys(names))


def _check_free_space(out: Path, parameters: int):
    needed = parameters * BYTES_PER_PARAMETER_NEEDED
    free = shutil.disk_usage(out).free
    if free < needed:
        raise OutOfDiskError(f"out of disk: {out} has {free / 2**30:.1f} GiB free, the export needs "
                             f"about {needed / 2**30:.1f} GiB")


def _export(loaded, out, dtypes, verify, bars) -> dict:
    arch = loaded.architecture
    _check_free_space(out, sum(p.numel() for p in arch.model.parameters()))
    (out / "onnx").mkdir(parents=True, exist_ok=True)

    with bars.phase("write tokenizer"):
        write_tokenizer_files(arch, out)

    reference = None
    if verify:
        from .verify import build_reference, verification_steps

        # Before anything below may rescale the model in place (q8 smoothing).
        with bars.phase("torch reference", total=verification_steps()) as bar:
            reference = build_reference(arch, on_step=bar.update)

    graph_files = {}
    with bars.phase("export fp32 graph"):
        fp32_files = export_fp32(arch, out / variant_for("fp32").file)
    graph_files["fp32"] = fp32_files
    with tempfile.TemporaryDirectory(dir=out, prefix=".smoothed-") as scratch:
        sources = {name: fp32_files[0] for name in dtypes if name != "fp32"}
        if "q8" in sources and _smoothing_alpha(arch, variant_for("q8")):
            with bars.phase("export smoothed fp32"):
                sources["q8"] = _export_smoothed(arch, variant_for("q8"), Path(scratch))
        arch.release_model()  # the torch weights are no longer needed: free them before quantizing
        # A variant that starts from another one's graph (q4f16 from fp16) goes after it and reuses it.
        for name in sorted(sources, key=lambda name: hasattr(variant_for(name), "starts_from")):
            variant = variant_for(name)
            base = getattr(variant, "starts_from", None)
            with bars.phase(f"quantize {name}"):
                if base in graph_files:
                    graph_files[name] = variant.quantize_from(graph_files[base][0], out / variant.file)
                else:
                    graph_files[name] = variant.quantize(sources[name], out / variant.file)

    with bars.phase("appending graphs"):
        appending_files = {name: write_appending_graph(graph_files[name][0], arch.state_specs()) for name in dtypes}
    verification = {}
    if verify:
        verification = _verify(arch, dtypes, graph_files, appending_files, reference, bars)
    if "fp32" not in dtypes:
        for path in fp32_files:
            path.unlink()
        del graph_files["fp32"]
    write_model_configs(arch, out, {name: graph_files[name] for name in dtypes})

    return _manifest(loaded, arch, out, dtypes, graph_files, appending_files, verification)


def _smoothing_alpha(arch, variant):
    alpha = getattr(variant, "smoothing_alpha", None)
    return alpha if alpha and arch.smoothing_groups() else None


def _export_smoothed(arch, variant, scratch: Path) -> Path:
    """Rescale the model in place (`smoothing.py`) and export it again as the q8 starting point."""
    from .smoothing import smooth
    from .verify import calibration_token_ids

    smooth(arch.model, arch.smoothing_groups(), calibration_token_ids(arch), _smoothing_alpha(arch, variant))
    return export_fp32(arch, scratch / "model.onnx")[0]


def _verify(arch, dtypes, graph_files, appending_files, reference, bars) -> dict:
    from .verify import verify_graph
    from .verify_appending import verify_appending_graph

    results = {}
    for name in (["fp32"] if "fp32" not in dtypes else []) + dtypes:
        with bars.phase(f"verify {name}"):
            results[name] = verify_graph(graph_files[name][0], arch, reference, name)
            if name in appending_files:
                results[name]["appending"] = verify_appending_graph(
                    graph_files[name][0], appending_files[name], arch.state_specs(), reference.prompt_ids, name)
    return results


def _manifest(loaded, arch, out, dtypes, graph_files, appending_files, verification) -> dict:
    dtype_entries = {
        name: {"file": variant_for(name).file,
               "files": [p.relative_to(out).as_posix() for p in graph_files[name]],
               "appending_file": appending_files[name].relative_to(out).as_posix(),
               "requires": list(getattr(variant_for(name), "requires", ())),
               "quantization": variant_for(name).describe()}
        for name in dtypes
    }
    manifest = {
        "format_version": FORMAT_VERSION,
        "name": loaded.name,
        "architecture": arch.name,
        "source": loaded.source,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "files": describe_files(out),
        "dtypes": dtype_entries,
        "recommended_dtype": recommend(BACKEND_PREFERENCES, dtypes),
        "inputs": {name: name for name in model_input_names(arch)},
        "appending_inputs": APPENDING_INPUTS,  # what only the appending graphs take (role -> name)
        "outputs": {"logits": "logits"},
        "cache": [spec.manifest_entry() for spec in arch.state_specs()],
        "vocab_size": arch.config.vocab_size,
        "attention_heads": arch.attention_heads(),
        "context_length": arch.context_length(),
        "bos_token_id": arch.bos_token_id(),
        "eos_token_ids": arch.eos_token_ids(),
        "stop_strings": [],
        "message_boundary_token_ids": arch.message_boundary_token_ids(),
        "tool_call_format": arch.tool_call_format,
        "chat_template_supports_tools": arch.chat_template_supports_tools,
        "verification": verification,
    }
    if any("shader-f16" in entry["requires"] for entry in dtype_entries.values()):
        manifest["recommended_dtype_shader_f16"] = recommend(SHADER_F16_PREFERENCES, dtypes)
    return manifest


def recommend(preferences, dtypes) -> dict:
    """The first exported dtype of each backend's preference order."""
    return {backend: next(d for d in order if d in dtypes) for backend, order in preferences.items()}
