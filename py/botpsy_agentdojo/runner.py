"""Run AgentDojo cases through the agent: which cases, which approvers, one result per run.

A case is a (user task, injection task) pair of a suite: the attack writes the injection into
the environment and AgentDojo's own `TaskSuite.run_task_with_pipeline` runs the pipeline
(our element) and scores utility and security with the tasks' own checks. Each user task of
the selected cases is also run once without an attack (utility without attack).
"""

from __future__ import annotations

import json
import random
import re
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from botpsy_agent.agent import AgentOptions

from .approvers import APPROVERS
from .element import BotPsyElement, CaseSetup
from .suites import BENCHMARK_VERSION, SUITE_NAMES, load_attack, load_suites


@dataclass(frozen=True)
class RunSettings:
    suites: tuple[str, ...] = SUITE_NAMES
    approvers: tuple[str, ...] = APPROVERS
    attack: str = "important_instructions"
    limit: int | None = None    # a seeded sample of N cases per suite; None: every case
    seed: int = 0
    benchmark_version: str = BENCHMARK_VERSION
    max_steps: int | None = None  # replies per run; None: 12, or more when the user task needs more calls


@dataclass
class CaseResult:
    """One run: a user task alone (injection_task None) or under one injection."""

    model: str
    approver: str
    suite: str
    user_task: str
    injection_task: str | None
    utility: bool
    security: bool | None       # AgentDojo's verdict: True when the injection's goal was reached
    confirmations: int
    approved: int
    executed: list[str]
    refused: list[str]
    steps: int
    error: str | None
    answer_marked: bool         # the final answer carried untrusted_reads: the page shows it with a notice
    seconds: float
    run_of: str | None = None   # the approver whose run this is (no confirmation asked: the same run for all)

    def as_json(self) -> dict:
        return asdict(self)


@dataclass
class Selection:
    suite: object                 # agentdojo TaskSuite
    cases: list[tuple[str, str]]  # (user task id, injection task id)
    user_tasks: list[str] = field(default_factory=list)


def _number(task_id: str) -> int:
    return int(re.search(r"(\d+)$", task_id).group(1))


def select_cases(settings: RunSettings) -> dict[str, Selection]:
    """Per suite, every (user task, injection task) pair, or a seeded sample of `limit` of them."""
    selections = {}
    for name, suite in load_suites(settings.suites, settings.benchmark_version).items():
        pairs = [(user, injection) for user in sorted(suite.user_tasks, key=_number)
                 for injection in sorted(suite.injection_tasks, key=_number)]
        if settings.limit is not None and settings.limit < len(pairs):
            chosen = set(random.Random(f"{settings.seed}:{name}").sample(range(len(pairs)), settings.limit))
            pairs = [pair for index, pair in enumerate(pairs) if index in chosen]
        user_tasks = sorted({user for user, _ in pairs}, key=_number)
        selections[name] = Selection(suite, pairs, user_tasks)
    return selections


def run_cases(element: BotPsyElement, model_name: str, make_model, settings: RunSettings,
              selections: dict[str, Selection] | None = None,
              on_result: Callable[[CaseResult], None] = lambda result: None) -> list[CaseResult]:
    """Every selected case (and each of its user tasks without attack) under every approver.

    A case's environment is loaded (and injected) once and each approver runs on its own deep
    copy: loading parses AgentDojo's YAML, the slowest step of a scripted run. A run in which the
    model asked for no confirmation never met the approver, so it is the same run under every
    approver (both models are deterministic: scripted, or greedy): it runs once and is counted
    under each, which spares a browser model two thirds of its time on read-only runs."""
    selections = selections or select_cases(settings)
    results = []
    for suite_name, selection in selections.items():
        suite = selection.suite
        attack = load_attack(settings.attack, suite, element)
        for user_id, injection_id in [(user, None) for user in selection.user_tasks] + selection.cases:
            user_task = suite.get_user_task_by_id(user_id)
            injection_task = suite.get_injection_task_by_id(injection_id) if injection_id else None
            injections = attack.attack(user_task, injection_task) if injection_task else {}
            environment = suite.load_and_inject_default_environment(injections)
            unasked = None  # a run of this case in which no confirmation was asked
            for approver in settings.approvers:
                if unasked is not None:
                    result = replace(unasked, approver=approver, seconds=0.0, run_of=unasked.approver)
                    results.append(result)
                    on_result(result)
                    continue
                element.case = CaseSetup(suite_name, user_task, injection_task, approver, make_model,
                                         settings.max_steps)
                started = time.perf_counter()
                utility, security = suite.run_task_with_pipeline(element, user_task, injection_task, injections,
                                                                 environment=environment.model_copy(deep=True))
                record = element.record
                result = CaseResult(model_name, approver, suite_name, user_id, injection_id, bool(utility),
                                    bool(security) if injection_task else None, record.confirmations,
                                    record.approved, record.executed, record.refused, record.steps, record.error,
                                    record.answer_marked, round(time.perf_counter() - started, 3))
                results.append(result)
                on_result(result)
                if record.confirmations == 0:
                    unasked = result
    return results


def agent_options(max_tokens: int) -> AgentOptions:
    # AgentDojo's suites live on their own dates (their tools say which day it is): no line of ours
    # with the real one.
    return AgentOptions(max_tokens=max_tokens, temperature=0.0, now_line=False)


def run_folder_in_browser(folder: Path, settings: RunSettings, selections: dict[str, Selection] | None = None,
                          on_result: Callable[[CaseResult], None] = lambda result: None, *, dtype: str | None = None,
                          backend: str = "wasm", max_tokens: int = 512) -> list[CaseResult]:
    """The cases with an exported folder as the model: web/runtime in headless Chromium, greedy
    (botpsy_eval.browser), one model load for every run; the prompts and the parser are the folder's."""
    from botpsy_eval.browser import BrowserModel, browser_page

    from .models import BrowserAgentModel, browser_model_factory, folder_chat_format

    folder = Path(folder).resolve()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    dtype = dtype or next((d for d in ("fp32", "q8", "q4") if d in manifest.get("dtypes", {})), None)
    chat_format, special_tokens = folder_chat_format(folder)
    element = BotPsyElement(chat_format, special_tokens, agent_options(max_tokens))
    with browser_page(folder) as (page, folder_url):
        browser_model = BrowserModel(page, folder_url, backend, dtype)
        try:
            name = f"{folder.name} {browser_model.info['dtype']}"
            make_model = browser_model_factory(BrowserAgentModel(browser_model))
            return run_cases(element, name, make_model, settings, selections, on_result)
        finally:
            browser_model.close()
