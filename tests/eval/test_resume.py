"""--resume: a stopped eval goes on from its outputs file. A stored run stands in for a new
generation only when the model, its weights, backend, engine, case, prompt, constraint and token cap would
give the same greedy tokens; failures, changed prompts and other caps are generated again; what is
read back is scored again by today's checker and not written twice; a half-written last line
(a run killed mid-write) is dropped; a file that is not an outputs file is named."""

import json

import pytest

from botpsy_agent.chat_format import ChatFormat
from botpsy_eval.data import load_cases
from botpsy_eval.generation import Generation, GenerationError
from botpsy_eval.pipeline import render_case
from botpsy_eval.report import OutputsFile
from botpsy_eval.resume import EarlierRuns, ResumeError, weights_identity
from botpsy_eval.runner import run_cases

TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
ENGINE = ("browser", "q8", "free")
WHERE = {"model_name": "smol", "weights": "w1", "backend": "wasm"}


class CountingModel:
    """Writes "No tool fits." in three tokens for every prompt (fails on those it is told to); counts calls."""

    def __init__(self, failing=()):
        self.prompts, self.failing = [], set(failing)

    def generate(self, prompt, max_tokens, logits_processors=None):
        self.prompts.append(prompt)
        if prompt in self.failing:
            raise GenerationError("the model worker stopped")
        return Generation("No tool fits.", [5, 6, 2], 40, "eos", 0.5)


@pytest.fixture(scope="module")
def rendered():
    chat_format = ChatFormat(TEMPLATE, "hermes_json", supports_tools=False)
    return chat_format, [render_case(chat_format, case) for case in load_cases(["irrelevance"], limit=4)]


def first_run(tmp_path, rendered, failing=()):
    chat_format, items = rendered
    path = tmp_path / "runs.jsonl"
    outputs = OutputsFile(path)
    runs = run_cases(CountingModel({items[i].prompt for i in failing}), ENGINE, items, chat_format, 64,
                     outputs.write, **WHERE)
    return path, runs


def test_stored_runs_are_read_back_and_scored_instead_of_generated(tmp_path, rendered):
    chat_format, items = rendered
    path, first = first_run(tmp_path, rendered, failing=[1])
    model = CountingModel()
    earlier = EarlierRuns.read(path)
    outputs = OutputsFile(path, append=True)
    again = run_cases(model, ENGINE, items, chat_format, 64, outputs.write, earlier=earlier, **WHERE)

    assert model.prompts == [items[1].prompt]  # only the failed case is generated again
    assert [run.reused for run in again] == [True, False, True, True] and earlier.stale == 1
    assert [run.correct for run in again] == [True, True, True, True]  # irrelevance: no call is right
    assert [(r.output, r.token_ids, r.seconds) for r in again if r.reused] == [
        (r.output, r.token_ids, r.seconds) for r in first if r.stop_reason != "error"]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 5 and "reused" not in lines[0]  # the 4 first runs, then the retried one only
    assert (lines[-1]["case_id"], lines[-1]["stop_reason"], lines[-1]["model"], lines[-1]["backend"]) == (
        items[1].case.id, "eos", "smol", "wasm")
    stored = EarlierRuns.read(path).runs
    assert len(stored) == 4 and {run.stop_reason for run in stored.values()} == {"eos"}  # the retry replaced the failure


def test_a_run_stands_in_only_for_the_same_model_engine_prompt_and_cap(tmp_path, rendered):
    chat_format, items = rendered
    path, _ = first_run(tmp_path, rendered)

    def generated(items=items, max_tokens=64, engine=ENGINE, **where):
        model = CountingModel()
        run_cases(model, engine, items, chat_format, max_tokens, earlier=EarlierRuns.read(path), **{**WHERE, **where})
        return len(model.prompts)

    assert generated() == 0
    assert generated(max_tokens=3) == 0      # stopped by itself at 3 tokens: any cap of 3 or more
    assert generated(max_tokens=2) == 4      # a cap it would have hit
    assert generated(model_name="smol-other") == 4
    assert generated(weights="w2") == 4     # the folder exported again with other weights
    assert generated(backend="webgpu") == 4
    assert generated(engine=("browser", "q8", "constrained")) == 4
    assert generated(engine=("browser", "q4", "free")) == 4
    changed = [type(item)(item.case, item.prompt + "!", item.tool_specs, item.constrained_processors) for item in items]
    assert generated(items=changed) == 4     # the agent renders another prompt today


