"""The tool-call grammar (botpsy_agent.grammar) under CPython: what it accepts is exactly
what our parser reads back as a valid call, in both formats, for every built-in tool and
for schemas with enums, nested objects, arrays, optional and required parameters.

Strings are checked with PyPI xgrammar (the library the model worker runs as WebAssembly);
test_grammar_engines.py checks the same grammars in the browser's own build."""

import json

import pytest
import xgrammar as xgr
from xgrammar.testing import _is_grammar_accept_string

from botpsy_agent.browser_session import builtin_tools
from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.grammar import logits_processor_spec, structural_tag, untagged_call
from botpsy_agent.parsing import ModelOutputParser
from botpsy_agent.validation import check_arguments

BUILTIN = {tool.name: tool for tool in builtin_tools()}
BUILTIN_SPECS = [tool.spec() for tool in BUILTIN.values()]

# Schemas beyond the built-in tools' (host pages register their own).
RICH_TOOLS = [
    {"type": "function", "function": {"name": "book_trip", "description": "Book a trip.", "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "enum": ["Paris", "Rome", "Oslo"]},
            "nights": {"type": "integer", "minimum": 0},
            "budget": {"type": "number"},
            "refundable": {"type": "boolean"},
            "travellers": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "object", "properties": {
                "seat": {"type": "string", "enum": ["window", "aisle"]},
                "meals": {"type": "array", "items": {"type": "string", "enum": ["veg", "fish"]}}},
                "required": ["seat"]},
            "note": {"type": "string"},
        },
        "required": ["city", "nights"]}}},
    {"type": "function", "function": {"name": "ping", "description": "No arguments.",
                                      "parameters": {"type": "object", "properties": {}}}},
]
RICH_SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in RICH_TOOLS}
RICH_CALLS = [
    ("book_trip", {"city": "Rome", "nights": 3}),
    ("book_trip", {"nights": 0, "city": "Oslo", "budget": -12.5, "refundable": False,
                   "note": "window seat\nif possible </param not closed",
                   "travellers": [{"name": "Ann", "age": 31}, {"name": "Bo"}], "tags": ["a", "b c"],
                   "options": {"seat": "aisle", "meals": ["veg"]}}),
    ("ping", {}),
]


def qwen_call(name, arguments):
    """A call exactly as the chat template writes it (strings raw, everything else JSON)."""
    lines = ["<tool_call>", f"<function={name}>"]
    for key, value in arguments.items():
        lines += [f"<parameter={key}>", value if isinstance(value, str) else json.dumps(value), "</parameter>"]
    return "\n".join(lines + ["</function>", "</tool_call>"])


def hermes_call(name, arguments):
    """A Hermes call; a "</" inside a string is written "<\\/" (the grammar allows no raw "</" in
    JSON strings, which could end the call early; the value reads back the same)."""
    body = json.dumps({"name": name, "arguments": arguments}).replace("</", "<\\/")
    return f"<tool_call>\n{body}\n</tool_call>"


CALL_WRITERS = {"qwen3_coder_xml": qwen_call, "hermes_json": hermes_call}
FORMATS = list(CALL_WRITERS)


def grammar_for(tools, tool_call_format, mode="auto", **options):
    tag, _ = structural_tag(tools, tool_call_format, mode, dialect="pypi", **options)
    return xgr.Grammar.from_structural_tag(json.dumps(tag))


def accepts(grammar, text):
    return _is_grammar_accept_string(grammar, text)


def read_back(text, tool_call_format, schemas):
    parser = ModelOutputParser(tool_call_format, schemas)
    parser.feed(text)
    parser.finish()
    return parser.calls


def sample_arguments(schema):
    """Arguments for every property, of the schema's types (strings over two lines)."""
    values = {"string": "milk\nand honey", "integer": 42, "number": 2.5, "boolean": True, "array": []}
    arguments = {}
    for key, prop in schema["properties"].items():
        if "enum" in prop:
            arguments[key] = prop["enum"][-1]
        elif prop.get("type") == "array" and prop.get("items", {}).get("type") == "string":
            arguments[key] = ["groceries", "home"]
        else:
            arguments[key] = values[prop["type"]]
    return arguments


