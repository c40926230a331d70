"""Run the sampled multi-turn cases through each engine, write their transcripts, score them.

Engines as in the single-turn eval: per dtype, one model load in the browser (with an agent
worker) and every case with free and/or constrained tool calls; then, when asked, the
PyTorch model the folder was exported from, free only, with the same environments and the
same agent code under CPython. Each case run writes its transcript (one JSON file) and one
line of the records file; --resume reads both back and runs only what is missing, was run
under another prompt or grammar (first_prompt.py), or would go otherwise with today's agent
(replay.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable

from ..jsonl_files import RunLines
from ..resume import weights_identity
from ..settings import EvalSettings
from .checker import score_transcript
from .data import MultiTurnCase, bfcl_constants, load_cases
from .first_prompt import starts_alike, todays_start
from .replay import replays_alike


def bfcl_step_limit() -> int:
    """Generations a turn may take: BFCL counts the steps that called tools and forces a quit
    once that count passes MAXIMUM_STEP_LIMIT, so a turn gets one more generation than that."""
    prompts, _ = bfcl_constants()
    return prompts.MAXIMUM_STEP_LIMIT + 1


@dataclass
class MultiTurnRun:
    """One case through one engine: the records file's line (the transcript is beside it)."""
    engine: str                 # "browser" | "pytorch"
    dtype: str
    tool_calls: str             # "free" | "constrained"
    category: str
    case_id: str
    correct: bool
    error_type: str             # BFCL's checker's, "" when correct
    reason: str
    no_call_turns_ok: bool      # BFCL's multi_turn_irrelevance_checker (reported, not scored)
    turns: int                  # turns run (fewer than the case's after a force-quit or failure)
    turns_expected: int
    steps_per_turn: list[int]   # generations per turn
    calls_ran: int
    calls_refused: int          # read but not run (unparsable, unknown tool, arguments against the schema)
    forced_quit: bool
    failed: bool                # generation failed (the worker, the page or the model)
    seconds: float
    outputs_digest: str         # sha256 of every generation's text, in order: same digest, same outputs
    transcript: str             # path of the transcript file
    model: str = ""
    weights: str = ""
    backend: str = ""
    max_tokens: int = 0
    max_steps: int = 0
    reused: bool = False        # read back (--resume), not run now

    def key(self) -> tuple:
        return (self.model, self.weights, self.backend, self.engine, self.dtype, self.tool_calls, self.case_id,
                self.max_tokens, self.max_steps)


@dataclass
class MultiTurnResults:
    settings: EvalSettings
    model: str
    cases: list[MultiTurnCase]
    runs: list[MultiTurnRun] = field(default_factory=list)
    engine_info: dict = field(default_factory=dict)
    seconds: float = 0.0


def outputs_digest(transcript: dict) -> str:
    outputs = [step["output"] for turn in transcript.get("turns", []) for step in turn.get("steps", [])]
    return hashlib.sha256(json.dumps(outputs, ensure_ascii=False).encode()).hexdigest()[:16]


def make_run(case: MultiTurnCase, transcript: dict, engine: tuple[str, str, str], transcript_path: Path,
             **identity) -> MultiTurnRun:
    verdict = score_transcript(case, transcript)
    calls = [call for turn in transcript.get("turns", []) for step in turn["steps"] for call in step["calls"]]
    return MultiTurnRun(
        *engine, case.category, case.id, verdict.correct, verdict.error_type, verdict.reason, verdict.no_call_turns_ok,
        len(transcript.get("turns", [])), len(case.turns), [len(turn["steps"]) for turn in transcript.get("turns", [])],
        sum(call["ran"] for call in calls), sum(not call["ran"] for call in calls), bool(transcript.get("forced_quit")),
        bool(transcript.get("error")), round(float(transcript.get("seconds", 0.0)), 3), outputs_digest(transcript),
        str(transcript_path), **identity)


