"""The grammars botpsy_agent.grammar writes mean the same to both builds of xgrammar: PyPI's
(the CPython tests) and npm's @mlc-ai/web-xgrammar (what the model worker runs), checked
string by string in Node with the very bundle the page loads. The two builds spell free text
(TagDispatch) differently: the "web" dialect goes to Node, the "pypi" one to PyPI's."""

import json
import shutil
import subprocess

import pytest
import xgrammar as xgr
from xgrammar.testing import _is_grammar_accept_string

from botpsy_agent.browser_session import builtin_tools
from botpsy_agent.grammar import structural_tag, untagged_call
from botpsy_agent.parsing.json_reply import JsonReply
from botpsy_web import REPO_ROOT

BUNDLE = REPO_ROOT / "node_modules/@mlc-ai/web-xgrammar/lib/index.js"

# Node cannot import the UMD bundle as a module, but can require a .cjs copy of it.
ACCEPT_SCRIPT = """
const xgr = require(process.argv[2]);
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; }).on("end", async () => {
  const cases = JSON.parse(input);
  const out = [];
  for (const {tag, strings} of cases) {
    const grammar = await xgr.Grammar.fromStructuralTag(JSON.stringify(tag));
    const results = [];
    for (const text of strings) results.push(await xgr.Testings.isGrammarAcceptString(grammar, text));
    grammar.dispose();
    out.push(results);
  }
  console.log(JSON.stringify(out));
});
"""

SPECS = [tool.spec() for tool in builtin_tools()]
TEXTS = [
    "Plain text with <tool_ca and </tool_call> in it.",
    '<tool_call>\n<function=notes_search>\n<parameter=query>\nmilk\nand honey\n</parameter>\n</function>\n</tool_call>',
    '<tool_call>\n<function=notes_search>\n<parameter=limit>\n3\n</parameter>\n<parameter=query>\nx\n</parameter>\n'
    '</function>\n</tool_call> then text',
    '<tool_call>\n<function=notes_search>\n<parameter=limit>\n3\n</parameter>\n</function>\n</tool_call>',
    '<tool_call>\n<function=todo_list>\n<parameter=status>\nsoon\n</parameter>\n</function>\n</tool_call>',
    '<tool_call>\n<function=notes_create>\n<parameter=text>\na\n</parameter>\n<parameter=tags>\n["x", "y"]\n'
    '</parameter>\n</function>\n</tool_call>',
    '<tool_call>\n{"name": "notes_search", "arguments": {"limit": 3, "query": "milk"}}\n</tool_call>',
    '<tool_call>\n{"name": "notes_search", "arguments": {"query": "a </tool_call> b"}}\n</tool_call>',
    '<tool_call>\n{"name":"convert_units","arguments":{"value":-1.5e3,"from_unit":"km","to_unit":"mi"}}\n</tool_call>',
    '<tool_call>\n{"name": "files_list", "arguments": {}}\n</tool_call>',
    '<tool_call>\n<function=calculator>\n<parameter=expression>\n2 < 3 </parameter> \u00e9\u4e2d\n</parameter>\n'
    '</function>\n</tool_call>',
    '<tool_call>\n<function=calculator>\n<parameter=expression>\n\u00e9 \u4e2d < \n</parameter>\n</function>\n</tool_call>',
    '<tool_call>\n<function=calculator>\n<parameter=expression>\nno </tool_call> here\n</parameter>\n</function>\n</tool_call>',
    '<tool_call>\n{"name": "notes_search", "arguments": {"query": "caf\u00e9 < <\\/b>"}}\n</tool_call>',
    'Thinking about <tool_call without closing',
    '{"name": "notes_search", "arguments": {"limit": 3, "query": "milk"}}',
    '```json\n{"name": "files_list", "arguments": {}}\n```',
    '\n{"name" :"notes_search", "arguments": {"limit": "3"}}',
    '{"name": "notes_search", "arguments": {"query": "x"}} and then prose',
    '{"name": "Alice", "age": 31}',
    '```python\nprint(1)\n```',
    '{<tool_call>\n{"name": "files_list", "arguments": {}}\n</tool_call>',
    'Here: {"name": "notes_search", "arguments": {"limit": "many"}}',
]


@pytest.fixture(scope="module")
def web_accepts(tmp_path_factory):
    node = shutil.which("node")
    assert node, "Node.js is needed (./run.sh installs it with npm)"
    folder = tmp_path_factory.mktemp("web-xgrammar")
    shutil.copy(BUNDLE, folder / "xgrammar.cjs")
    (folder / "accept.cjs").write_text(ACCEPT_SCRIPT)

    def run(cases):
        done = subprocess.run([node, str(folder / "accept.cjs"), str(folder / "xgrammar.cjs")],
                              input=json.dumps(cases), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)
    return run