@pytest.fixture(scope="module", params=FORMATS)
def builtin_grammar(request):
    return request.param, grammar_for(BUILTIN_SPECS, request.param)


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_builtin_tool_call_is_accepted_and_reads_back_the_same(builtin_grammar, name):
    tool_call_format, grammar = builtin_grammar
    schema = BUILTIN[name].parameters
    schemas = {tool.name: tool.parameters for tool in BUILTIN.values()}
    full, required_only = sample_arguments(schema), {key: sample_arguments(schema)[key] for key in schema["required"]}
    for arguments in (full, required_only, dict(reversed(list(full.items())))):
        text = "Let me check.\n" + CALL_WRITERS[tool_call_format](name, arguments)
        assert accepts(grammar, text), text
        [call] = read_back(text, tool_call_format, schemas)
        assert (call.name, call.arguments, call.error) == (name, arguments, None)
        assert check_arguments(call.arguments, schema) == []


@pytest.mark.parametrize("tool_call_format", FORMATS)
@pytest.mark.parametrize("name, arguments", RICH_CALLS, ids=["required-only", "everything", "no-arguments"])
def test_enums_nested_objects_arrays_and_optional_parameters(tool_call_format, name, arguments):
    grammar = grammar_for(RICH_TOOLS, tool_call_format)
    text = CALL_WRITERS[tool_call_format](name, arguments)
    assert accepts(grammar, text), text
    [call] = read_back(text, tool_call_format, RICH_SCHEMAS)
    assert (call.name, call.arguments, call.error) == (name, arguments, None)
    assert check_arguments(call.arguments, RICH_SCHEMAS[name]) == []


WRONG_CALLS = {
    "unknown tool": ("book_hotel", {"city": "Rome", "nights": 3}),
    "integer as text": ("book_trip", {"city": "Rome", "nights": "three"}),
    "integer as a decimal": ("book_trip", {"city": "Rome", "nights": 2.5}),
    "negative below a minimum of 0": ("book_trip", {"city": "Rome", "nights": -1}),
    "value outside the enum": ("book_trip", {"city": "Lima", "nights": 3}),
    "missing required key": ("book_trip", {"city": "Rome"}),
    "unknown key": ("book_trip", {"city": "Rome", "nights": 3, "pets": True}),
    "boolean as a word": ("book_trip", {"city": "Rome", "nights": 3, "refundable": "yes"}),
    "nested object missing its required key": ("book_trip", {"city": "Rome", "nights": 3, "options": {"meals": []}}),
    "array item of the wrong type": ("book_trip", {"city": "Rome", "nights": 3, "tags": [1]}),
    "an argument to a tool that takes none": ("ping", {"x": 1}),
}


@pytest.mark.parametrize("tool_call_format", FORMATS)
@pytest.mark.parametrize("case", sorted(WRONG_CALLS))
def test_wrong_calls_are_rejected(tool_call_format, case):
    name, arguments = WRONG_CALLS[case]
    assert not accepts(grammar_for(RICH_TOOLS, tool_call_format), CALL_WRITERS[tool_call_format](name, arguments))


@pytest.mark.parametrize("tool_call_format", FORMATS)
def test_a_key_given_twice_is_rejected(tool_call_format):
    grammar = grammar_for(RICH_TOOLS, tool_call_format)
    if tool_call_format == "qwen3_coder_xml":
        text = qwen_call("book_trip", {"city": "Rome", "nights": 3}).replace(
            "</function>", "<parameter=nights>\n4\n</parameter>\n</function>")
    else:
        text = '<tool_call>\n{"name": "book_trip", "arguments": {"city": "Rome", "nights": 3, "nights": 4}}\n</tool_call>'
    assert not accepts(grammar, text)


def test_a_string_value_may_not_hold_what_would_end_it_early():
    grammar = grammar_for(RICH_TOOLS, "qwen3_coder_xml")
    for inside in ("</parameter>", "<parameter=x>", "</function>", "</tool_call>"):
        assert not accepts(grammar, qwen_call("book_trip", {"city": "Rome", "nights": 1, "note": f"a {inside} b"}))
    hermes = grammar_for(RICH_TOOLS, "hermes_json")
    raw = '<tool_call>\n{"name": "book_trip", "arguments": {"city": "Rome", "nights": 1, "note": "a </tool_call> b"}}\n</tool_call>'
    assert not accepts(hermes, raw)
    # escaped, JSON can still say it (json.dumps writes "<" raw: escape it as \\u003c)
    assert accepts(hermes, hermes_call("book_trip", {"city": "Rome", "nights": 1, "note": "a <\\/tool_call> b"}))
    assert accepts(hermes, hermes_call("book_trip", {"city": "Rome", "nights": 1, "note": "a < b <<c"}))


