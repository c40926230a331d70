"""The tool API: `@tool` turns a typed, documented function into a `Tool`.

    @tool(side_effects=True)
    async def notes_delete(ctx: ToolContext, note_id: str) -> bool:
        '''Delete one note.

        Args:
            note_id: The id that notes_list or notes_search returned.
        '''

The JSON schema comes from the type hints and the docstring's Args: section;
a missing hint or an undocumented argument raises TypeError at definition time.
A first parameter named `ctx` (a ToolContext) is injected by the loop and is not
part of the schema. Host pages register JavaScript tools with
`Tool.from_json_schema`; the loop cannot tell the two kinds apart.
"""

from __future__ import annotations

import datetime as _datetime
import enum
import inspect
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from .docstrings import parse_docstring
from .schema import UnsupportedType, is_optional, schema_for_hint, to_python_value
from .storage import MemoryStore, Store


class ToolError(Exception):
    """A failure the user or model should read (bad input, missing note, ...)."""


@dataclass
class Settings:
    """What the user switched on. Tools read these through `ctx.settings`."""

    allow_network: bool = False
    thinking: bool = False
    enabled_tools: list[str] | None = None  # None: every registered tool
    timezone: str | None = None  # the user's IANA zone (the browser's Intl setting)


@dataclass
class UserFile:
    """A file the user opened or dropped into the page; text files only carry `text`."""

    name: str
    size: int
    media_type: str = "text/plain"
    text: str | None = None


async def _network_disabled(url: str) -> str:
    raise ToolError("network access is off; the user can enable fetch_url in the settings")


def _utc_now() -> _datetime.datetime:
    return _datetime.datetime.now(_datetime.timezone.utc)


# A parameter name is written into the prompt and the call format (`<parameter=NAME>`): letters
# (any script), digits, "_", ".", "-", "$"; nothing that could close a tag or start another.
_PARAMETER_NAME = re.compile(r"(?!\d)[\w$][\w.$-]{0,127}")


def _check_parameter_names(tool_name: str, parameters: dict) -> None:
    properties, required = parameters["properties"], parameters.get("required", [])
    if not isinstance(properties, dict):
        raise ValueError(f"tool {tool_name!r}: 'properties' must be an object of parameter schemas")
    for key, schema in properties.items():
        if not _PARAMETER_NAME.fullmatch(key):
            raise ValueError(f"tool {tool_name!r}: parameter name {key!r} must be letters, digits, '_', '.', '-' "
                             "or '$' (at most 128, not starting with a digit, '.' or '-')")
        if not isinstance(schema, dict):
            raise ValueError(f"tool {tool_name!r}: the schema of parameter {key!r} must be an object")
    if not isinstance(required, list) or any(key not in properties for key in required):
        raise ValueError(f"tool {tool_name!r}: 'required' must list parameter names from 'properties', "
                         f"got {required!r}")


