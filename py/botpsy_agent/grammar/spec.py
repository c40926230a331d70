"""From the tools the prompt offers to the runtime's "tool-call-grammar" logits processor.

The constraint is an xgrammar structural tag: free text (and <think>) stays free until
the model writes <tool_call> (one special token in BotPsy's vocabulary, several ordinary
tokens in SmolLM2's: the tag matches the text, so both work); from there to </tool_call>
every token must fit the call grammar of the model's format (qwen_xml.py, hermes_json.py);
then text is free again and another call may follow. The end-of-turn token is impossible
inside a call. In the Hermes JSON format, "auto" also constrains a call opened without tags
at the very start of the reply, a bare `{"name": "` or a ```json fence, as the parser reads
one (parsing/json_reply.py), and "none" forbids any object, array or fence there: the processor
watches the reply's start and then applies that call's own grammar, or refuses such a first
character (`untaggedCall`, reply_openings.py). The model
worker compiles and applies it all (web/runtime/grammar/).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .ebnf import Rules, text_until
from .hermes_json import hermes_json_call, hermes_json_rules
from .json_values import GrammarNotes
from .qwen_xml import qwen_xml_call
from .reply_openings import untagged_call_grammar, untagged_call_watch

PROCESSOR_NAME = "tool-call-grammar"
CALL_OPEN, CALL_CLOSE, THINK_CLOSE = "<tool_call>", "</tool_call>", "</think>"
# "auto": calls constrained, text free; "required": the reply starts with a call;
# "none": no call may open; "off": no constraint at all; any other value names the one
# tool the reply must start by calling.
TOOL_CALL_MODES = ("auto", "required", "none", "off")
CALL_GRAMMARS = {"qwen3_coder_xml": qwen_xml_call, "hermes_json": hermes_json_call}
_MAX_BUILT = 8
_built: dict[str, str] = {}  # recent specs, as JSON, oldest first


@dataclass(frozen=True)
class ToolSchema:
    name: str
    parameters: dict


def tool_schemas(tools: list[dict]) -> list[ToolSchema]:
    """Tools as the chat template gets them ({"type": "function", "function": {...}}) or
    flat ({name, description, parameters}); a malformed one is an error naming it."""
    if not isinstance(tools, (list, tuple)):
        raise TypeError(f"tools must be a list of tool schemas, got {type(tools).__name__}")
    found = []
    for index, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name or not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"tools[{index}] needs a name of letters, digits, '_' or '-', got {tool!r:.80}")
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
            raise ValueError(f"tool {name!r}: parameters must be a JSON schema of type object")
        found.append(ToolSchema(name, parameters))
    names = [tool.name for tool in found]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"tools offered twice: {duplicates}")
    return found


def structural_tag(tools: list[dict], tool_call_format: str, mode: str = "auto",
                   thinking: bool = False, dialect: str = "web") -> tuple[dict, list[str]]:
    """The structural tag for these tools and mode, and notes on what stays unconstrained.
    thinking=True: the prompt left <think> open (the reply's calls come after </think>).
    dialect: the xgrammar build that compiles it (ebnf.DIALECTS; the runtime's is "web")."""
    if tool_call_format not in CALL_GRAMMARS:
        raise ValueError(f"unknown tool_call_format {tool_call_format!r}; expected one of {sorted(CALL_GRAMMARS)}")
    schemas = tool_schemas(tools)
    names = [tool.name for tool in schemas]
    if not isinstance(mode, str) or mode == "off" or (mode not in TOOL_CALL_MODES and mode not in names):
        raise ValueError(f"toolCalls must be one of {', '.join(TOOL_CALL_MODES)} or an offered tool's "
                         f"name ({', '.join(names) or 'none offered'}), got {mode!r}")
    if mode == "required" and not schemas:
        raise ValueError('toolCalls "required" needs at least one tool offered')
    notes = GrammarNotes()
    if mode == "none" or not schemas:
        return {"type": "structural_tag", "format": _free_text(dialect, None, CALL_OPEN)}, notes.notes
    calls = _call_tag(schemas, tool_call_format, notes, dialect)
    later = {"type": "triggered_tags", "triggers": [CALL_OPEN], "tags": [calls]}
    if mode == "auto":
        return {"type": "structural_tag", "format": later}, notes.notes
    if mode == "required":
        reply = {**later, "at_least_one": True}
    else:  # one named tool first, then as "auto"
        first = _call_tag([tool for tool in schemas if tool.name == mode], tool_call_format, notes, dialect)
        reply = {"type": "sequence", "elements": [first, later]}
    if thinking:
        reply = {"type": "sequence", "elements": [
            _free_text(dialect, THINK_CLOSE, CALL_OPEN), {"type": "const_string", "value": "\n\n"}, reply]}
    return {"type": "structural_tag", "format": reply}, notes.notes


def logits_processor_spec(tools: list[dict], tool_call_format: str | None, mode: str = "auto",
                          *, thinking: bool = False, dialect: str = "web", greedy_calls: bool = False) -> dict | None:
    """The generate option entry that constrains tool calls: {"name": "tool-call-grammar",
    "args": {"structuralTag", "notes"}}, or None for mode "off" or a model without a tool
    call format. tools: the JSON tool schemas given to the chat template. mode: "auto" |
    "required" | "none" | "off" | an offered tool's name. thinking: the prompt left <think>
    open (Qwen3.5 with thinking on), so a required call comes after </think>. dialect: "web"
    (the model worker's xgrammar) or "pypi" (PyPI xgrammar, to check the grammar under CPython).
    greedy_calls: the runtime picks a call's tokens, and the reply's choice of one, greedily
    whatever the temperature (web/runtime/grammar/call-span.js)."""
    if mode == "off" or tool_call_format is None:
        return None
    # The agent asks again at every step with the same tools: built once per tool set.
    key = json.dumps([tools, tool_call_format, mode, thinking, dialect, greedy_calls], sort_keys=True, default=repr)
    if key not in _built:
        tag, notes = structural_tag(tools, tool_call_format, mode, thinking, dialect)
        args = {"structuralTag": tag, "notes": notes}
        watch = untagged_call(tools, tool_call_format, mode, thinking, dialect)
        if watch is not None:
            args["untaggedCall"] = watch
        if greedy_calls:
            args["greedyCalls"] = True
        _built[key] = json.dumps({"name": PROCESSOR_NAME, "args": args})
        while len(_built) > _MAX_BUILT:
            del _built[next(iter(_built))]
    return json.loads(_built[key])  # a fresh copy: callers may change theirs


def untagged_call(tools: list[dict], tool_call_format: str, mode: str = "auto", thinking: bool = False,
                  dialect: str = "web") -> dict | None:
    """The `untaggedCall` args (reply_openings.py) for a Hermes JSON reply that may be one call
    object without tags: for "auto" and "none" with tools offered; None otherwise, and with
    thinking open (the reply's start is after </think> then: the tags alone are watched)."""
    if tool_call_format != "hermes_json" or thinking or mode not in ("auto", "none"):
        return None
    schemas = tool_schemas(tools)
    if not schemas:
        return None
    names = [tool.name for tool in schemas]
    if mode == "none":
        return untagged_call_watch(names, None)
    rules = Rules(dialect)
    _, rests = hermes_json_rules(rules, schemas, GrammarNotes(), opened=True)  # notes: the structural tag's
    return untagged_call_watch(names, rules.text(untagged_call_grammar(rules, rests)))


def _call_tag(schemas: list[ToolSchema], tool_call_format: str, notes: GrammarNotes, dialect: str) -> dict:
    rules = Rules(dialect)
    root = CALL_GRAMMARS[tool_call_format](rules, schemas, notes)
    return {"type": "tag", "begin": CALL_OPEN, "content": {"type": "grammar", "grammar": rules.text(root)},
            "end": CALL_CLOSE}


def _free_text(dialect: str, stop: str | None, *forbidden: str) -> dict:
    """Any text without `forbidden`, up to and including `stop` (None: to the end)."""
    rules = Rules(dialect)
    return {"type": "grammar", "grammar": rules.text(text_until(rules, stop, forbidden))}
