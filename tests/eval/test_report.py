"""The summary: accuracy per engine, dtype, tool-call mode and category with an unweighted
overall mean; unparsed calls counted, and every call by how it opened; browser fp32 cases whose tokens differ from PyTorch's
listed by id; the table says the score is not BFCL v4's overall one."""

from pathlib import Path

from botpsy_eval.data import Case
from botpsy_eval.report import OutputsFile, format_table, summarize
from botpsy_eval.runner import CaseRun, EvalResults, EvalSettings


def case_run(engine, dtype, mode, category, case_id, correct, tokens=(1, 2), unparsed=(), calls=()):
    return CaseRun(engine, dtype, mode, category, case_id, "prompt", "output", list(tokens), list(calls),
                   list(unparsed), correct, "" if correct else "wrong", 100, len(tokens), "eos", 1.5)


def call(opening):
    return {"name": "f", "arguments": {}, "opening": opening}


def results():
    cases = [Case("a1", "simple_python", [], [], None), Case("a2", "simple_python", [], [], None),
             Case("b1", "irrelevance", [], [], None)]
    runs = [case_run("browser", "fp32", "free", "simple_python", "a1", True, calls=[call("bare_json")]),
            case_run("browser", "fp32", "free", "simple_python", "a2", False,
                     unparsed=[{"raw": "{", "error": "x", "opening": "fenced_json"}]),
            case_run("browser", "fp32", "free", "irrelevance", "b1", True),
            case_run("browser", "q8", "constrained", "simple_python", "a1", True, calls=[call("bare_json")]),
            case_run("browser", "q8", "constrained", "simple_python", "a2", True,
                     calls=[call("tool_call_tag"), call("bare_json")]),
            case_run("browser", "q8", "constrained", "irrelevance", "b1", False),
            case_run("pytorch", "fp32", "free", "simple_python", "a1", True),
            case_run("pytorch", "fp32", "free", "simple_python", "a2", True, tokens=(1, 3)),
            case_run("pytorch", "fp32", "free", "irrelevance", "b1", True)]
    settings = EvalSettings(Path("/m/smol"), ("fp32", "q8"), ("simple_python", "irrelevance"), limit=2)
    return EvalResults(settings, "smol", cases, runs, seconds=60.0)


def test_accuracy_is_per_category_with_an_unweighted_overall_mean():
    summary = summarize(results(), Path("out.jsonl"))
    assert summary["cases"] == {"simple_python": 2, "irrelevance": 1}
    assert summary["accuracy"]["browser"]["fp32"]["free"] == {"simple_python": 0.5, "irrelevance": 1.0, "overall": 0.75}
    assert summary["accuracy"]["browser"]["q8"]["constrained"]["overall"] == 0.5
    assert summary["accuracy"]["pytorch"]["free"]["overall"] == 1.0
    assert summary["unparsed_calls"] == {"browser": {"fp32": {"free": 1}, "q8": {"constrained": 0}}, "pytorch": {"free": 0}}
    assert summary["cases_per_minute"] == 9.0 and summary["outputs"] == "out.jsonl"


def test_browser_fp32_cases_that_differ_from_pytorch_are_listed():
    parity = summarize(results(), None)["fp32_vs_pytorch"]
    assert parity == {"compared": 3, "same_tokens": 2,
                      "differing": [{"id": "a2", "browser_correct": False, "pytorch_correct": True}]}
    table = format_table(summarize(results(), None))
    assert "differs: a2" in table and "2/3 cases with the same tokens" in table


def test_the_table_has_a_column_per_engine_and_says_what_the_score_is():
    table = format_table(summarize(results(), None))
    header = next(line for line in table.splitlines() if line.startswith("category"))
    assert header.split()[2:] == ["fp32", "free", "q8", "constrained", "pytorch"]
    assert "not BFCL v4's overall score" in table
    assert "0.750" in next(line for line in table.splitlines() if line.startswith("overall"))


def test_the_outputs_file_holds_one_json_line_per_case_run(tmp_path):
    import json

    outputs = OutputsFile(tmp_path / "deep" / "runs.jsonl")
    for run in results().runs:
        outputs.write(run)
    lines = [json.loads(line) for line in (tmp_path / "deep" / "runs.jsonl").read_text().splitlines()]
    assert len(lines) == 9 and lines[1]["unparsed"] == [{"raw": "{", "error": "x", "opening": "fenced_json"}]
    assert lines[0]["prompt"] == "prompt" and lines[0]["calls"] == [call("bare_json")]


def test_calls_are_counted_by_how_they_opened():
    summary = summarize(results(), None)
    assert summary["calls_by_opening"] == {
        "browser": {"fp32": {"free": {"bare_json": 1, "fenced_json": 1}},
                    "q8": {"constrained": {"bare_json": 2, "tool_call_tag": 1}}},
        "pytorch": {"free": {}}}
    table = format_table(summary).splitlines()
    assert "  fp32 free: bare_json 1, fenced_json 1" in table and "  pytorch: none" in table


def test_each_column_says_how_often_it_wrote_the_original_models_tokens():
    summary = summarize(results(), None)
    # PyTorch is the baseline; a2's browser runs wrote (1, 2) where PyTorch wrote (1, 3).
    assert summary["same_tokens"] == {"baseline": "pytorch free", "compared": 3,
                                      "browser": {"fp32": {"free": 2}, "q8": {"constrained": 2}}, "pytorch": {"free": 3}}
    table = format_table(summary).splitlines()
    assert next(line for line in table if line.startswith("same tokens as pytorch")).split()[-4:] == ["3", "2", "2", "3"]


def test_without_pytorch_the_baseline_is_browser_fp32_free_and_constrained_is_set_against_free():
    base = results()
    runs = [run for run in base.runs if run.engine != "pytorch"]
    runs += [case_run("browser", "q8", "free", run.category, run.case_id, run.correct, tokens=(1, 2) if run.case_id != "b1"
                      else (9,)) for run in runs if run.dtype == "q8"]
    summary = summarize(EvalResults(base.settings, "smol", base.cases, runs, seconds=60.0), None)
    assert summary["same_tokens"]["baseline"] == "browser fp32 free"
    assert summary["same_tokens"]["browser"] == {"fp32": {"free": 3}, "q8": {"constrained": 3, "free": 2}}
    assert summary["constrained_same_as_free"] == {"q8": 2}
    row = next(line for line in format_table(summary).splitlines() if line.startswith("constrained = free"))
    assert row.split()[-1] == "2"