@dataclass
class ToolContext:
    """What a tool may use besides its arguments. Tests build one with fakes."""

    store: Store = field(default_factory=MemoryStore)
    settings: Settings = field(default_factory=Settings)
    fetch: Callable[[str], Awaitable[str]] = _network_disabled
    # run_python's sandbox: request -> answer dict. None: a subprocess under CPython (tools/python_sandbox.py).
    run_python: Callable[[Any], Awaitable[dict]] | None = None
    now: Callable[[], _datetime.datetime] = _utc_now
    files: dict[str, UserFile] = field(default_factory=dict)


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict
    handler: Callable[..., Any]
    side_effects: bool = False
    untrusted_output: bool = False
    takes_context: bool = False
    # Its arguments leave this page: a host page's tool (its own JavaScript, or one it registered
    # through WebMCP) receives what the model wrote, whatever the page may then do with it.
    sends_elsewhere: bool = False
    # The argument that says when the thing it makes happens (an event's start, a todo's due
    # time): the person's own words about when win over what the model wrote there (said_when.py).
    said_when: str | None = None
    # Python tools: argument name -> type hint (to build Enum members etc.).
    # None for JSON-schema (host) tools, whose handler takes the arguments dict.
    hints: dict[str, Any] | None = field(default=None, repr=False)

    @classmethod
    def from_json_schema(cls, name: str, description: str, parameters: dict,
                         handler: Callable[[dict], Any], side_effects: bool = False,
                         untrusted_output: bool = False, sends_elsewhere: bool = False) -> "Tool":
        """A tool defined elsewhere (a host page's JavaScript): handler(arguments) -> result."""
        if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"tool name must be letters, digits, '_' or '-', got {name!r}")
        if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
            raise ValueError(f"tool {name!r}: parameters must be a JSON schema of type object")
        parameters = {"type": "object", "properties": {}, **parameters}
        _check_parameter_names(name, parameters)
        return cls(name=name, description=description or "", parameters=parameters,
                   handler=handler, side_effects=side_effects,
                   untrusted_output=untrusted_output, sends_elsewhere=sends_elsewhere)

    async def call(self, ctx: ToolContext, arguments: dict) -> Any:
        """Run the tool with already validated JSON arguments."""
        if self.hints is not None:
            # null for an argument with a default means "use the default"
            arguments = {name: to_python_value(value, self.hints.get(name))
                         for name, value in arguments.items()
                         if value is not None or is_optional(self.hints.get(name))}
            result = (self.handler(ctx, **arguments) if self.takes_context
                      else self.handler(**arguments))
        else:
            result = self.handler(arguments)
        if inspect.isawaitable(result):
            result = await result
        return result

    def spec(self) -> dict:
        """The OpenAI-style entry chat templates expect in `tools=`."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


def _build_tool(function: Callable, side_effects: bool, untrusted_output: bool,
                name: str | None, said_when: str | None = None) -> Tool:
    tool_name = name or function.__name__
    description, documented = parse_docstring(function.__doc__)
    if not description:
        raise TypeError(f"tool {tool_name!r} needs a docstring saying what it does")
    try:
        hints = typing.get_type_hints(function)
    except Exception as error:
        raise TypeError(f"tool {tool_name!r}: cannot resolve its type hints: {error}") from None
    parameters = list(inspect.signature(function).parameters.values())
    takes_context = bool(parameters) and parameters[0].name == "ctx"
    if takes_context:
        if hints.get("ctx") is not ToolContext:
            raise TypeError(f"tool {tool_name!r}: parameter 'ctx' must be annotated ToolContext")
        parameters = parameters[1:]
    properties, required, argument_hints = {}, [], {}
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"tool {tool_name!r}: *args/**kwargs ('{parameter.name}') are not allowed")
        if parameter.name not in hints:
            raise TypeError(f"tool {tool_name!r}: argument '{parameter.name}' has no type hint")
        if parameter.name not in documented:
            raise TypeError(f"tool {tool_name!r}: argument '{parameter.name}' is not documented "
                            "in the docstring's Args: section")
        hint = hints[parameter.name]
        try:
            schema = schema_for_hint(hint)
        except UnsupportedType as error:
            raise TypeError(f"tool {tool_name!r}: argument '{parameter.name}': {error}") from None
        schema["description"] = documented[parameter.name]
        if parameter.default is not parameter.empty:
            default = parameter.default
            schema["default"] = default.value if isinstance(default, enum.Enum) else default
        elif not is_optional(hint):
            required.append(parameter.name)
        properties[parameter.name] = schema
        argument_hints[parameter.name] = hint
    if said_when is not None and argument_hints.get(said_when) is not str:
        raise TypeError(f"tool {tool_name!r}: said_when names {said_when!r}, which is not one of its str arguments")
    schema = {"type": "object", "properties": properties, "required": required}
    return Tool(name=tool_name, description=description, parameters=schema, handler=function,
                side_effects=side_effects, untrusted_output=untrusted_output,
                takes_context=takes_context, hints=argument_hints, said_when=said_when)


def tool(function: Callable | None = None, *, side_effects: bool = False,
         untrusted_output: bool = False, name: str | None = None, said_when: str | None = None):
    """Make a Tool from a function; usable bare (`@tool`) or with options (`@tool(...)`)."""
    def decorate(inner: Callable) -> Tool:
        return _build_tool(inner, side_effects, untrusted_output, name, said_when)
    return decorate(function) if function is not None else decorate
