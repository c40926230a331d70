"""One agent for one page: what the JavaScript agent host calls into.

Every method takes and returns plain strings (JSON) so nothing but text crosses
the JS/Python boundary. Events of a turn go to the page through `host.emit`.
"""

from __future__ import annotations

import datetime
import importlib
import json
import pkgutil
from typing import Any

from . import bridge, outside_calls, tools as builtin_tools_package
from .agent import Agent, AgentOptions
from .chat_format import ChatFormat
from .grammar import TOOL_CALL_MODES
from .tool_selection import DEFAULT_ENABLED_TOOLS, check_enabled_tools
from .tooling import Settings, Tool, ToolContext, UserFile
from .tools import add_user_file, due_reminders

SETTING_NAMES = {"thinking": "thinking", "enabledTools": "enabled_tools",
                 "allowNetwork": "allow_network", "timezone": "timezone"}
OPTION_NAMES = {"temperature": "temperature", "maxSteps": "max_steps", "maxTokens": "max_tokens",
                "systemPrompt": "system_prompt", "maxResultChars": "max_result_chars", "toolCalls": "tool_calls"}


def builtin_tools() -> list[Tool]:
    """tools.builtin_tools() when the tools package offers it, else every Tool its modules define."""
    listed = getattr(builtin_tools_package, "builtin_tools", None)
    if listed:
        return list(listed())
    found: dict[str, Tool] = {}
    for module_info in pkgutil.iter_modules(builtin_tools_package.__path__):
        module = importlib.import_module(f"{builtin_tools_package.__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, Tool):
                found.setdefault(value.name, value)
    return list(found.values())


class AgentSession:
    def __init__(self, host: Any, chat_format: ChatFormat, include_builtin_tools: bool = True,
                 special_tokens: tuple[str, ...] = ()):
        self.host = bridge.connect(host)
        self._begun = False  # begin_turn() ran for the coming run_turn
        self._emit = bridge.emit_to(self.host)
        context = ToolContext(store=bridge.BridgeStore(self.host), settings=Settings(),
                              fetch=bridge.bridge_fetch(self.host),
                              run_python=bridge.bridge_run_python(self.host))
        self.agent = Agent(model=bridge.BridgeModel(self.host), chat_format=chat_format,
                           context=context, confirm=bridge.bridge_confirm(self.host),
                           options=AgentOptions(), special_tokens=tuple(special_tokens))
        for each in builtin_tools() if include_builtin_tools else []:
            self.agent.add_tool(each, enabled_by_default=each.name in DEFAULT_ENABLED_TOOLS)

    def tool_names(self) -> str:
        """Every registered tool: {name, description, parameters, enabled (the model sees it now),
        enabledByDefault (part of the default set)}."""
        active = {tool.name for tool in self.agent.active_tools()}
        return json.dumps([{**tool.spec()["function"], "enabled": tool.name in active,
                            "enabledByDefault": tool.name not in self.agent.off_by_default}
                           for tool in self.agent.tools.values()])

    def set_settings(self, settings_json: str) -> None:
        changes = json.loads(settings_json)
        unknown = set(changes) - set(SETTING_NAMES) - set(OPTION_NAMES)
        if unknown:
            raise ValueError(f"unknown agent settings {sorted(unknown)}; "
                             f"known: {sorted(SETTING_NAMES) + sorted(OPTION_NAMES)}")
        if "enabledTools" in changes:
            changes["enabledTools"] = check_enabled_tools(changes["enabledTools"], list(self.agent.tools))
        if "toolCalls" in changes:
            check_tool_calls(changes["toolCalls"], list(self.agent.tools))
            if changes["toolCalls"] is None:  # the model's default
                changes["toolCalls"] = self.default_tool_calls
        if changes.get("timezone") is not None and not isinstance(changes["timezone"], str):
            raise ValueError(f"timezone must be an IANA zone name or null, got {changes['timezone']!r}")
        for key, value in changes.items():
            if key in SETTING_NAMES:
                setattr(self.agent.context.settings, SETTING_NAMES[key], value)
            else:
                setattr(self.agent.options, OPTION_NAMES[key], value)

    def register_host_tool(self, spec_json: str) -> None:
        spec = json.loads(spec_json)
        self.agent.add_tool(bridge.host_tool(self.host, spec), pre_approved=not spec.get("confirm", True))

    def unregister_host_tool(self, name: str) -> None:
        """Forget a host tool (a page's WebMCP tool that went away); the built-in tools stay."""
        tool = self.agent.tools.get(name)
        if tool is None or tool.hints is not None:
            raise ValueError(f"unregisterTool: {name!r} is not a host tool")
        del self.agent.tools[name]
        self.agent.pre_approved.discard(name)
        self.agent.off_by_default.discard(name)

    def offered_tools(self) -> str:
        """The tools an outside agent (WebMCP) is offered, as JSON (outside_calls.offered_tools)."""
        return json.dumps(outside_calls.offered_tools(self.agent))

    async def call_for_outside_agent(self, call_id: str, name: str, arguments_json: str) -> str:
        """One call from an outside agent through the same checks as the model's; {ok, result} as JSON."""
        try:
            arguments = json.loads(arguments_json)
        except ValueError:
            arguments = arguments_json  # reported as not an object, by the argument check
        return json.dumps(await outside_calls.run_outside_call(self.agent, call_id, name, arguments, self._emit))

    async def add_user_files(self, files_json: str) -> None:
        """Files the user gave the page: text files are stored (IndexedDB in the browser), so
        the file tools still see them after a reload; every file is also in ctx.files."""
        for entry in json.loads(files_json):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
                raise ValueError(f"addUserFiles: every file needs a non-empty name, got {entry!r}")
            user_file = UserFile(name=entry["name"].strip(), size=int(entry.get("size", 0)),
                                 media_type=entry.get("type") or "text/plain", text=entry.get("text"))
            if user_file.text is not None:
                await add_user_file(self.agent.context.store, user_file.name, user_file.text, user_file.media_type)
            self.agent.context.files[user_file.name] = user_file

    async def due_reminders(self, now_iso: str = "") -> str:
        """Open todos whose due time has come (at now_iso, default now), soonest first, as JSON."""
        now = self.agent.context.now()
        if now_iso:
            try:
                now = datetime.datetime.fromisoformat(now_iso.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(f"dueReminders: {now_iso!r} is not an ISO 8601 time") from None
            if now.tzinfo is None:
                raise ValueError(f"dueReminders: {now_iso!r} needs a UTC offset (e.g. Z or +01:00)")
        return json.dumps(await due_reminders(self.agent.context.store, now))

    def begin_turn(self, stopped: bool = False) -> None:
        """Called synchronously when the page asks for a turn, before run_turn: forgets the
        last turn's cancel, keeps a Stop the page saw before its request was sent (stopped),
        and from here on every cancel() counts for this turn, even one that arrives before
        run_turn's coroutine first runs."""
        self.agent.reset_cancel()
        if stopped:
            self.agent.cancel()
        self._begun = True

    async def run_turn(self, user_text: str) -> str:
        """Run one turn, emitting every event; returns the final event as JSON."""
        final = {"type": "final", "text": "", "steps": 0}
        begun, self._begun = self._begun, False
        async for event in self.agent.run_turn(user_text, reset_cancel=not begun):
            self._emit(event)
            if event["type"] == "final":
                final = event
        return json.dumps(final)

    def logits_processors(self) -> str:
        """The next turn's first generation's logits processors (the tool-call grammar) as JSON:
        the page's warm-up hands them to the runtime, which compiles the grammar ahead."""
        return json.dumps(self.agent.logits_processors())

    def routed_logits_processors(self) -> str:
        """Agent.routed_logits_processors as JSON: the warm-up compiles these grammars after the prefill."""
        return json.dumps(self.agent.routed_logits_processors())

    def prompt_prefix(self) -> str:
        """What the next turn's prompts start with (Agent.render_prompt_prefix), for the page to prefill."""
        return self.agent.render_prompt_prefix()

    def cancel(self) -> None:
        self.agent.cancel()

    def new_chat(self) -> None:
        self.agent.new_chat()

    def export_conversation(self) -> str:
        return json.dumps(self.agent.export_conversation())

    def restore_conversation(self, data_json: str) -> None:
        self.agent.restore_conversation(json.loads(data_json))


def create_session(host: Any, tokenizer_config_json: str, manifest_json: str,
                   include_builtin_tools: bool = True, special_tokens_json: str = "[]") -> AgentSession:
    """special_tokens_json: the content of every added token in the folder's tokenizer.json
    (defused in untrusted text, py/botpsy_agent/safety.py)."""
    manifest = json.loads(manifest_json or "{}")
    chat_format = ChatFormat.from_model_files(json.loads(tokenizer_config_json), manifest)
    special_tokens = json.loads(special_tokens_json or "[]")
    if not isinstance(special_tokens, list) or not all(isinstance(token, str) for token in special_tokens):
        raise ValueError(f"special tokens must be a JSON list of strings, got {special_tokens_json[:80]!r}")
    session = AgentSession(host, chat_format, include_builtin_tools, tuple(special_tokens))
    # Constrained by default when the folder names its tool-call format; a format only guessed
    # from the template is left unconstrained unless the person asks (toolCalls).
    session.default_tool_calls = "auto" if manifest.get("tool_call_format") else "off"
    session.agent.options.tool_calls = session.default_tool_calls
    return session


def check_tool_calls(value: Any, tool_names: list[str]) -> None:
    """`toolCalls` as given by the page: one of TOOL_CALL_MODES, a registered tool's name, or
    None (the model's default)."""
    if value is not None and (not isinstance(value, str) or (value not in TOOL_CALL_MODES and value not in tool_names)):
        raise ValueError(f"toolCalls must be one of {', '.join(TOOL_CALL_MODES)}, a tool's name or null "
                         f"(the model's default), got {value!r}")
