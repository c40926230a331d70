"""What `botpsy-web bench` reports from its figures: the ratios between engines, and the table.

Every figure is per engine, under the keys bench.py measures (a median, with every run's value
under `<key>_runs`). A ratio is > 1 when our runtime is better: faster for rates, shorter
for times; None when either side has no figure.
"""

from __future__ import annotations

from botpsy_web import bench_constrained, bench_returning_visitor

LONG_CONTEXT = 1024
AFTER_LONG = f"decode_tok_s_after_{LONG_CONTEXT}"
OURS, TRANSFORMERS_JS, WLLAMA, NATIVE = "botpsy", "transformers.js", "wllama", "native"
# The ratios copied to the report's top level (from the WASM backend's).
HEADLINE_RATIOS = (
    "prefill_vs_native", "decode_vs_native", "decode_one_per_call_vs_native",
    "decode_vs_transformersjs", "prefill_vs_transformersjs", "decode_vs_wllama", "agent_vs_wllama",
    "agent_prefix_reuse_speedup", "agent_prefix_reuse_speedup_prewarmed", "prefill_over_decode",
    "constrained_decode_vs_free")


def ratio(numerator, denominator):
    if numerator is None or denominator in (None, 0):
        return None
    return numerator / denominator


def backend_ratios(engines: dict) -> dict:
    """Ratios of one backend's figures ({engine: {key: value}})."""
    ours, theirs = engines.get(OURS, {}), engines.get(TRANSFORMERS_JS, {})
    return {
        "decode_vs_transformersjs": ratio(ours.get("decode_tok_s"), theirs.get("decode_tok_s")),
        "decode_one_per_call_vs_transformersjs": ratio(ours.get("decode_tok_s_one_per_call"),
                                                       theirs.get("decode_tok_s")),
        "decode_after_1024_vs_transformersjs": ratio(ours.get(AFTER_LONG), theirs.get(AFTER_LONG)),
        "decode_after_1024_one_per_call_vs_transformersjs": ratio(
            ours.get(f"{AFTER_LONG}_one_per_call"), theirs.get(AFTER_LONG)),
        "prefill_vs_transformersjs": ratio(ours.get("prefill_tok_s_1024"), theirs.get("prefill_tok_s_1024")),
        "prefill_128_vs_transformersjs": ratio(ours.get("prefill_tok_s_128"), theirs.get("prefill_tok_s_128")),
        "load_cached_vs_transformersjs": ratio(theirs.get("load_cached_s"), ours.get("load_cached_s")),
        "agent_vs_transformersjs": ratio(theirs.get("agent_s_without_reuse"), ours.get("agent_s_with_reuse")),
        **wllama_ratios(ours, engines.get(WLLAMA, {})),
        **native_ratios(ours, engines.get(NATIVE, {})),
        "agent_prefix_reuse_speedup": ratio(ours.get("agent_s_without_reuse"), ours.get("agent_s_with_reuse")),
        "agent_prefix_reuse_speedup_prewarmed": ratio(ours.get("agent_s_without_reuse"),
                                                      ours.get("agent_s_with_reuse_prewarmed")),
        "prefill_over_decode": ratio(ours.get("prefill_tok_s_1024"), ours.get("decode_tok_s")),
        "constrained_decode_vs_free": ratio(ours.get("constrained_decode_tok_s"), ours.get("constrained_free_decode_tok_s")),
    }


def wllama_ratios(ours: dict, wllama: dict) -> dict:
    """Ours against wllama on the GGUF. Both engines reuse the prompt's cached prefix between
    turns (ours: reusePrefix; wllama: llama-server's cache_prompt), so the agent ratio compares
    each with its reuse on."""
    return {
        "decode_vs_wllama": ratio(ours.get("decode_tok_s"), wllama.get("decode_tok_s")),
        "decode_one_per_call_vs_wllama": ratio(ours.get("decode_tok_s_one_per_call"), wllama.get("decode_tok_s")),
        "decode_after_1024_vs_wllama": ratio(ours.get(AFTER_LONG), wllama.get(AFTER_LONG)),
        "prefill_vs_wllama": ratio(ours.get("prefill_tok_s_1024"), wllama.get("prefill_tok_s_1024")),
        "load_cached_vs_wllama": ratio(wllama.get("load_cached_s"), ours.get("load_cached_s")),
        "agent_vs_wllama": ratio(wllama.get("agent_s_with_reuse"), ours.get("agent_s_with_reuse")),
        "returning_visitor_vs_wllama": ratio(wllama.get("returning_visitor_first_token_s"),
                                             ours.get("returning_visitor_first_token_s")),
    }


