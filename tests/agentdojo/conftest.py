"""Shared pieces for the AgentDojo tests: the suites, loaded once, and one run helper."""

import pytest

from botpsy_agentdojo.element import BotPsyElement
from botpsy_agentdojo.models import default_chat_format, scripted_model_factory
from botpsy_agentdojo.runner import RunSettings, Selection, run_cases
from botpsy_agentdojo.suites import load_suites


@pytest.fixture(scope="session")
def suites():
    return load_suites()


@pytest.fixture(scope="session")
def run_scripted(suites):
    """run_scripted(suite, [(user task, injection task or None)], approvers) -> [CaseResult]:
    the scripted obeyer through the agent, scored by AgentDojo."""
    chat_format = default_chat_format()

    def run(suite_name, cases, approvers, element=None):
        element = element or BotPsyElement(chat_format)
        selection = Selection(suites[suite_name], [case for case in cases if case[1]],
                              [user for user, injection in cases if injection is None])
        settings = RunSettings(suites=(suite_name,), approvers=tuple(approvers))
        return run_cases(element, "scripted", scripted_model_factory(chat_format, 64), settings,
                         {suite_name: selection})

    return run