@pytest.mark.parametrize("tool_call_format", FORMATS)
def test_modes(tool_call_format):
    call = CALL_WRITERS[tool_call_format]("book_trip", {"city": "Rome", "nights": 3})
    ping = CALL_WRITERS[tool_call_format]("ping", {})
    auto, required = grammar_for(RICH_TOOLS, tool_call_format), grammar_for(RICH_TOOLS, tool_call_format, "required")
    none, named = grammar_for(RICH_TOOLS, tool_call_format, "none"), grammar_for(RICH_TOOLS, tool_call_format, "ping")
    assert accepts(auto, "Just text.") and accepts(auto, f"Text. {call}\nMore text. {ping}")
    assert accepts(required, call + "\nthen text") and accepts(required, call + "\n" + ping)
    assert not accepts(required, "Text first. " + call) and not accepts(required, "no call")
    assert accepts(none, "Any text, even <tool_ca... or </tool_call>") and not accepts(none, call)
    assert accepts(named, ping) and not accepts(named, call)


def test_with_thinking_open_a_required_call_comes_after_the_thoughts():
    grammar = grammar_for(RICH_TOOLS, "qwen3_coder_xml", "required", thinking=True)
    call = qwen_call("ping", {})
    assert accepts(grammar, "I should ping.\n</think>\n\n" + call)
    assert not accepts(grammar, "I should ping.\n</think>\n\nNo.")


def test_calls_in_schema_order_are_accepted_by_xgrammars_own_qwen_format_too():
    """Cross-check against xgrammar's built-in Qwen3.5 structural tag (stricter: schema order,
    one-line strings): what it accepts, ours accepts."""
    theirs = xgr.Grammar.from_structural_tag(
        xgr.get_model_structural_tag(model="qwen_3_5", tools=BUILTIN_SPECS, reasoning=False))
    ours = grammar_for(BUILTIN_SPECS, "qwen3_coder_xml")
    for name, tool in BUILTIN.items():
        arguments = {key: value.replace("\n", " ") if isinstance(value, str) else value
                     for key, value in sample_arguments(tool.parameters).items()}
        text = qwen_call(name, arguments)
        if accepts(theirs, text):
            assert accepts(ours, text), text


def test_what_the_grammar_cannot_express_is_left_free_with_a_note():
    tools = [{"name": "lookup", "parameters": {"type": "object", "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "ref": {"$ref": "#/defs/x"},
        "count": {"type": "integer", "maximum": 3}}, "required": ["code"]}}]
    for tool_call_format in FORMATS:
        spec = logits_processor_spec(tools, tool_call_format, dialect="pypi")
        notes = " ".join(spec["args"]["notes"])
        assert "lookup.code" in notes and "pattern" in notes and "lookup.count" in notes and "maximum" in notes
        grammar = xgr.Grammar.from_structural_tag(json.dumps(spec["args"]["structuralTag"]))
        arguments = {"code": "not three capitals", "count": 7, "ref": {"any": ["json"]}}
        assert accepts(grammar, CALL_WRITERS[tool_call_format]("lookup", arguments))


def test_the_spec_shape_and_its_errors():
    spec = logits_processor_spec(BUILTIN_SPECS, "qwen3_coder_xml")
    assert spec["name"] == "tool-call-grammar" and set(spec["args"]) == {"structuralTag", "notes"}
    json.dumps(spec)  # crosses to the worker as JSON
    flat = [tool["function"] for tool in BUILTIN_SPECS]
    assert logits_processor_spec(flat, "qwen3_coder_xml") == spec
    assert logits_processor_spec(BUILTIN_SPECS, "qwen3_coder_xml", "off") is None
    assert logits_processor_spec(BUILTIN_SPECS, None) is None
    with pytest.raises(ValueError, match="toolCalls must be one of auto, required, none, off or an offered tool"):
        logits_processor_spec(BUILTIN_SPECS, "qwen3_coder_xml", "notes_serch")
    with pytest.raises(ValueError, match="unknown tool_call_format 'json'"):
        logits_processor_spec(BUILTIN_SPECS, "json")
    with pytest.raises(ValueError, match=r"tools\[0\] needs a name"):
        logits_processor_spec([{"function": {"description": "no name"}}], "hermes_json")
    with pytest.raises(ValueError, match="tools offered twice"):
        logits_processor_spec(BUILTIN_SPECS[:1] * 2, "hermes_json")
    with pytest.raises(ValueError, match="needs at least one tool"):
        logits_processor_spec([], "hermes_json", "required")
    # no tools offered: no call can be right, so none may open
    assert not accepts(xgr.Grammar.from_structural_tag(json.dumps(
        logits_processor_spec([], "hermes_json", dialect="pypi")["args"]["structuralTag"])), hermes_call("ping", {}))