def without_digests(path):
    """A copy of an outputs file as written before runs recorded their constraint digest."""
    undated = path.with_name("undated-" + path.name)
    undated.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "constraint"}) + "\n"
                               for line in path.read_text().splitlines()))
    return undated


def test_a_constrained_run_stands_in_only_for_the_same_constraint(tmp_path, rendered):
    chat_format, items = rendered
    assert all(item.constrained_processors for item in items)
    constrained = ("browser", "q8", "constrained")
    path = tmp_path / "runs.jsonl"
    outputs = OutputsFile(path)
    run_cases(CountingModel(), constrained, items, chat_format, 64, outputs.write, **WHERE)

    def generated(items=items, path=path):
        model = CountingModel()
        runs = run_cases(model, constrained, items, chat_format, 64, earlier=EarlierRuns.read(path), **WHERE)
        assert all(run.constraint for run in runs)
        return len(model.prompts)

    assert generated() == 0
    regrammared = [type(item)(item.case, item.prompt, item.tool_specs,
                              [{**item.constrained_processors[0], "changed": True}, *item.constrained_processors[1:]])
                   for item in items]
    assert generated(items=regrammared) == 4  # same prompt, another grammar: generated again
    # a line written before the digest was recorded cannot say which grammar it ran under
    assert generated(path=without_digests(path)) == 4
    free_path, _ = first_run(tmp_path, rendered)
    model = CountingModel()
    earlier = EarlierRuns.read(without_digests(free_path))
    runs = run_cases(model, ENGINE, items, chat_format, 64, earlier=earlier, **WHERE)
    assert not model.prompts and all(run.reused and run.constraint == "" for run in runs)  # free needs no digest


def test_a_run_cut_at_its_cap_stands_in_only_for_that_cap(tmp_path, rendered):
    chat_format, items = rendered
    path = tmp_path / "runs.jsonl"

    class CutModel(CountingModel):
        def generate(self, prompt, max_tokens, logits_processors=None):
            self.prompts.append(prompt)
            return Generation("No", [5] * max_tokens, 40, "max_tokens", 0.5)

    outputs = OutputsFile(path)
    run_cases(CutModel(), ENGINE, items[:1], chat_format, 8, outputs.write, **WHERE)
    for max_tokens, expected in ((8, 0), (9, 1), (7, 1)):
        model = CutModel()
        run_cases(model, ENGINE, items[:1], chat_format, max_tokens, earlier=EarlierRuns.read(path), **WHERE)
        assert len(model.prompts) == expected, max_tokens


def test_without_a_model_every_case_must_be_read_back(tmp_path, rendered):
    chat_format, items = rendered
    path, _ = first_run(tmp_path, rendered)
    runs = run_cases(None, ENGINE, items, chat_format, 64, earlier=EarlierRuns.read(path), **WHERE)
    assert all(run.reused for run in runs)
    with pytest.raises(RuntimeError, match="no earlier run"):
        run_cases(None, ENGINE, items, chat_format, 2, earlier=EarlierRuns.read(path), **WHERE)


def test_a_half_written_last_line_is_dropped_and_a_foreign_file_is_named(tmp_path, rendered):
    path, _ = first_run(tmp_path, rendered)
    whole = path.read_text()
    path.write_text(whole + '{"engine": "browser", "dtype": "q')  # killed mid-write
    assert len(EarlierRuns.read(path).runs) == 4
    OutputsFile(path, append=True)
    assert path.read_text() == whole

    assert EarlierRuns.read(tmp_path / "none-yet.jsonl").runs == {}  # nothing to resume: a fresh run
    (tmp_path / "notes.txt").write_text("my notes\nmore notes\n")
    with pytest.raises(ResumeError, match=r"notes\.txt:1 is not JSON"):
        EarlierRuns.read(tmp_path / "notes.txt")
    old = json.loads(whole.splitlines()[0])
    del old["model"], old["backend"], old["weights"]
    (tmp_path / "old.jsonl").write_text(json.dumps(old) + "\n")
    with pytest.raises(ResumeError, match=r"old\.jsonl:1 lacks backend, model, weights"):
        EarlierRuns.read(tmp_path / "old.jsonl")


