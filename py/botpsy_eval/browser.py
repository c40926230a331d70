"""Greedy generation with the real browser runtime (web/runtime in headless Chromium).

One page, served by `botpsy-web serve`'s server, loads a dtype once and generates every
case's prompt with it (text in, as the agent sends it; greedy; the runtime's defaults
otherwise: prefix reuse and guessed tokens on, as in the app).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from botpsy_web.verify_browser import harness_page

from .generation import Generation, GenerationError

# What `botpsy-web eval` runs in the browser when no --dtype is named (those the folder has).
DEFAULT_DTYPES = ("fp32", "q8", "q4")

_LOAD = """
async ({folderUrl, backend, dtype}) => {
  window.botpsyEval?.client.terminate();
  const client = new window.botpsyRuntime.ModelClient();
  const info = await client.load(folderUrl, {backend, dtype});
  window.botpsyEval = {client};
  return {backend: info.backend, dtype: info.dtype, threads: info.threads, reason: info.reason};
}
"""

_GENERATE = """
async ({prompt, maxTokens, logitsProcessors}) => {
  const started = performance.now();
  let stats = null, text = "";
  const tokenIds = [];
  const options = {maxTokens, temperature: 0, logitsProcessors, onStats: (s) => { stats = s; }};
  for await (const chunk of window.botpsyEval.client.generate(prompt, options)) {
    if (chunk.tokenId !== null) tokenIds.push(chunk.tokenId);
    text += chunk.text ?? "";
  }
  return {text, tokenIds, promptTokens: stats.promptTokens, stopReason: stats.stopReason,
          seconds: (performance.now() - started) / 1000};
}
"""


class BrowserModel:
    """One dtype of the folder, loaded in the open harness page."""

    def __init__(self, page, folder_url: str, backend: str, dtype: str):
        self.page = page
        self.info = page.evaluate(_LOAD, {"folderUrl": folder_url, "backend": backend, "dtype": dtype})
        self.name = f"browser {self.info['dtype']}"

    def generate(self, prompt: str, max_tokens: int, logits_processors: list | None = None) -> Generation:
        from playwright.sync_api import Error as PlaywrightError

        try:
            result = self.page.evaluate(_GENERATE, {"prompt": prompt, "maxTokens": max_tokens,
                                                    "logitsProcessors": logits_processors or []})
        except PlaywrightError as error:
            raise GenerationError(first_line(error)) from None
        return Generation(result["text"], result["tokenIds"], result["promptTokens"], result["stopReason"],
                          result["seconds"])

    def close(self) -> None:
        self.page.evaluate("() => { window.botpsyEval?.client.terminate(); window.botpsyEval = undefined; }")


def first_line(error) -> str:
    """The runtime's own message, without the browser's stack."""
    return str(error).splitlines()[0].removeprefix("Page.evaluate: ").removeprefix("Error: ")


@contextmanager
def browser_page(folder: Path):
    """A harness page in headless Chromium that can load `folder` (served at /models/<name>/).
    Yields (page, folder_url)."""
    folder = Path(folder).resolve()
    with harness_page(folder) as (page, base_url):
        yield page, f"{base_url}/models/{folder.name}/"
