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
          architecture: info.architecture, eosTokenIds: info.eosTokenIds, stages};
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


def load(page, server, folder, key="model", backend="wasm", dtype="fp32"):
    return page.evaluate(LOAD, {"key": key, "folderUrl": f"{server}/models/{folder.name}/",
                                "backend": backend, "dtype": dtype})


def generate(page, prompt, key="model", **options):
    return page.evaluate(GENERATE, {"key": key, "prompt": prompt, "options": options})


@pytest.fixture(scope="session")
def runtime_driver():
    """load(page, server, folder, key=, backend=, dtype=) and generate(page, prompt, key=, **options)."""
    return types.SimpleNamespace(load=load, generate=generate)
