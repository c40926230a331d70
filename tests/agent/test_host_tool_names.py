"""A host tool's parameter names: every name registration accepts is one the call formats, the parser
and the grammar carry; every other name is refused when the page registers the tool, by the page's
own check (web/agent/host-tool-spec.js) and again by the agent's (botpsy_agent.tooling), with the
same rule."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from botpsy_agent.tooling import Tool

from .test_grammar import FORMATS, accepts, grammar_for, qwen_call, read_back

SPEC_MODULE = Path(__file__).resolve().parents[2] / "web" / "agent" / "host-tool-spec.js"

ACCEPTED = ["to", "año_vehiculo", "user.id", "max-results", "$ref_id", "_private", "名前", "x²", "a$b.c-d", "x" * 128]
REFUSED = ["to>\n<parameter=admin", "a b", "", "9lives", "٣x", "x" * 129, "</parameter>", 'say"hi', "e\u0301",
           ".dot", "-dash", "tab\there", "new\nline", "a>b", "a=b", "a/b", "a<b"]


def hermes_call(name, arguments, ensure_ascii=False):
    """A Hermes call as templates write it (`tojson`: non-ASCII letters as they are)."""
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=ensure_ascii).replace("</", "<\\/")
    return f"<tool_call>\n{body}\n</tool_call>"


CALL_WRITERS = {"qwen3_coder_xml": qwen_call, "hermes_json": hermes_call}


def host_tool_spec(parameter_name):
    return {"type": "function", "function": {"name": "send_sms", "description": "Send a text.", "parameters": {
        "type": "object", "properties": {parameter_name: {"type": "string"}}, "required": [parameter_name]}}}


@pytest.mark.parametrize("tool_call_format", FORMATS)
@pytest.mark.parametrize("name", ACCEPTED)
def test_an_accepted_parameter_name_is_carried_by_the_grammar_and_the_parser(tool_call_format, name):
    spec = host_tool_spec(name)
    tool = Tool.from_json_schema("send_sms", "Send a text.", spec["function"]["parameters"], print)
    text = CALL_WRITERS[tool_call_format]("send_sms", {name: "on my way\n</b>"})
    assert accepts(grammar_for([tool.spec()], tool_call_format), text), text
    [call] = read_back(text, tool_call_format, {"send_sms": tool.parameters})
    assert (call.name, call.arguments, call.error) == ("send_sms", {name: "on my way\n</b>"}, None)
    if tool_call_format == "hermes_json":  # the grammar writes one spelling; the parser reads JSON's other too
        [call] = read_back(hermes_call("send_sms", {name: "x"}, ensure_ascii=True), tool_call_format,
                           {"send_sms": tool.parameters})
        assert call.arguments == {name: "x"}


@pytest.mark.parametrize("name", REFUSED)
def test_any_other_parameter_name_is_refused_at_registration_by_name(name):
    with pytest.raises(ValueError, match=r"parameter name .* must be letters"):
        Tool.from_json_schema("send_sms", "", host_tool_spec(name)["function"]["parameters"], print)


def test_the_page_refuses_exactly_the_names_the_agent_refuses():
    node = shutil.which("node")
    assert node, "Node.js is needed (./run.sh installs it with npm)"
    script = ("const {checkHostToolParameters} = await import(process.argv[1]);"
              "const names = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(names.map((name) => { try {"
              "  checkHostToolParameters('send_sms', {type: 'object', properties: {[name]: {type: 'string'}}}); return null;"
              "} catch (error) { return error.message; } })));")
    names = ACCEPTED + REFUSED
    done = subprocess.run([node, "--input-type=commonjs", "-e", f"(async () => {{ {script} }})()", SPEC_MODULE.as_uri()],
                          input=json.dumps(names), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    page_errors = json.loads(done.stdout)
    for name, page_error in zip(names, page_errors):
        try:
            Tool.from_json_schema("send_sms", "", host_tool_spec(name)["function"]["parameters"], print)
            agent_error = None
        except ValueError as error:
            agent_error = str(error)
        assert (page_error is None) == (agent_error is None), name
        if page_error is not None:
            assert page_error.startswith("tool 'send_sms': parameter name ") and "must be letters" in page_error


def test_the_widget_and_the_agent_host_refuse_a_bad_parameter_name_when_the_page_registers_the_tool(
        guarded_page, server):
    guarded_page.goto(f"{server}/static/icons/botpsy.svg")  # any page of the origin: nothing starts
    errors = guarded_page.evaluate("""async () => {
      await import("/web/widget.js");
      const {AgentHost} = await import("/web/agent/agent-host.js");
      const tool = {name: "send_sms", handler: () => "sent",
                    parameters: {type: "object", properties: {"to>\\n<parameter=admin": {type: "string"}}}};
      const caught = [];
      const Widget = customElements.get("botpsy-chat");
      for (const register of [(t) => new Widget().registerTool(t),
                              (t) => AgentHost.prototype.registerTool.call({}, t)]) {
        try { register(tool); caught.push(null); } catch (error) { caught.push(error.message); }
      }
      return caught;
    }""")
    assert errors == ["tool 'send_sms': parameter name \"to>\\n<parameter=admin\" must be letters, digits, '_', '.', "
                      "'-' or '$' (at most 128, not starting with a digit, '.' or '-')"] * 2
