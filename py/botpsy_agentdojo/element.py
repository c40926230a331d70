"""One AgentDojo pipeline element that is botpsy-web's agent.

`BotPsyElement.query` runs `botpsy_agent.Agent.run_turn` (our chat format, parser, grammar
options, safety policy and data marking) over the suite's functions as our tools
(tools.suite_tools), answers the gate's confirmations with the case's approver, and hands
AgentDojo back the conversation as its messages. Only calls that ran on the environment appear
in those messages (tools.EnvironmentSession.executed): AgentDojo's trace-based checks read the
assistant messages' tool calls, and a call our gate refused, or that failed our argument
checks, was never executed. The record also says whether the final answer carried the agent's
untrusted_reads (the mark the page shows on an answer written after reading untrusted content).

The loop is driven without an event loop (`run_to_completion`): nothing in it waits on I/O here,
and the browser model's Playwright calls are synchronous, which an asyncio loop would forbid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
from agentdojo.functions_runtime import FunctionCall
from agentdojo.types import text_content_block_from_string as text_block
from botpsy_agent.agent import Agent, AgentOptions
from botpsy_agent.chat_format import ChatFormat

from .approvers import GroundTruth, approver
from .tools import EnvironmentSession, suite_tools

PIPELINE_NAME = "local-botpsy-web"  # AgentDojo's attacks address the model by the name it finds here ("Local model")


def run_to_completion(coroutine):
    """The coroutine's result, run without an event loop; it must never really wait."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("the agent waited on something that needs an event loop")


@dataclass
class CaseSetup:
    """What one run needs besides AgentDojo's arguments: the tasks, the approver, the model."""

    suite_name: str
    user_task: Any
    injection_task: Any | None
    approver: str
    # (tool specs, ground truth) -> a botpsy_agent Model for this case
    make_model: Callable[[list[dict], GroundTruth, Any, Any], Any]
    max_steps: int | None = None  # None: enough to make the user task's calls one per reply, then answer


@dataclass
class RunRecord:
    """What happened in one run, for the report."""

    confirmations: int = 0
    approved: int = 0
    executed: list[str] = field(default_factory=list)   # names of the calls that ran, in order
    refused: list[str] = field(default_factory=list)    # names of the calls that did not
    requested: list[tuple[str, dict]] = field(default_factory=list)  # every call the model made, in order
    steps: int = 0
    error: str | None = None
    # The final event carried untrusted_reads: the page would show the answer with a notice
    # naming them (web/ui/chat-view.js). What they were, as "tool (source)", in order.
    answer_marked: bool = False
    untrusted_reads: list[str] = field(default_factory=list)


def _pairs(calls) -> tuple[tuple[str, dict], ...]:
    return tuple((call.function, dict(call.args)) for call in calls)


class BotPsyElement(BasePipelineElement):
    """Set `case` before each run; `record` then describes the run."""

    name = PIPELINE_NAME

    def __init__(self, chat_format: ChatFormat, special_tokens: tuple[str, ...] = (),
                 options: AgentOptions | None = None):
        self.chat_format = chat_format
        self.special_tokens = tuple(special_tokens)
        self.options = options or AgentOptions()
        self.case: CaseSetup | None = None
        self.record = RunRecord()

    def query(self, query: str, runtime, env=None, messages: Sequence = (), extra_args: dict = {}):
        if self.case is None:
            raise RuntimeError("BotPsyElement.case must be set before AgentDojo runs a task")
        case = self.case
        truth = GroundTruth(
            _pairs(case.user_task.ground_truth(env.model_copy(deep=True))),
            _pairs(case.injection_task.ground_truth(env.model_copy(deep=True))) if case.injection_task else ())
        session = EnvironmentSession(runtime, env)
        tools = suite_tools(case.suite_name, list(runtime.functions.values()), session)
        decide = approver(case.approver)
        record = self.record = RunRecord()

        async def confirm(request: dict) -> dict:
            record.confirmations += 1
            approved = decide(request, truth, agent.tools[request["name"]].parameters)
            record.approved += approved
            return {"approved": approved}

        max_steps = case.max_steps or max(12, len(truth.user_calls) + 3)
        options = AgentOptions(**{**self.options.__dict__, "max_steps": max_steps})
        agent = Agent(model=case.make_model([tool.spec() for tool in tools], truth, case.user_task,
                                            case.injection_task),
                      chat_format=self.chat_format, confirm=confirm, options=options,
                      special_tokens=self.special_tokens)
        for tool in tools:
            agent.add_tool(tool)

        async def turn():
            final = None
            async for event in agent.run_turn(query):
                if event["type"] == "tool_call":
                    session.running_call_id = event["id"]
                elif event["type"] == "error":
                    record.error = event["message"]
                elif event["type"] == "final":
                    final = event
            return final

        final = run_to_completion(turn())
        record.steps = final["steps"] if final else 0
        reads = (final or {}).get("untrusted_reads") or []
        record.answer_marked = bool(reads)
        record.untrusted_reads = [f"{read['name']} ({read['source']})" for read in reads]
        ran = {call.call_id for call in session.executed}
        for message in agent.conversation.messages:
            for call in message.get("tool_calls") or []:
                record.requested.append((call["function"]["name"], call["function"]["arguments"]))
                (record.executed if call["id"] in ran else record.refused).append(call["function"]["name"])
        return query, runtime, env, [*messages, *agentdojo_messages(query, agent, session)], extra_args


def agentdojo_messages(query: str, agent: Agent, session: EnvironmentSession) -> list[dict]:
    """The conversation as AgentDojo's ChatMessages, holding only the calls that ran (with the
    arguments they ran with) and their results; it always ends with an assistant message."""
    executed = {call.call_id: call for call in session.executed}
    messages: list[dict] = [{"role": "user", "content": [text_block(query)]}]
    for message in agent.conversation.messages:
        if message["role"] == "assistant":
            calls = [executed[call["id"]] for call in message.get("tool_calls") or [] if call["id"] in executed]
            messages.append({"role": "assistant", "content": [text_block(message.get("content") or "")],
                             "tool_calls": [FunctionCall(function=call.function, args=call.arguments, id=call.call_id)
                                            for call in calls] or None})
        elif message["role"] == "tool" and message.get("tool_call_id") in executed:
            call = executed[message["tool_call_id"]]
            messages.append({"role": "tool", "content": [text_block(message["content"])],
                             "tool_call_id": call.call_id, "error": call.error,
                             "tool_call": FunctionCall(function=call.function, args=call.arguments, id=call.call_id)})
    if messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": [text_block("")], "tool_calls": None})
    return messages

