"""AgentDojo's functions as botpsy_agent tools, over one AgentDojo environment.

The schema of each tool comes from the function's own signature and docstring, the way
`@tool` builds ours: the JSON schema of every type hint by `botpsy_agent.schema.schema_for_hint`,
each argument's description from the docstring (as AgentDojo's `make_function` parsed it), the
defaults from the signature. Whether a tool acts or reads is the suite's declaration
(declarations.py). A call that reaches AgentDojo's runtime is recorded in `EnvironmentSession.executed`
(what ran, with the arguments it ran with): the trace AgentDojo scores is built from that record
only, so a call our gate refused, or one with invalid arguments, never counts as executed.
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from typing import Any

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from botpsy_agent.schema import UnsupportedType, schema_for_hint
from botpsy_agent.tooling import Tool, ToolError

from .declarations import declaration_for


@dataclass
class ExecutedCall:
    call_id: str | None
    function: str
    arguments: dict
    output: str
    error: str | None


@dataclass
class EnvironmentSession:
    """One query's AgentDojo runtime and environment, and the calls that ran on it."""

    runtime: Any            # agentdojo FunctionsRuntime
    environment: Any        # agentdojo TaskEnvironment, changed in place by the acting tools
    executed: list[ExecutedCall] = field(default_factory=list)
    running_call_id: str | None = None  # the agent's id of the call being run (set by the pipeline element)

    def run(self, function: str, arguments: dict) -> str:
        result, error = self.runtime.run_function(self.environment, function, arguments)
        output = "" if error else tool_result_to_str(result)
        self.executed.append(ExecutedCall(self.running_call_id, function, dict(arguments), output, error))
        if error:
            raise ToolError(error)
        return output


def parameters_schema(function) -> dict:
    """The JSON schema of an AgentDojo Function's arguments (its environment dependencies are not
    arguments: AgentDojo's runtime fills them in)."""
    hints = typing.get_type_hints(function.run)
    signature = inspect.signature(function.run)
    properties, required = {}, []
    for name, info in function.parameters.model_fields.items():
        try:
            schema = schema_for_hint(hints[name])
        except UnsupportedType as error:
            raise TypeError(f"AgentDojo tool {function.name!r}: argument {name!r}: {error}") from None
        schema["description"] = info.description or ""
        default = signature.parameters[name].default
        if default is inspect.Parameter.empty:
            required.append(name)
        else:
            schema["default"] = getattr(default, "value", default)
        properties[name] = schema
    return {"type": "object", "properties": properties, "required": required}


def suite_tools(suite_name: str, functions, session: EnvironmentSession) -> list[Tool]:
    """Every function of the suite as a Tool whose calls run on `session`."""
    declaration = declaration_for(suite_name)
    tools = []
    for function in functions:
        kind = declaration.kind_of(function.name)
        tools.append(Tool.from_json_schema(
            function.name, function.description, parameters_schema(function), _handler(session, function.name),
            side_effects=kind == "acts", untrusted_output=kind != "reads_trusted"))
    return tools


def _handler(session: EnvironmentSession, name: str):
    def run(arguments: dict) -> str:
        # null means "not given" (as for our own tools): AgentDojo then uses the signature's default
        return session.run(name, {key: value for key, value in arguments.items() if value is not None})
    return run
