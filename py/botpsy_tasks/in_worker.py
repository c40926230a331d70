"""The agent worker's side of a task (Pyodide).

web/agent/agent-worker.js's `evalTask` calls run_task with the worker's agent session: the task
runs on a copy of that session's agent (session.py), whose model is the page's ModelClient
through the same bridge the app's agent uses, and whose store is the session's IndexedDB store
under a prefix of the task's own, emptied when the task ends.
"""

from __future__ import annotations

import json

from botpsy_agent.bridge import BridgeModel

from . import session as task_session


async def run_task(session, task_json: str, options_json: str) -> str:
    """session: the worker's botpsy_agent.browser_session.AgentSession; task_json: data.Task.data;
    options_json: {"run": a name for this run's stored data, "temperature"}. Returns the record as JSON."""
    task, options = json.loads(task_json), json.loads(options_json)

    def on_step(progress: dict) -> None:  # an agent event for the page: the harness prints it
        session.host.emit(json.dumps({"type": "task_step", **progress}))

    store = task_session.TaskStore(session.agent.context.store, f"tasks/{options['run']}/{task['id']}/")
    try:
        record = await task_session.run_task(session.agent, BridgeModel(session.host), store, task,
                                             float(options.get("temperature", 0.0)), on_step)
    finally:
        await store.clear()
    return json.dumps(record, ensure_ascii=False, default=str)