class EarlierMultiTurnRuns:
    """Runs in an earlier records file whose transcripts are still there (--resume)."""

    def __init__(self, path: Path | None = None):
        self.runs: dict[tuple, MultiTurnRun] = {}
        if path is None or not Path(path).is_file():
            return
        names = {f.name for f in fields(MultiTurnRun)}
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                run = MultiTurnRun(**{key: value for key, value in json.loads(line).items() if key in names})
            except (json.JSONDecodeError, TypeError) as error:
                raise ValueError(f"{path} line {number} is not a multi-turn run record: {error}") from None
            if not run.failed and Path(run.transcript).is_file():
                self.runs[run.key()] = run

    def transcript(self, key: tuple) -> tuple[dict, Path] | None:
        run = self.runs.get(key)
        if run is None:
            return None
        return json.loads(Path(run.transcript).read_text(encoding="utf-8")), Path(run.transcript)


class RecordsFile:
    """The records (one JSON line per case run, written as each ends: jsonl_files.RunLines) and
    the transcripts beside."""

    def __init__(self, path: Path, append: bool):
        self.lines = RunLines(path, append)
        self.path = self.lines.path
        self.transcripts = self.path.with_name(self.path.stem + "-transcripts")

    def transcript_path(self, engine: tuple[str, str, str], case_id: str) -> Path:
        return self.transcripts / "-".join(engine) / f"{case_id}.json"

    def write_transcript(self, path: Path, transcript: dict) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(transcript, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")

    def write(self, run: MultiTurnRun) -> None:
        if run.reused:
            return
        entry = asdict(run)
        del entry["reused"]
        self.lines.append(entry)


class _TorchAgentModel:
    """The PyTorch reference as the agent's Model: greedy, free tool calls only."""

    def __init__(self, torch_model):
        self.torch_model = torch_model

    async def generate(self, prompt: str, options: dict):
        generation = self.torch_model.generate(prompt, int(options["maxTokens"]), options.get("logitsProcessors"))
        yield generation.text


def run_multi_turn(settings: EvalSettings, records: RecordsFile, earlier: EarlierMultiTurnRuns | None = None,
                   on_run: Callable[[MultiTurnRun], None] = lambda run: None,
                   on_stage: Callable[[str], None] = lambda stage: None,
                   on_step: Callable[[dict], None] = lambda progress: None) -> MultiTurnResults:
    from ..pipeline import chat_format_for

    started = time.perf_counter()
    earlier = earlier or EarlierMultiTurnRuns()
    cases = load_cases(settings.categories, settings.limit, settings.seed)
    model_name = Path(settings.folder).name
    results = MultiTurnResults(settings, model_name, cases)
    max_steps = bfcl_step_limit()
    agent_settings = {"max_tokens": settings.max_tokens, "max_steps": max_steps}

    # Read once, at the start: the weights an engine loads then are the ones it runs, whatever
    # happens to the folder meanwhile (an export written again in place).
    weights = {engine: weights_identity(settings.folder, engine) for engine, _ in settings.engines()}

    def identity(engine, backend) -> dict:
        return {"model": model_name, "weights": weights[engine], "backend": backend,
                "max_tokens": settings.max_tokens, "max_steps": max_steps}

    def key(engine, backend, case) -> tuple:
        ident = identity(engine, backend)
        return (model_name, ident["weights"], backend, *engine, case.id, settings.max_tokens, max_steps)

    chat_format = chat_format_for(settings.folder)
    starts: dict[tuple, tuple[str, str]] = {}

    def standing(engine, backend, case) -> tuple[dict, Path] | None:
        """The stored transcript of the case, if it ran under today's prompt and grammar and today's
        agent makes the same of its outputs (replay.py)."""
        stored = earlier.transcript(key(engine, backend, case))
        if stored is None:
            return None
        mode = engine[2]
        settings_now = {**agent_settings, "tool_calls": mode}
        if (case.id, mode) not in starts:
            starts[(case.id, mode)] = todays_start(case.for_the_agent(), chat_format, settings_now)
        if not starts_alike(stored[0], starts[(case.id, mode)]):
            return None
        return stored if replays_alike(case.for_the_agent(), stored[0], chat_format, settings_now) else None

    # Every stored run is judged now, before a browser opens: judging runs the agent under asyncio,
    # which cannot start beside Playwright's sync API (it keeps a loop running in this thread).
    standing_runs = {(engine, backend, case.id): standing(engine, backend, case)
                     for engine, backend in settings.engines() for case in cases}

    def pending(engine, backend) -> list[MultiTurnCase]:
        return [case for case in cases if standing_runs[(engine, backend, case.id)] is None]

    def run_engine(engine, backend, run_case) -> None:
        for case in sorted(cases, key=shared_prompt_order):
            stored = standing_runs[(engine, backend, case.id)]
            if stored is not None:
                transcript, path = stored
            else:
                transcript = run_case(case, {**agent_settings, "tool_calls": engine[2]})
                path = records.transcript_path(engine, case.id)
                records.write_transcript(path, transcript)
            run = make_run(case, transcript, engine, path, **identity(engine, backend), reused=stored is not None)
            records.write(run)
            results.runs.append(run)
            on_run(run)

    browser_engines = [(engine, backend) for engine, backend in settings.engines() if engine[0] == "browser"]
    to_load = [dtype for dtype in settings.dtypes
               if any(pending(engine, backend) for engine, backend in browser_engines if engine[1] == dtype)]
    for engine, backend in browser_engines:  # everything read back: scored without a browser
        if engine[1] not in to_load:
            run_engine(engine, backend, None)
    if to_load:
        from botpsy_web.build_py import build_eval_bundle

        from ..browser import browser_page
        from .browser import BrowserConversations

        bundle = build_eval_bundle()
        with browser_page(settings.folder) as (page, folder_url):
            bundle_url = folder_url.split("/models/")[0] + "/static/build/" + bundle.name
            for dtype in to_load:
                on_stage(f"loading {dtype} in the browser")
                conversations = BrowserConversations(page, folder_url, settings.backend, dtype, bundle_url, on_step)
                results.engine_info[conversations.name] = conversations.info
                try:
                    for engine, backend in browser_engines:
                        if engine[1] == dtype:
                            on_stage(" ".join(engine))
                            run_engine(engine, backend,
                                       lambda case, agent_options: conversations.run_case(case.for_the_agent(),
                                                                                          agent_options))
                finally:
                    conversations.close()
    if settings.reference == "pytorch":
        engine = ("pytorch", "fp32", "free")
        model = None
        if pending(engine, "cpu"):
            from ..reference import TorchModel

            on_stage("loading the PyTorch reference")
            model = _TorchAgentModel(TorchModel(settings.folder, settings.torch_threads))
        on_stage("pytorch fp32 free")
        run_engine(engine, "cpu",
                   lambda case, agent_options: _run_in_cpython(case, model, chat_format, agent_options, on_step))
    results.seconds = time.perf_counter() - started
    return results


def shared_prompt_order(case: MultiTurnCase) -> tuple:
    """Cases offering the same functions run one after another: their prompts are the same up to the
    first user message (system prompt and tool docs, ~3,000 tokens), which the next case then reuses
    (the browser's prefix cache, the PyTorch reference's kept state) instead of computing again."""
    return tuple(function["name"] for function in case.functions), case.category, case.id


def _run_in_cpython(case: MultiTurnCase, model, chat_format, agent_settings: dict, on_step) -> dict:
    from .conversation import run_conversation

    def with_case(progress: dict) -> None:
        on_step({"case_id": case.id, **progress})

    try:
        return asyncio.run(run_conversation(case.for_the_agent(), model, chat_format, agent_settings, with_case))
    except Exception as error:  # recorded as a failed case, like a browser failure
        return {"case_id": case.id, "category": case.category, "turns": [], "forced_quit": False,
                "error": f"{type(error).__name__}: {error}"}