def test_the_weights_identity_is_the_manifests_digests_of_what_each_engine_runs(tmp_path):
    files = {name: {"sha256": name * 2} for name in ("config.json", "tokenizer.json", "onnx/a.onnx", "onnx/a.data",
                                                      "onnx/a.appending.onnx", "onnx/b.onnx")}
    manifest = {"source": "smollm2-135m", "files": files, "dtypes": {
        "q8": {"file": "onnx/a.onnx", "files": ["onnx/a.onnx", "onnx/a.data"], "appending_file": "onnx/a.appending.onnx"},
        "q4": {"file": "onnx/b.onnx", "files": ["onnx/b.onnx"]}}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    q8, q4, torch = (weights_identity(tmp_path, engine) for engine in
                     (("browser", "q8", "free"), ("browser", "q4", "free"), ("pytorch", "fp32", "free")))
    assert len({q8, q4, torch}) == 3 and weights_identity(tmp_path, ("browser", "q8", "constrained")) == q8
    files["onnx/a.data"]["sha256"] = "changed"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert weights_identity(tmp_path, ("browser", "q8", "free")) != q8
    assert weights_identity(tmp_path, ("browser", "q4", "free")) == q4
    assert weights_identity(tmp_path, ("pytorch", "fp32", "free")) == torch


def test_a_compressed_outputs_file_grows_and_is_read_back_like_a_plain_one(tmp_path, rendered):
    chat_format, items = rendered
    path = tmp_path / "runs.jsonl.gz"
    outputs = OutputsFile(path)
    first = run_cases(CountingModel(), ENGINE, items[:2], chat_format, 64, outputs.write, **WHERE)
    assert path.read_bytes()[:2] == b"\x1f\x8b"  # really gzip

    earlier = EarlierRuns.read(path)
    assert len(earlier.runs) == 2
    model = CountingModel()
    outputs = OutputsFile(path, append=True)
    again = run_cases(model, ENGINE, items, chat_format, 64, outputs.write, earlier=earlier, **WHERE)
    assert len(model.prompts) == len(items) - 2           # only the new cases generated
    assert [(run.correct, run.reused) for run in again[:2]] == [(run.correct, True) for run in first]
    assert len(EarlierRuns.read(path).runs) == len(items)  # the appended member is read too


def test_a_compressed_file_cut_mid_write_keeps_every_whole_line(tmp_path, rendered):
    path, _ = first_run(tmp_path, rendered)
    import gzip
    packed = tmp_path / "runs.jsonl.gz"
    data = gzip.compress(path.read_bytes())
    packed.write_bytes(data[: len(data) - 40])   # the last member cut short: no trailer, part of a line lost
    runs = EarlierRuns.read(packed).runs
    assert 0 < len(runs) <= 4
    OutputsFile(packed, append=True)             # drops the half line before appending
    assert gzip.decompress(packed.read_bytes()).endswith(b"\n")


def test_runs_appended_after_a_killed_writer_are_all_read_back(tmp_path):
    from botpsy_eval.jsonl_files import open_for_lines, read_text

    path = tmp_path / "runs.jsonl.gz"
    killed = open_for_lines(path, append=False)
    killed.write('{"first": 1}\n{"half": ')
    killed.flush()                              # never closed: its gzip member has no end
    OutputsFile(path, append=True)              # a --resume run rewrites the file whole first
    appended = open_for_lines(path, append=True)
    appended.write('{"later": 2}\n')
    appended.close()
    assert read_text(path) == '{"first": 1}\n{"later": 2}\n'


@pytest.mark.parametrize("name", ["runs.jsonl", "runs.jsonl.gz"])
def test_a_file_replaced_under_a_running_eval_gets_the_later_runs(tmp_path, name):
    """A `git stash` (or checkout, or an editor's save) replaces the file while a long eval runs:
    the runs that end afterwards go to the file at the path, not to the replaced copy."""
    from botpsy_eval.jsonl_files import RunLines, read_text

    path = tmp_path / name
    lines = RunLines(path)
    lines.append({"case": 1})
    replacement = tmp_path / "replacement"
    replacement.write_bytes(path.read_bytes())
    replacement.replace(path)                    # a new file (inode) at the same path
    lines.append({"case": 2})
    assert read_text(path) == '{"case": 1}\n{"case": 2}\n'


def test_multi_turn_records_resume_after_a_half_written_line(tmp_path):
    from botpsy_eval.multi_turn.runner import RecordsFile

    path = tmp_path / "records.jsonl"
    path.write_text('{"case_id": "a"}\n{"case_id": "b", "corr')   # killed mid-write
    records = RecordsFile(path, append=True)
    records.lines.append({"case_id": "c"})
    assert path.read_text() == '{"case_id": "a"}\n{"case_id": "c"}\n'
    assert records.transcripts == tmp_path / "records-transcripts"
