"""AgentDojo's functions as our tools, the per-suite read/act declaration, and the approvers."""

import pytest

from agentdojo.functions_runtime import FunctionsRuntime
from botpsy_agentdojo.approvers import GroundTruth, approver, oracle_approves
from botpsy_agentdojo.declarations import DECLARATIONS, SuiteDeclaration, UndeclaredTool
from botpsy_agentdojo.tools import EnvironmentSession, suite_tools


def tools_of(suites, suite_name):
    suite = suites[suite_name]
    session = EnvironmentSession(FunctionsRuntime(suite.tools), suite.load_and_inject_default_environment({}))
    return {tool.name: tool for tool in suite_tools(suite_name, suite.tools, session)}, session


@pytest.mark.parametrize("suite_name", DECLARATIONS)
def test_every_tool_of_every_suite_is_declared_once_and_acting_ones_need_confirmation(suites, suite_name):
    declaration = DECLARATIONS[suite_name]
    tools, _ = tools_of(suites, suite_name)
    assert set(tools) == declaration.acts | declaration.reads_untrusted | declaration.reads_trusted
    assert {name for name, tool in tools.items() if tool.side_effects} == declaration.acts
    assert {name for name, tool in tools.items() if not tool.untrusted_output} == declaration.reads_trusted


def test_a_tool_missing_from_the_declaration_is_refused_by_name():
    declaration = SuiteDeclaration(acts=frozenset({"send_money"}), reads_untrusted=frozenset({"send_money"}))
    with pytest.raises(UndeclaredTool, match="'get_balance' is not declared"):
        declaration.kind_of("get_balance")
    with pytest.raises(UndeclaredTool, match="'send_money' is declared as acts and reads_untrusted"):
        declaration.kind_of("send_money")


def test_schemas_come_from_the_functions_signature_and_docstring(suites):
    tools, _ = tools_of(suites, "workspace")
    send_email = tools["send_email"].parameters
    assert send_email["required"] == ["recipients", "subject", "body"]
    assert send_email["properties"]["recipients"]["type"] == "array"
    assert send_email["properties"]["attachments"]["default"] is None
    assert "email" in send_email["properties"]["recipients"]["description"].lower()
    assert tools["share_file"].parameters["properties"]["permission"]["enum"] == ["r", "rw"]


def test_a_tool_call_runs_on_the_environment_and_is_recorded_with_its_result(suites):
    tools, session = tools_of(suites, "banking")
    output = tools["send_money"].handler({"recipient": "US12", "amount": 5.0, "subject": "x", "date": "2022-03-01"})
    assert "Transaction to US12" in output
    assert session.environment.bank_account.transactions[-1].recipient == "US12"
    [executed] = session.executed
    assert (executed.function, executed.arguments["amount"], executed.error) == ("send_money", 5.0, None)


TRUTH = GroundTruth(user_calls=(("send_money", {"recipient": "UK12", "amount": 98.7, "subject": "bill", "date": "2022-01-01"}),
                                ("update_password", {"password": "both"})),
                    injection_calls=(("update_password", {"password": "both"}),))
SEND_MONEY_SCHEMA = {"properties": {"recipient": {}, "amount": {}, "subject": {}, "date": {}}}
PASSWORD_SCHEMA = {"properties": {"password": {}}}


def test_the_oracle_approves_exactly_the_user_tasks_calls():
    asked = {"recipient": "UK12", "amount": 98.7, "subject": "bill", "date": "2022-01-01"}
    assert oracle_approves({"name": "send_money", "arguments": asked}, TRUTH, SEND_MONEY_SCHEMA)
    assert oracle_approves({"name": "send_money", "arguments": {**asked, "subject": " bill "}}, TRUTH, SEND_MONEY_SCHEMA)
    assert not oracle_approves({"name": "send_money", "arguments": {**asked, "recipient": "US13"}}, TRUTH, SEND_MONEY_SCHEMA)
    assert not oracle_approves({"name": "send_money", "arguments": {**asked, "amount": 1000}}, TRUTH, SEND_MONEY_SCHEMA)


def test_the_oracle_refuses_a_call_the_injection_needs_even_when_the_user_task_has_it_too():
    assert not oracle_approves({"name": "update_password", "arguments": {"password": "both"}}, TRUTH, PASSWORD_SCHEMA)


def test_the_oracle_fills_omitted_arguments_with_their_defaults_on_both_sides():
    schema = {"properties": {"query": {}, "sender": {"default": None}, "limit": {"default": 5}}}
    truth = GroundTruth(user_calls=(("search", {"query": "x"}),))
    assert oracle_approves({"name": "search", "arguments": {"query": "x", "limit": 5, "sender": None}}, truth, schema)
    assert not oracle_approves({"name": "search", "arguments": {"query": "x", "limit": 6}}, truth, schema)


def test_deny_and_approve_all_need_no_ground_truth():
    request = {"name": "send_money", "arguments": {}}
    assert approver("deny")(request, TRUTH, SEND_MONEY_SCHEMA) is False
    assert approver("approve-all")(request, TRUTH, SEND_MONEY_SCHEMA) is True
    with pytest.raises(ValueError, match="unknown approver 'maybe'"):
        approver("maybe")
