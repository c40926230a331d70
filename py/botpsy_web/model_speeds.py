"""How fast the built-in models answer, as `botpsy-web bench` measured them (bench/RESULTS.md):
the page's model list shows it beside each download size, so a person choosing between a fast
model and a better one knows what each costs before downloading it.

Keyed by the built-in a folder was exported from (its manifest's `source`) and the dtype; a
folder from any other source gets no figure rather than a guess.
"""

# Decode, short context, one token per model call (the model's own pace: guessing ahead speeds up
# only text that repeats its prompt), tokens/s: headless Chromium, WASM, 2 threads, on the 2-core test
# machine (MEASURED_ON, which the page says with each figure). Both in one sitting, quiet, median of 3:
# `botpsy-web bench DIR --dtype q8 --repeats 3 --engines botpsy --scenarios decode`, 2026-12-08
# (bench/qwen2.5-coder-1.5b.md#the-speed-hints-re-measured-2026-12-08).
MEASURED_ON = "a 2-core CPU"
DECODE_TOKENS_PER_SECOND = {
    "qwen2.5-coder-0.5b": {"q8": 14.5},
    "qwen2.5-coder-1.5b": {"q8": 5.28},
}


def decode_speeds(manifest: dict) -> dict[str, float]:
    """{dtype: tokens/s} measured for the folder's source, for the dtypes the folder holds."""
    measured = DECODE_TOKENS_PER_SECOND.get(str(manifest.get("source", "")), {})
    held = manifest.get("dtypes", {})
    return {dtype: speed for dtype, speed in measured.items() if dtype in held}