def test_the_template_writes_calls_the_grammar_accepts():
    """The Qwen chat template's own rendering of earlier calls (what the model learns from)."""
    from pathlib import Path

    template = (Path(__file__).parents[2] / "export/botpsy_export/templates/qwen3_5_chat.jinja").read_text()
    chat_format = ChatFormat(template, "qwen3_coder_xml", True, eos_token="<|im_end|>")
    arguments = {"text": "buy milk\nand bread", "title": "Shopping", "tags": ["home"]}
    messages = [{"role": "user", "content": "note this"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "notes_create", "arguments": arguments}}]}]
    rendered = chat_format.render(messages, BUILTIN_SPECS, thinking=False, add_generation_prompt=False)
    reply = rendered[rendered.rindex("<|im_start|>assistant"):]
    call = reply[reply.index("<tool_call>"):reply.index("</tool_call>") + len("</tool_call>")]
    assert accepts(grammar_for(BUILTIN_SPECS, "qwen3_coder_xml"), call)


# --- the agent's toolCalls setting ------------------------------------------------------

def _session(manifest):
    from botpsy_agent.browser_session import create_session

    class Host:
        def __init__(self):
            self.generations = []

        def generate_start(self, prompt, options_json):
            self.generations.append(json.loads(options_json))
            return 0

        def generate_next(self, handle):
            return None

        def emit(self, event_json):
            pass

    from pathlib import Path

    template = (Path(__file__).parents[2] / "export/botpsy_export/templates/qwen3_5_chat.jinja").read_text()
    host = Host()
    session = create_session(host, json.dumps({"chat_template": template, "eos_token": "<|im_end|>"}),
                             json.dumps(manifest))
    return session, host


def test_tool_calls_are_constrained_by_default_for_a_model_with_a_tool_call_format():
    import asyncio

    session, host = _session({"tool_call_format": "qwen3_coder_xml", "chat_template_supports_tools": True})
    asyncio.run(session.run_turn("hi"))
    [grammar] = host.generations[0]["logitsProcessors"]
    expected = logits_processor_spec([tool.spec() for tool in session.agent.active_tools()], "qwen3_coder_xml",
                                     greedy_calls=True)
    assert grammar == expected and grammar["args"]["greedyCalls"] is True  # calls greedy at any temperature
    assert json.loads(session.logits_processors()) == [expected]  # what warm-up compiles ahead


def test_tool_calls_setting():
    import asyncio

    session, host = _session({"tool_call_format": "qwen3_coder_xml", "chat_template_supports_tools": True})
    session.set_settings(json.dumps({"toolCalls": "off"}))
    asyncio.run(session.run_turn("hi"))
    assert "logitsProcessors" not in host.generations[-1]
    session.set_settings(json.dumps({"toolCalls": "calculator"}))
    asyncio.run(session.run_turn("hi"))
    grammar = host.generations[-1]["logitsProcessors"][0]
    assert grammar["args"]["structuralTag"]["format"]["type"] == "sequence"  # calculator first, then free
    with pytest.raises(ValueError, match="toolCalls must be one of auto, required, none, off, a tool's name or null"):
        session.set_settings(json.dumps({"toolCalls": "always"}))
    session.set_settings(json.dumps({"toolCalls": None}))  # back to the model's default
    assert session.agent.options.tool_calls == "auto"
    # a folder whose manifest names no tool-call format is left unconstrained unless asked
    session, host = _session({"chat_template_supports_tools": True})
    asyncio.run(session.run_turn("hi"))
    assert "logitsProcessors" not in host.generations[-1]
    session.set_settings(json.dumps({"toolCalls": "auto"}))
    asyncio.run(session.run_turn("hi"))
    assert host.generations[-1]["logitsProcessors"][0]["name"] == "tool-call-grammar"


def test_required_applies_to_the_first_reply_of_a_turn_only():
    from botpsy_agent.agent import Agent, AgentOptions
    from botpsy_agent.scripted_model import ScriptedModel

    agent = Agent(model=ScriptedModel([]), chat_format=_session({"tool_call_format": "qwen3_coder_xml"})[0]
                  .agent.chat_format, options=AgentOptions(tool_calls="required"))
    for tool in BUILTIN.values():
        agent.add_tool(tool)
    first, later = agent.logits_processors(first_step=True), agent.logits_processors(first_step=False)
    assert first[0]["args"]["structuralTag"]["format"].get("at_least_one") is True
    assert later[0]["args"]["structuralTag"]["format"].get("at_least_one") is not True


