"""Multi-turn cases in headless Chromium: the model in the runtime's worker, the agent and the
case's environment in Pyodide in the agent worker (web/agent/agent-worker.js).

The harness page loads one dtype of the folder in a ModelClient and starts an AgentHost over
it with the eval's bundle (static/build/agent-eval-py.zip: the agent plus BFCL's environment
classes and mpmath); each case is one `evalMultiTurnCase` call to the agent worker, which
builds the environment, runs the conversation and returns its transcript.
"""

from __future__ import annotations

import json
from typing import Callable

from ..browser import first_line

_OPEN = """
async ({folderUrl, backend, dtype, bundleUrl}) => {
  window.botpsyMultiTurn?.agent.terminate();
  window.botpsyMultiTurn?.client.terminate();
  const {AgentHost} = await import("/web/agent/agent-host.js");
  const client = new window.botpsyRuntime.ModelClient();
  const info = await client.load(folderUrl, {backend, dtype});
  // Each generation's progress reaches Python as a console line (BrowserConversations.on_step).
  const onEvent = (event) => {
    if (event.type === "multi_turn_step") console.log("botpsy-multi-turn-step " + JSON.stringify(event));
  };
  const agent = await AgentHost.create({model: client, modelUrl: folderUrl, storeName: "botpsy-eval-multi-turn",
                                        includeBuiltinTools: false, bundleUrl, onEvent});
  window.botpsyMultiTurn = {client, agent};
  return {backend: info.backend, dtype: info.dtype, threads: info.threads, reason: info.reason};
}
"""

_RUN_CASE = """
({caseJson, settingsJson}) => window.botpsyMultiTurn.agent.worker.call("evalMultiTurnCase", {caseJson, settingsJson})
"""

_CLOSE = """
() => {
  window.botpsyMultiTurn?.agent.terminate();
  window.botpsyMultiTurn?.client.terminate();
  window.botpsyMultiTurn = undefined;
}
"""


class BrowserConversations:
    """One dtype of the folder with an agent worker, in the open harness page."""

    def __init__(self, page, folder_url: str, backend: str, dtype: str, bundle_url: str,
                 on_step: Callable[[dict], None] = lambda progress: None):
        self.page = page
        self._listener = lambda message: _forward_step(message, on_step)
        page.on("console", self._listener)
        self.info = page.evaluate(_OPEN, {"folderUrl": folder_url, "backend": backend, "dtype": dtype,
                                          "bundleUrl": bundle_url})
        self.name = f"browser {self.info['dtype']}"

    def run_case(self, case: dict, settings: dict) -> dict:
        """The case's transcript; a failure of the page or worker becomes the transcript's error."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            return self.page.evaluate(_RUN_CASE, {"caseJson": json.dumps(case, ensure_ascii=False),
                                                  "settingsJson": json.dumps(settings)})
        except PlaywrightError as error:
            return {"case_id": case["id"], "category": case["category"], "turns": [], "forced_quit": False,
                    "error": f"the agent worker failed: {first_line(error)}"}

    def close(self) -> None:
        self.page.remove_listener("console", self._listener)
        self.page.evaluate(_CLOSE)


def _forward_step(message, on_step: Callable[[dict], None]) -> None:
    prefix = "botpsy-multi-turn-step "
    if message.text.startswith(prefix):
        on_step(json.loads(message.text[len(prefix):]))
