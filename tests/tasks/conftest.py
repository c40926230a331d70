"""Helpers for the task harness's tests: the page's agent under CPython (a Qwen3.5-style template,
qwen3_coder_xml calls), task lines read through the real loader, and a run with the scripted model
judged by the real checks."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from botpsy_agent.scripted_model import ScriptedModel
from botpsy_tasks.cpython import page_agent, run_task_in_cpython
from botpsy_tasks.data import read_task_file
from botpsy_tasks.runner import make_run

TEMPLATE = Path(__file__).parents[1] / "agent" / "templates" / "qwen35_style.jinja"


def xml_call(tool_name, **arguments):
    """A tool call as a Qwen3.5-style model writes it."""
    parameters = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in arguments.items())
    return f"<tool_call>\n<function={tool_name}>\n{parameters}</function>\n</tool_call>"


@dataclass
class Outcome:
    record: dict
    verdicts: list
    failures: list
    done: bool

    def passed(self, kind: str) -> list[bool]:
        return [verdict["passed"] for verdict in self.verdicts if next(iter(verdict["check"])) == kind]


@pytest.fixture
def task_file(tmp_path):
    """task_file(*tasks) -> path of a JSONL file holding them (dicts become JSON lines)."""
    def write(*tasks, name="tasks.jsonl"):
        path = tmp_path / name
        path.write_text("".join((task if isinstance(task, str) else json.dumps(task)) + "\n" for task in tasks),
                        encoding="utf-8")
        return path
    return write


@pytest.fixture
def agent():
    # As the exported folder's tokenizer_config.json: its end-of-message token lets each step's
    # prompt extend the last one (ChatFormat.continue_prompt).
    agent = page_agent({"chat_template": TEMPLATE.read_text(encoding="utf-8"), "eos_token": "<|im_end|>"},
                       {"tool_call_format": "qwen3_coder_xml", "chat_template_supports_tools": True})
    # The checks judge the scripted answers as written: figures stated without a tool are not sent
    # back for a call here (that behaviour has its own tests: tests/agent/test_worked_numbers.py).
    agent.options.figures_from_tools = False
    return agent


@pytest.fixture
def run_task(agent, task_file):
    """run_task(task dict, outputs) -> Outcome: the task read by the loader, run with the scripted model."""
    def run(task, outputs):
        loaded = read_task_file(task_file({"id": "t", "category": "test", **task}))[0]
        model = ScriptedModel(outputs)
        record = run_task_in_cpython(agent, model, loaded.data)
        run = make_run(loaded, record, ("scripted", "-", "cpu"), "scripted", "-", 0.0)
        return Outcome(record, run.verdicts, run.failures, run.done)
    return run
