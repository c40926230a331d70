"""Tasks in headless Chromium: the model in the runtime's worker, the agent in the agent worker's
Pyodide (web/agent/agent-worker.js, `evalTask`), as the page runs them.

The harness page loads one dtype of the folder in a ModelClient and starts an AgentHost over it
(the built-in tools, IndexedDB, the folder's chat template and grammar) with the tasks' bundle;
then it runs the page's warm-up prefill once (the system prompt and tools, as the page does
after a load), so each task's seconds are those of a page that is ready, not of a first load.
Each task is one `evalTask` call; its generations' runtime stats, added up, come back with it.
"""

from __future__ import annotations

import json
from typing import Callable

from botpsy_eval.browser import first_line

_OPEN = """
async ({folderUrl, backend, dtype, bundleUrl}) => {
  window.botpsyTasks?.agent.terminate();
  window.botpsyTasks?.client.terminate();
  const {AgentHost} = await import("/web/agent/agent-host.js");
  const client = new window.botpsyRuntime.ModelClient();
  const info = await client.load(folderUrl, {backend, dtype});
  // Each generation's progress reaches Python as a console line (BrowserTasks.on_step).
  const onEvent = (event) => {
    if (event.type === "task_step") console.log("botpsy-task-step " + JSON.stringify(event));
  };
  const agent = await AgentHost.create({model: client, modelUrl: folderUrl, storeName: "botpsy-tasks",
                                        bundleUrl, onEvent});
  window.botpsyTasks = {client, agent};
  // The page's warm-up (AgentHost.warmUp), without storing the state in the browser.
  const started = performance.now();
  const prompt = await agent.worker.call("promptPrefix");
  const logitsProcessors = await agent.worker.call("logitsProcessors");
  const warm = await client.prefill(prompt, {persist: false, logitsProcessors});
  return {backend: info.backend, dtype: info.dtype, threads: info.threads, reason: info.reason,
          warmUpSeconds: (performance.now() - started) / 1000, warmUpTokens: warm.promptTokens};
}
"""

_RUN_TASK = """
async ({taskJson, optionsJson}) => {
  const {agent} = window.botpsyTasks;
  agent.turnStats = null;
  const record = await agent.worker.call("evalTask", {taskJson, optionsJson});
  record.runtime = agent.turnStats;  // the task's generations added up (web/agent/turn-stats.js)
  return record;
}
"""

_CLOSE = """
() => {
  window.botpsyTasks?.agent.terminate();
  window.botpsyTasks?.client.terminate();
  window.botpsyTasks = undefined;
}
"""


class BrowserTasks:
    """One dtype of the folder with an agent worker, in the open harness page."""

    def __init__(self, page, folder_url: str, backend: str, dtype: str, bundle_url: str, run_name: str,
                 on_step: Callable[[dict], None] = lambda progress: None):
        self.page = page
        self.run_name = run_name
        self._listener = lambda message: _forward_step(message, on_step)
        page.on("console", self._listener)
        self.info = page.evaluate(_OPEN, {"folderUrl": folder_url, "backend": backend, "dtype": dtype,
                                          "bundleUrl": bundle_url})

    def run_task(self, task: dict, temperature: float) -> dict:
        """The task's record; a failure of the page or the worker becomes the record's error."""
        from playwright.sync_api import Error as PlaywrightError

        options = {"run": self.run_name, "temperature": temperature}
        try:
            return self.page.evaluate(_RUN_TASK, {"taskJson": json.dumps(task, ensure_ascii=False),
                                                  "optionsJson": json.dumps(options)})
        except PlaywrightError as error:
            return {"task_id": task["id"], "category": task["category"], "turns": [],
                    "error": f"the agent worker failed: {first_line(error)}"}

    def close(self) -> None:
        self.page.remove_listener("console", self._listener)
        self.page.evaluate(_CLOSE)


def _forward_step(message, on_step: Callable[[dict], None]) -> None:
    prefix = "botpsy-task-step "
    if message.text.startswith(prefix):
        on_step(json.loads(message.text[len(prefix):]))
