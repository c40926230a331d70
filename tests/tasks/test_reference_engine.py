"""`--reference pytorch` runs the tasks with the same agent under CPython, with free tool calls
(the reference takes no grammar), and its records resume like the browser's. The PyTorch model is
replaced here by a scripted stand-in with TorchModel's interface (botpsy_eval's own tests cover
the real one); everything else is the command's own code."""

import json
from types import SimpleNamespace

import pytest

from botpsy_web.cli import main

from .conftest import TEMPLATE, xml_call


class ScriptedTorchModel:
    """TorchModel's interface: generate(prompt, max_tokens, logits_processors) -> .text."""
    prompts = []

    def __init__(self, folder, threads=None):
        self.outputs = iter([xml_call("calculator", expression="0.17 * 2340"), "It is 397.8."])

    def generate(self, prompt, max_tokens, logits_processors=None):
        assert not logits_processors, "the reference runs free tool calls"
        ScriptedTorchModel.prompts.append(prompt)
        return SimpleNamespace(text=next(self.outputs))


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": TEMPLATE.read_text()}))
    (folder / "manifest.json").write_text(json.dumps({
        "source": "scripted", "dtypes": {"q8": {"file": "onnx/model_quantized.onnx"}},
        "tool_call_format": "qwen3_coder_xml", "chat_template_supports_tools": True}))
    return folder


def test_the_reference_runs_the_tasks_with_free_calls_and_resumes(folder, task_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("botpsy_eval.reference.TorchModel", ScriptedTorchModel)
    tasks = task_file({"id": "pct", "category": "calculator", "turns": ["What is 17% of 2,340?"],
                       "checks": [{"answer_number": 397.8}, {"called": "calculator"}]})
    records = tmp_path / "records.jsonl"
    arguments = ["tasks", str(folder), "--dtype", "none", "--reference", "pytorch", "--tasks", str(tasks),
                 "--outputs", str(records), "--json", "--no-progress"]
    assert main(arguments) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["engines"]["pytorch fp32"]["done"] == {"calculator": 1, "overall": 1}
    run = json.loads(records.read_text())
    assert (run["engine"], run["record"]["tool_calls"], run["done"]) == ("pytorch", "off", True)
    assert len(ScriptedTorchModel.prompts) == 2 and "What is 17% of 2,340?" in ScriptedTorchModel.prompts[0]

    assert main(arguments + ["--resume"]) == 0  # read back: the model is not asked again
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["reused_runs"] == 1
    assert len(ScriptedTorchModel.prompts) == 2 and len(records.read_text().splitlines()) == 1


@pytest.mark.parametrize("extra, words", [
    (["--dtype", "fp16"], "--dtype 'fp16' is not in"),
    (["--dtype", "none"], "nothing to run"),
    (["--reference", "pytorch", "--temperature", "0.7"], "decodes greedily"),
    (["--limit", "0"], "--limit must be at least 1"),
    (["--resume"], "--resume goes on from an earlier run's file"),
    (["--categories", "poetry"], "no task has category 'poetry'"),
])
def test_bad_options_are_refused_naming_the_option(folder, extra, words, capsys):
    assert main(["tasks", str(folder), *extra]) == 2
    assert words in capsys.readouterr().err


def test_a_bad_task_file_is_refused_before_anything_runs(folder, task_file, capsys):
    bad = task_file({"id": "x", "category": "c", "turns": ["hi"], "checks": [{"answer_number": "many"}]})
    assert main(["tasks", str(folder), "--tasks", str(bad)]) == 2
    assert f"{bad}:1 (task x): checks[0].answer_number: must be a number" in capsys.readouterr().err