def test_both_builds_accept_and_reject_the_same_calls(web_accepts):
    cases, expected = [], []
    for tool_call_format in ("qwen3_coder_xml", "hermes_json"):
        for mode in ("auto", "required", "none", "notes_search"):
            web, _ = structural_tag(SPECS, tool_call_format, mode, dialect="web")
            pypi, _ = structural_tag(SPECS, tool_call_format, mode, dialect="pypi")
            grammar = xgr.Grammar.from_structural_tag(json.dumps(pypi))
            cases.append({"tag": web, "strings": TEXTS})
            expected.append([_is_grammar_accept_string(grammar, text) for text in TEXTS])
    # the grammar of a call opened without tags (Hermes JSON "auto")
    web = untagged_call(SPECS, "hermes_json", dialect="web")["grammar"]
    pypi = xgr.Grammar.from_ebnf(untagged_call(SPECS, "hermes_json", dialect="pypi")["grammar"])
    cases.append({"tag": {"type": "structural_tag", "format": {"type": "grammar", "grammar": web}}, "strings": TEXTS})
    expected.append([_is_grammar_accept_string(pypi, text) for text in TEXTS])
    assert any(expected[-1])
    assert web_accepts(cases) == expected
    assert any(any(results) for results in expected) and not all(all(results) for results in expected)


CLASSIFY_SCRIPT = """
import(process.argv[2]).then(({classifyReplyStart}) => {
  let input = "";
  process.stdin.on("data", (chunk) => { input += chunk; }).on("end", () => {
    const {watch, strings} = JSON.parse(input);
    console.log(JSON.stringify(strings.map((text) => classifyReplyStart(text, watch))));
  });
});
"""


def _python_status(text, tools):
    """The parser's view: "prose", "call" (a name written and closed: offered or invented) or
    "undecided"."""
    reply = JsonReply(tools)
    if not reply.feed(text):
        return "prose"
    return "call" if reply.name is not None else "undecided"


def test_the_runtime_sees_a_reply_start_as_the_parser_does(tmp_path):
    """web/runtime/grammar/untagged-call.js decides when a reply has opened a call of an offered
    tool without tags (and hands it to the call's grammar) exactly where the parser decides it
    is one: every prefix of replies that are calls, prose, or neither yet. The parser also reads
    a call of a tool nobody offered (the agent refuses it, naming the closest tools), which the
    runtime leaves free: it constrains offered calls only."""
    node = shutil.which("node")
    assert node, "Node.js is needed (./run.sh installs it with npm)"
    shutil.copy(REPO_ROOT / "web/runtime/grammar/untagged-call.js", tmp_path / "untagged-call.mjs")
    (tmp_path / "classify.mjs").write_text(CLASSIFY_SCRIPT)
    watch = untagged_call(SPECS, "hermes_json")
    replies = ['{"name": "notes_search", "arguments": {"query": "milk"}}', '```json\n{"name": "files_list", "arguments": {}}\n```',
               '\n ```  \n { "name" :\t"calculator"', '{"name": "notes_searching"', '{"name": "Ada"}', '```python\nx',
               '{"name": "notes\\u005fsearch"', '<tool_call>', 'Sure: {"name": "calculator"', '{"nam": 1}', '``json']
    strings = sorted({reply[:size] for reply in replies for size in range(len(reply) + 1)})
    done = subprocess.run([node, str(tmp_path / "classify.mjs"), str(tmp_path / "untagged-call.mjs")],
                          input=json.dumps({"watch": watch, "strings": strings}), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    runtime = json.loads(done.stdout)
    parser = [_python_status(text, watch["tools"]) for text in strings]
    for text, seen, read in zip(strings, runtime, parser):
        offered_call = read == "call" and JsonReply(watch["tools"]).feed(text) and text.split('"')[3] in watch["tools"]
        assert (seen == "call") == bool(offered_call), text
        if read in ("prose", "undecided") or seen == "undecided":
            assert seen == read or (seen == "prose" and read == "undecided"), text
    assert {"call", "prose", "undecided"} <= set(runtime)


def test_under_none_the_reply_may_not_start_with_an_object_an_array_or_a_fence(tmp_path):
    """toolCalls "none" (the agent's answer in words): the watch refuses a reply whose first
    character (after whitespace) opens an object, an array, a code fence or a tag, before any name
    is written: an offered tool's call, an invented one (`calculate_tax`: Qwen2.5-Coder-0.5B wrote it
    again when told to answer in words), `{"name": null`, "```json\n[...]", a copied
    "<tool_response>". Words, and code, JSON or tags later in the reply, stay free."""
    node = shutil.which("node")
    assert node, "Node.js is needed (./run.sh installs it with npm)"
    shutil.copy(REPO_ROOT / "web/runtime/grammar/untagged-call.js", tmp_path / "untagged-call.mjs")
    (tmp_path / "classify.mjs").write_text(CLASSIFY_SCRIPT)
    watch = untagged_call(SPECS, "hermes_json", "none")
    assert watch["forbid"] is True and "grammar" not in watch
    refused = ['{', ' \n{"name": "calculator"', '{"name": null', '```json\n[', '`', '\t[{"name": "x"}]',
               '<tool_response>\n[]\n</tool_response>']
    free = ['The answer is 51,000.', 'Here it is:\n```python\nprint(1)', 'Here: {"name": "x"}', '51000', '"quoted"',
            'Use <br> for a line break.']
    undecided = ['', '  ', ' \n\t']
    strings = refused + free + undecided
    done = subprocess.run([node, str(tmp_path / "classify.mjs"), str(tmp_path / "untagged-call.mjs")],
                          input=json.dumps({"watch": watch, "strings": strings}), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    seen = dict(zip(strings, json.loads(done.stdout)))
    assert [seen[text] for text in refused] == ["call"] * len(refused), seen
    assert [seen[text] for text in free] == ["prose"] * len(free), seen
    assert [seen[text] for text in undecided] == ["undecided"] * len(undecided), seen
