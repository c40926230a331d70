"""Calls from an outside agent: the browser's own assistant calling the page's tools (WebMCP,
web/webmcp/). Such an agent may be a cloud model that sends whatever it reads to its own
servers, and it may be obeying a page it read elsewhere.

They take the model's path (the same tools, schemas, argument checks, confirmation through the
page, provenance and marking of third-party text) with a stricter gate: every tool that acts or
reads the person's own data asks first, pre-approved or not; only pure functions answer at once.
What an outside agent stores is marked as coming from it (provenance.py), so when BotPsy's own
model reads it back later it reads data, not instructions. Network tools are not offered: an
outside agent has its own network. Nothing of this touches the conversation.

Events go to the page like the loop's (agent.py), each with "caller": "outside_agent", so the
page can show a card saying an outside agent asked.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable

from .provenance import ProvenanceStore, stored_data_source
from .results import cap_length, error_text, result_text
from .safety import NETWORK_TOOLS, mark_untrusted
from .tooling import Tool, ToolError
from .validation import check_arguments

OUTSIDE_AGENT = "an outside agent (WebMCP)"
CALLER = "outside_agent"
# They read nothing of the person's and change nothing: the only tools that run without asking.
PURE_TOOLS = frozenset({"calculator", "convert_units", "current_time", "convert_time", "date_difference", "date_add"})


def offered_tools(agent) -> list[dict]:
    """What an outside agent is offered: the tools the model sees now, with the very specs the
    model gets (Tool.spec), and read_only exactly for those without side effects."""
    return [{**tool.spec()["function"], "read_only": not tool.side_effects}
            for tool in agent.active_tools() if tool.name not in NETWORK_TOOLS]


def confirmation_reason(tool: Tool) -> str | None:
    """Why an outside agent's call of `tool` needs the person's approval, or None for a pure function."""
    if tool.side_effects:
        return "an outside agent asked, and it changes your data"
    if tool.name in PURE_TOOLS:
        return None
    return "an outside agent asked to read your data, and may send what it reads off this device"


async def _no_network(url: str) -> str:
    raise ToolError("an outside agent's call may not use the network")


async def run_outside_call(agent, call_id: str, name: Any, arguments: Any, emit: Callable[[dict], None]) -> dict:
    """Run one call from an outside agent; returns {"ok", "result"} (result: the text it gets)."""
    offered = {tool.name: tool for tool in agent.active_tools() if tool.name not in NETWORK_TOOLS}
    tool = offered.get(name) if isinstance(name, str) else None
    tagged = {"caller": CALLER}
    emit({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments, "error": None, **tagged})
    problem = None
    if tool is None:
        problem = (f"Error: UnknownTool: there is no tool named {name!r} on offer. "
                   f"Offered tools: {', '.join(offered) or 'none'}")
    else:
        issues = check_arguments(arguments, tool.parameters)
        if issues:
            problem = f"Error: InvalidArguments for {tool.name}: {'; '.join(issues)}"
    if problem is None:
        reason = confirmation_reason(tool)
        if reason:
            request = {"id": call_id, "name": tool.name, "arguments": arguments, "reason": reason,
                       "description": tool.description, **tagged}
            emit({"type": "confirmation", **request})
            decision = await agent.confirm(request) or {}
            if not decision.get("approved"):
                problem = f"Error: Denied: the person did not allow {tool.name} with these arguments."
            elif decision.get("arguments") is not None:
                arguments = decision["arguments"]
                issues = check_arguments(arguments, tool.parameters)
                problem = f"Error: InvalidArguments: {'; '.join(issues)}" if issues else None
    started = time.monotonic()
    source, provenance = None, {}
    if problem is None:
        store = ProvenanceStore(agent.context.store, OUTSIDE_AGENT)
        try:
            output = result_text(await tool.call(replace(agent.context, store=store, fetch=_no_network), arguments))
            ok = True
        except Exception as error:
            output, ok = error_text(error), False
        if store.stamped:
            provenance["stored_marked"] = OUTSIDE_AGENT
        if tool.untrusted_output:
            source = f"the tool {tool.name}"
        elif store.read_from:
            source = stored_data_source(store.read_from)
        if source:
            provenance["untrusted_source"] = source
    else:
        output, ok = problem, False
    output = cap_length(output, agent.options.max_result_chars)
    if source:  # third-party text is data for the outside agent too
        output = mark_untrusted(output, source, agent.special_tokens)
    emit({"type": "tool_result", "id": call_id, "name": name, "ok": ok, "result": output,
          "duration_ms": round((time.monotonic() - started) * 1000, 1), "untrusted": source is not None,
          **provenance, **tagged})
    return {"ok": ok, "result": output}