# --- token level, with the exported folders' own vocabularies ---------------------------

def _token_table(folder):
    """What web/runtime/model/tokenizer.js rawTokenTable gives the worker: raw strings, special tokens included."""
    data = json.loads((folder / "tokenizer.json").read_text())
    manifest = json.loads((folder / "manifest.json").read_text())
    table = [""] * manifest["vocab_size"]
    for text, token_id in data["model"]["vocab"].items():
        table[token_id] = text
    for added in data["added_tokens"]:
        table[added["id"]] = added["content"]
    return table, manifest


@pytest.mark.parametrize("name", ["tiny-qwen3.5", "smollm2-135m"])
def test_the_end_of_turn_token_is_impossible_inside_a_call_and_allowed_outside(exported_model, name):
    from tokenizers import Tokenizer

    folder = exported_model(name)
    table, manifest = _token_table(folder)
    stops = manifest["eos_token_ids"]
    info = xgr.TokenizerInfo(table, vocab_type=xgr.VocabType.BYTE_LEVEL, vocab_size=len(table), stop_token_ids=stops)
    spec = logits_processor_spec(BUILTIN_SPECS, manifest["tool_call_format"], dialect="pypi")
    matcher = xgr.GrammarMatcher(xgr.GrammarCompiler(info).compile_structural_tag(
        json.dumps(spec["args"]["structuralTag"])))
    mask = xgr.allocate_token_bitmask(1, len(table))
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))

    def allowed(token_id):
        matcher.fill_next_token_bitmask(mask)
        return bool((mask[0, token_id // 32] >> (token_id % 32)) & 1)

    def feed(text):
        for token_id in tokenizer.encode(text, add_special_tokens=False).ids:
            assert matcher.accept_token(token_id), (text, token_id)

    call = CALL_WRITERS[manifest["tool_call_format"]]("notes_search", {"query": "milk"})
    opening, rest = call[:len("<tool_call>")], call[len("<tool_call>"):]
    feed("Let me look. ")
    assert all(allowed(stop) for stop in stops)
    feed(opening)  # one special token in Qwen3.5's vocabulary, several ordinary ones in SmolLM2's
    assert not any(allowed(stop) for stop in stops)
    feed(rest[:20])
    assert not any(allowed(stop) for stop in stops)
    feed(rest[20:])
    assert all(allowed(stop) for stop in stops)
    assert matcher.accept_token(stops[0]) and matcher.is_terminated()
    if manifest["tool_call_format"] != "hermes_json":
        return
    # A call object opened without tags at the reply's start (its own grammar): no stop until it is whole.
    matcher = xgr.GrammarMatcher(xgr.GrammarCompiler(info).compile_grammar(
        untagged_call(BUILTIN_SPECS, "hermes_json", dialect="pypi")["grammar"]))
    untagged = bare_call("notes_search", {"query": "milk"})
    feed(untagged[:len('{"name": "notes_search"')])
    assert not any(allowed(stop) for stop in stops)
    feed(untagged[len('{"name": "notes_search"'):-1])
    assert not any(allowed(stop) for stop in stops)
    feed("}")
    assert all(allowed(stop) for stop in stops)


# --- Hermes JSON calls opened without tags (Qwen2.5-Coder's own dialect) ------------------

def bare_call(name, arguments):
    return json.dumps({"name": name, "arguments": arguments}).replace("</", "<\\/")


def fenced_call(name, arguments):
    return f"```json\n{bare_call(name, arguments)}\n```"


def double_braced_call(name, arguments):
    """As the Qwen2.5-Coder-1.5B GGUF's template spells the format, and the 1.5B copies it."""
    return "{" + bare_call(name, arguments) + "}"


UNTAGGED = {"bare_json": bare_call, "fenced_json": fenced_call, "double_braced_json": double_braced_call}


def untagged_grammar(tools, mode="auto"):
    return xgr.Grammar.from_ebnf(untagged_call(tools, "hermes_json", mode, dialect="pypi")["grammar"])


@pytest.mark.parametrize("opening", sorted(UNTAGGED))
@pytest.mark.parametrize("name, arguments", RICH_CALLS, ids=["required-only", "everything", "no-arguments"])
def test_a_call_opened_without_tags_gets_a_grammar_of_its_own_that_the_parser_reads_back(opening, name, arguments):
    grammar = untagged_grammar(RICH_TOOLS)
    text = UNTAGGED[opening](name, arguments)
    assert accepts(grammar, text), text
    [call] = read_back(text, "hermes_json", RICH_SCHEMAS)
    assert (call.name, call.arguments, call.error, call.opening) == (name, arguments, None, opening)
    assert check_arguments(call.arguments, RICH_SCHEMAS[name]) == []
    assert not accepts(grammar, text + "\nThat is the call.")  # the call is the whole reply
    assert accepts(grammar, "\n " + text.replace('{"name": ', '{ "name" :', 1))  # whitespace the parser allows


@pytest.mark.parametrize("opening", sorted(UNTAGGED))
@pytest.mark.parametrize("case", sorted(WRONG_CALLS))
def test_wrong_untagged_calls_are_rejected(opening, case):
    name, arguments = WRONG_CALLS[case]
    assert not accepts(untagged_grammar(RICH_TOOLS), UNTAGGED[opening](name, arguments))


def test_the_untagged_call_watch_in_the_spec():
    """What the processor gets: the parser's own openings automaton, the offered names, and the
    call grammar ("auto") or forbid ("none"); nothing for XML, "required", a named tool, thinking
    open, or no tools (the structural tag alone, as before)."""
    from botpsy_agent.parsing.json_reply import OPENING_STATES

    spec = logits_processor_spec(RICH_TOOLS, "hermes_json", dialect="pypi")
    watch = spec["args"]["untaggedCall"]
    assert watch["openings"] == OPENING_STATES and watch["tools"] == ["book_trip", "ping"]
    assert watch["grammar"] == untagged_call(RICH_TOOLS, "hermes_json", dialect="pypi")["grammar"]
    forbidding = logits_processor_spec(RICH_TOOLS, "hermes_json", "none")["args"]["untaggedCall"]
    assert forbidding["forbid"] is True
    # words only: no object, array, fence, nor a copied "<tool_response>" as the reply
    assert set(forbidding["refusedStarts"]) == set("{[`<")
    for tools, tool_call_format, mode, thinking in ((RICH_TOOLS, "qwen3_coder_xml", "auto", False),
                                                    (RICH_TOOLS, "hermes_json", "required", False),
                                                    (RICH_TOOLS, "hermes_json", "ping", False),
                                                    (RICH_TOOLS, "hermes_json", "auto", True), ([], "hermes_json", "auto", False)):
        spec = logits_processor_spec(tools, tool_call_format, mode, thinking=thinking)
        assert "untaggedCall" not in spec["args"], (tool_call_format, mode, thinking)


@pytest.mark.parametrize("indent", [2, 4])
@pytest.mark.parametrize("name, arguments", RICH_CALLS, ids=["required-only", "everything", "no-arguments"])
def test_indented_calls_are_accepted_as_qwen2_5_coder_writes_them(indent, name, arguments):
    """Qwen2.5-Coder writes its calls as json.dumps(indent=2) does. Refused the line break after
    the name, it wrote on into a name no tool has (BFCL multiple_87: "games_update_find_find")."""
    text = json.dumps({"name": name, "arguments": arguments}, indent=indent).replace("</", "<\\/")
    assert accepts(untagged_grammar(RICH_TOOLS), f"```json\n{text}\n```"), text
    assert accepts(untagged_grammar(RICH_TOOLS), text), text
    assert accepts(grammar_for(RICH_TOOLS, "hermes_json"), f"<tool_call>\n{text}\n</tool_call>"), text
    [call] = read_back(text, "hermes_json", RICH_SCHEMAS)
    assert (call.name, call.arguments) == (name, arguments)


def test_whitespace_stays_bounded():
    """A line break and at most MAX_INDENT spaces where json.dumps(indent) puts them; nothing more,
    so a weak model cannot write whitespace forever."""
    from botpsy_agent.grammar.json_values import MAX_INDENT

    name, arguments = RICH_CALLS[0]
    compact = bare_call(name, arguments)
    most = compact.replace('"arguments": {', '"arguments": {\n' + " " * MAX_INDENT, 1)
    assert accepts(untagged_grammar(RICH_TOOLS), most)
    assert not accepts(untagged_grammar(RICH_TOOLS), most.replace("\n", "\n ", 1))
    assert not accepts(untagged_grammar(RICH_TOOLS), compact.replace(', "arguments"', ',\n\n"arguments"', 1))
