"""Fixtures of the runtime tests (the harness page itself, `runtime_page`, is in tests/conftest.py)."""

import types

import pytest


# --- browser-side snippets: load a folder, generate, collect -----------------------
# Creates (once per page) a ModelClient per key and loads a folder into it.
LOAD = """
async ({key, folderUrl, backend, dtype}) => {
  window.clients ??= {};
  window.clients[key]?.terminate();
  const client = new window.botpsyRuntime.ModelClient();
  window.clients[key] = client;
  const stages = [];
  const info = await client.load(folderUrl, {backend, dtype, onProgress: (p) => stages.push(p.stage)});
  return {backend: info.backend, dtype: info.dtype, threads: info.threads, reason: info.reason,
          cacheMode: info.cacheMode, architecture: info.architecture, eosTokenIds: info.eosTokenIds, stages,
          storage: info.storage};
}
"""

# Runs one generate on a loaded client; returns tokens, text and stats.
GENERATE = """
async ({key, prompt, options}) => {
  const client = window.clients[key];
  let stats = null;
  const tokens = [], pieces = [];
  for await (const chunk of client.generate(prompt, {...options, onStats: (s) => { stats = s; }})) {
    if (chunk.tokenId !== null) tokens.push(chunk.tokenId);
    pieces.push(chunk.text);
  }
  return {tokens, pieces, text: pieces.join(""), stats};
}
"""

# Like GENERATE, but keeps each token's logits in the page under `label` (for
# LOGIT_DIFF) instead of sending them back.
GENERATE_KEEPING_LOGITS = """
async ({key, label, prompt, options}) => {
  const client = window.clients[key];
  let stats = null;
  const tokens = [], logits = [];
  for await (const chunk of client.generate(prompt, {...options, returnLogits: true, onStats: (s) => { stats = s; }})) {
    if (chunk.tokenId === null) continue;
    tokens.push(chunk.tokenId);
    logits.push(chunk.logits);
  }
  window.keptLogits ??= {};
  window.keptLogits[label] = logits;
  return {tokens, stats};
}
"""

# The largest |difference| between the logits kept under two labels, over their common steps.
LOGIT_DIFF = """
([a, b]) => {
  const [left, right] = [window.keptLogits[a], window.keptLogits[b]];
  let max = 0;
  for (let step = 0; step < Math.min(left.length, right.length); step++) {
    for (let i = 0; i < left[step].length; i++) max = Math.max(max, Math.abs(left[step][i] - right[step][i]));
  }
  return max;
}
"""


def load(page, server, folder, key="model", backend="wasm", dtype="fp32"):
    return page.evaluate(LOAD, {"key": key, "folderUrl": f"{server}/models/{folder.name}/",
                                "backend": backend, "dtype": dtype})


def generate(page, prompt, key="model", **options):
    return page.evaluate(GENERATE, {"key": key, "prompt": prompt, "options": options})


def generate_keeping_logits(page, prompt, label, key="model", **options):
    return page.evaluate(GENERATE_KEEPING_LOGITS, {"key": key, "label": label, "prompt": prompt, "options": options})


def max_logit_diff(page, label_a, label_b):
    return page.evaluate(LOGIT_DIFF, [label_a, label_b])


@pytest.fixture(scope="session")
def runtime_driver():
    """load(page, server, folder, key=, backend=, dtype=), generate(page, prompt, key=, **options),
    generate_keeping_logits(page, prompt, label, key=, **options) and max_logit_diff(page, label_a, label_b)."""
    return types.SimpleNamespace(load=load, generate=generate, generate_keeping_logits=generate_keeping_logits,
                                 max_logit_diff=max_logit_diff)
