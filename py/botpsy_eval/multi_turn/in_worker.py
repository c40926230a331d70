"""The agent worker's side of a multi-turn case (Pyodide).

web/agent/agent-worker.js's `evalMultiTurnCase` calls run_case with the worker's agent
session: the case's environment is built here, in the worker's Pyodide, from the classes
the eval's bundle carries (bundle.py), and the conversation's model is the page's
ModelClient through the same bridge the app's agent uses (botpsy_agent.bridge.BridgeModel).
"""

from __future__ import annotations

import json

from botpsy_agent.bridge import BridgeModel

from .conversation import run_conversation


async def run_case(session, case_json: str, settings_json: str) -> str:
    """session: the worker's botpsy_agent.browser_session.AgentSession (its chat format and
    host); case_json: data.MultiTurnCase.for_the_agent(); returns the transcript as JSON."""
    case = json.loads(case_json)

    def on_step(progress: dict) -> None:  # an agent event for the page: the eval prints it
        session.host.emit(json.dumps({"type": "multi_turn_step", "case_id": case["id"], **progress}))

    transcript = await run_conversation(case, BridgeModel(session.host), session.agent.chat_format,
                                        json.loads(settings_json), on_step)
    return json.dumps(transcript, ensure_ascii=False, default=str)
