"""The human-readable summary printed at the end of an export."""

from pathlib import Path


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024


def _appending_status(name: str, entry: dict, result) -> str:
    if result is None:
        return f"{name} unverified"
    status = "ok" if result["passed"] else "FAILED"
    return f"{name} {status} (max|dlogit| {result['max_abs_logit_diff']:.3g} vs the standard graph)"


def format_summary(manifest: dict, out_dir) -> str:
    lines = [f"Exported {manifest['source']} ({manifest['architecture']}) to {Path(out_dir)} "
             f"in {manifest.get('export_seconds', '?')} s"]
    files = manifest["files"]
    lines.append("")
    lines.append(f"{'dtype':<6} {'size':>10}  {'max|dlogit|':>12} {'greedy':>7} {'top1':>6}  status  file")
    verification = manifest.get("verification", {})
    for name, entry in manifest["dtypes"].items():
        size = sum(files[f]["size"] for f in entry["files"])
        result = verification.get(name)
        if result:
            status = "ok" if result["passed"] else "FAILED"
            figures = (f"{result['max_abs_logit_diff']:>12.3g} {result['greedy_match']:>7.3f} "
                       f"{result['top1_agreement']:>6.3f}  {status:<6}")
        else:
            figures = f"{'-':>12} {'-':>7} {'-':>6}  {'unverified':<6}"
        lines.append(f"{name:<6} {_size(size):>10}  {figures}  {entry['file']}")
    appending = [_appending_status(name, entry, verification.get(name, {}).get("appending"))
                 for name, entry in manifest["dtypes"].items() if entry.get("appending_file")]
    if appending:
        lines.append("appending graphs (WASM, same weights): " + ", ".join(appending))
    others = sorted(f for f in files if not f.startswith("onnx/"))
    lines.append("")
    lines.append("other files: " + ", ".join(f"{f} ({_size(files[f]['size'])})" for f in others))
    recommended = [f"{k} -> {v}" for k, v in manifest["recommended_dtype"].items()]
    recommended += [f"{k} with shader-f16 -> {v}" for k, v in manifest.get("recommended_dtype_shader_f16", {}).items()]
    lines.append("recommended dtype: " + ", ".join(recommended))
    return "\n".join(lines)
