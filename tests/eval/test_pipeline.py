"""A case goes through the agent's own code: its prompt is what the agent renders for the
case's tools and messages, and BFCL's expected calls, written as the model would write them
(Qwen XML or Hermes JSON), are read back by the agent's parser and score 1."""

import json
from importlib.resources import files

import pytest

from botpsy_agent.agent import AgentOptions
from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.grammar import logits_processor_spec
from botpsy_eval.checker import PYTHON_TYPES, score_case
from botpsy_eval.data import CATEGORIES, NO_CALL_CATEGORIES, ANY_CALL_CATEGORIES, load_cases
from botpsy_eval.pipeline import read_calls, render_case
from botpsy_eval.schema import tool_name

AST_CATEGORIES = [c for c in CATEGORIES if c not in NO_CALL_CATEGORIES + ANY_CALL_CATEGORIES]
PLAIN_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture(scope="module")
def qwen_format():
    template = (files("botpsy_export") / "templates" / "qwen3_5_chat.jinja").read_text()
    return ChatFormat(template, "qwen3_coder_xml", True, eos_token="<|im_end|>")


@pytest.fixture(scope="module")
def hermes_format():
    return ChatFormat(PLAIN_TEMPLATE, "hermes_json", supports_tools=False, eos_token="<|im_end|>")


def as_qwen_xml(name, arguments):
    lines = ["<tool_call>", f"<function={tool_name(name)}>"]
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        lines += [f"<parameter={key}>", text, "</parameter>"]
    return "\n".join(lines + ["</function>", "</tool_call>"])


def as_hermes_json(name, arguments):
    return f'<tool_call>\n{json.dumps({"name": tool_name(name), "arguments": arguments})}\n</tool_call>'


def values_fit_their_types(case, calls, ground_truth) -> bool:
    """XML carries text, read as the schema's type: an answer whose value is of another type
    (BFCL has a few, e.g. True for a string) cannot be written that way."""
    for name, arguments in calls:
        properties = ground_truth.function_doc(case, name)["parameters"]["properties"]
        for key, value in arguments.items():
            wanted = PYTHON_TYPES[properties[key]["type"]]
            if not (type(value) is wanted or (wanted is float and type(value) is int)):
                return False
    return True


@pytest.fixture(scope="module")
def sampled_ast_cases(ground_truth):
    return [case for case in load_cases(AST_CATEGORIES, limit=40, seed=3)
            if not ground_truth.answer_contradicts_doc(case)]


@pytest.mark.parametrize("writer, chat_format_name", [(as_qwen_xml, "qwen_format"), (as_hermes_json, "hermes_format")])
def test_expected_calls_written_by_a_model_are_read_back_and_score_1(writer, chat_format_name, sampled_ast_cases,
                                                                     ground_truth, request):
    chat_format = request.getfixturevalue(chat_format_name)
    checked = 0
    for case in sampled_ast_cases:
        calls = ground_truth.base_calls(case)
        if writer is as_qwen_xml and not values_fit_their_types(case, calls, ground_truth):
            continue
        rendered = render_case(chat_format, case)
        output = "I will call the tools.\n" + "\n".join(writer(name, arguments) for name, arguments in calls)
        read = read_calls(chat_format, rendered, output)
        assert not read.unparsed, (case.id, read.unparsed)
        verdict = score_case(case, read.calls)
        assert verdict.correct, (case.id, output, read.calls, verdict.reason)
        checked += 1
    assert checked > 0.9 * len(sampled_ast_cases)


def test_the_prompt_is_the_agents_rendering_of_the_cases_tools_and_messages(qwen_format, hermes_format):
    case = load_cases(["live_multiple"], limit=1)[0]
    default_system = AgentOptions().system_prompt
    for chat_format in (qwen_format, hermes_format):
        rendered = render_case(chat_format, case)
        names = [function["name"] for function in case.functions]
        expected = chat_format.render([{"role": "system", "content": default_system}, *case.messages],
                                      rendered.tool_specs, thinking=False)
        assert rendered.prompt == expected
        assert [spec["function"]["name"] for spec in rendered.tool_specs] == [tool_name(n) for n in names]
        assert all(tool_name(name) in rendered.prompt for name in names)
        assert case.messages[-1]["content"] in rendered.prompt
        # constrained: what the agent asks the runtime for with toolCalls "auto"
        assert rendered.constrained_processors == [logits_processor_spec(
            rendered.tool_specs, chat_format.tool_call_format, "auto",
            greedy_calls=AgentOptions().greedy_calls)]
        assert rendered.constrained_processors[0]["name"] == "tool-call-grammar"
    assert "<tools>" in render_case(hermes_format, case).prompt  # the Hermes fallback teaches the tools


def test_a_case_with_its_own_system_message_keeps_it(qwen_format):
    case = next(c for c in load_cases(["live_irrelevance"]) if c.messages[0]["role"] == "system")
    prompt = render_case(qwen_format, case).prompt
    assert case.messages[0]["content"] in prompt
    assert AgentOptions().system_prompt not in prompt


def test_a_call_that_does_not_parse_is_reported_and_not_scored(hermes_format):
    case = load_cases(["simple_python"], limit=1)[0]
    rendered = render_case(hermes_format, case)
    read = read_calls(hermes_format, rendered, '<tool_call>\n{"name": "x", "arguments": {oops}\n</tool_call>')
    assert read.calls == [] and len(read.unparsed) == 1 and "not valid JSON" in read.unparsed[0]["error"]
    assert not score_case(case, read.calls).correct