def native_ratios(ours: dict, native: dict) -> dict:
    """Ours as a share of native onnxruntime on the same folder, dtype and threads (its prefill is
    one call, its decode one token per call). decode_vs_native is what a person gets (ours guesses
    tokens, as decode_vs_transformersjs); decode_one_per_call_vs_native is the engine against the engine."""
    return {
        "prefill_vs_native": ratio(ours.get("prefill_tok_s_1024"), native.get("prefill_tok_s_1024")),
        "prefill_128_vs_native": ratio(ours.get("prefill_tok_s_128"), native.get("prefill_tok_s_128")),
        "decode_vs_native": ratio(ours.get("decode_tok_s"), native.get("decode_tok_s")),
        "decode_one_per_call_vs_native": ratio(ours.get("decode_tok_s_one_per_call"), native.get("decode_tok_s")),
        "decode_after_1024_vs_native": ratio(ours.get(AFTER_LONG), native.get(AFTER_LONG)),
        "decode_after_1024_one_per_call_vs_native": ratio(ours.get(f"{AFTER_LONG}_one_per_call"),
                                                          native.get(AFTER_LONG)),
    }


def headline_ratios(report: dict) -> dict:
    wasm = report["backends"].get("wasm", {}).get("ratios", {})
    return {key: wasm.get(key) for key in HEADLINE_RATIOS}


# --- printing ---------------------------------------------------------------------

FIGURE_ROWS = (
    ("format", "format", "{}"),
    ("load, cold (s)", "load_cold_s", "{:.2f}"),
    ("load, from cache (s)", "load_cached_s", "{:.2f}"),
    ("prefill @128 (tok/s)", "prefill_tok_s_128", "{:.1f}"),
    ("prefill @1024 (tok/s)", "prefill_tok_s_1024", "{:.1f}"),
    ("decode, short context (tok/s)", "decode_tok_s", "{:.2f}"),
    ("  one token per call (tok/s)", "decode_tok_s_one_per_call", "{:.2f}"),
    ("  guessed tokens that held", "decode_tok_s_guesses_held", "{:.0%}"),
    (f"decode after {LONG_CONTEXT} tokens (tok/s)", AFTER_LONG, "{:.2f}"),
    ("  one token per call (tok/s)", f"{AFTER_LONG}_one_per_call", "{:.2f}"),
    ("  guessed tokens that held", f"{AFTER_LONG}_guesses_held", "{:.0%}"),
    ("time to first token (ms)", "ttft_ms", "{:.0f}"),
    ("memory, page + workers (MB)", "memory_bytes", "{:.0f}"),
    ("  of which workers (MB)", "memory_bytes_workers", "{:.0f}"),
    ("agent, no prefix reuse (s)", "agent_s_without_reuse", "{:.2f}"),
    ("agent, prefix reuse (s)", "agent_s_with_reuse", "{:.2f}"),
    ("agent, reuse + prefilled system (s)", "agent_s_with_reuse_prewarmed", "{:.2f}"),
    *bench_returning_visitor.FIGURE_ROWS,
    *bench_constrained.FIGURE_ROWS,
)
MEGABYTE_KEYS = ("memory_bytes", "memory_bytes_workers")


def format_report(report: dict) -> str:
    lines = [f"{report['model']} ({report['architecture']}), {report['browser']}, "
             f"{report['machine']['cpus']} CPUs, load {_load(report['machine'])}, medians of {report['repeats']}"]
    if report.get("interrupted"):
        lines.append("INTERRUPTED: only the scenarios that finished are in this table")
    if "scenarios" in report:
        lines.append(f"scenarios: {', '.join(report['scenarios'])} (--scenarios)")
    if report.get("gguf"):
        lines.append(f"wllama runs {report['gguf']['path']} ({report['gguf']['file_type']})")
    for backend, entry in report["backends"].items():
        engines = entry["engines"]
        names = list(engines) or ["(none)"]
        threads = next((f["threads"] for f in engines.values()), "?")
        lines.append("")
        lines.append(f"[{backend}, dtype {entry['dtype']}, {threads} thread(s)]")
        lines.append(f"{'':38}" + "".join(f"{name:>18}" for name in names))
        for label, key, pattern in FIGURE_ROWS:
            cells = []
            for name in names:
                value = engines.get(name, {}).get(key)
                if key in MEGABYTE_KEYS and value is not None:
                    value = value / 1e6
                cells.append(f"{pattern.format(value) if value is not None else '-':>18}")
            if any(cell.strip() != "-" for cell in cells):
                lines.append(f"{label:38}" + "".join(cells))
        ours = engines.get(OURS, {})
        for key, label in (("decode_tok_s", "short"), (AFTER_LONG, f"after {LONG_CONTEXT}")):
            same = ours.get(f"{key}_same_tokens_one_per_call")
            if same is not None:
                lines.append(f"decode {label}: guessing gave {'the same' if same else 'DIFFERENT'} tokens "
                             "as one token per call")
            same = ours.get(f"{key}_same_tokens_as_native")
            if same is not None:
                lines.append(f"decode {label}: {'the same' if same else 'other'} tokens as native onnxruntime")
        for engine, message in entry["errors"].items():
            lines.append(f"{engine} could not run: {message}")
        lines.append("ratios: " + ", ".join(
            f"{key} {value:.2f}" if value is not None else f"{key} -" for key, value in entry["ratios"].items()))
    return "\n".join(lines)


def _load(machine: dict) -> str:
    start, end = machine.get("load_average_at_start"), machine.get("load_average_at_end")
    figures = [f"{start[0]:.2f} at start" if start else None, f"{end[0]:.2f} at end" if end else None]
    return ", ".join(figure for figure in figures if figure) or "?"
