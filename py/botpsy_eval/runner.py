"""Run the sampled cases through each engine and score them.

For each dtype: one model load in the browser, then every case with free tool calls and/or
constrained ones; then, when asked, the PyTorch reference (free only). Prompts are rendered
once, by the agent (pipeline.render_case): every engine sees the same text.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from botpsy_agent.chat_format import ChatFormat

from .checker import Verdict, score_case
from .constraint import constraint_digest
from .data import Case, load_cases
from .generation import Generation, GenerationError
from .pipeline import ReadCalls, RenderedCase, chat_format_for, read_calls, render_case
from .resume import EarlierRuns, RunKey, weights_identity
from .settings import EvalSettings


@dataclass
class CaseRun:
    """One case through one engine: what it was given, what it wrote, how it scored."""
    engine: str                 # "browser" | "pytorch"
    dtype: str                  # "fp32", "q8", ...
    tool_calls: str             # "free" | "constrained"
    category: str
    case_id: str
    prompt: str
    output: str
    token_ids: list[int]
    calls: list[dict]           # [{"name", "arguments", "opening"}] that parsed (opening: ParsedCall.opening)
    unparsed: list[dict]        # [{"raw", "error", "opening"}] that did not
    correct: bool
    reason: str
    prompt_tokens: int
    output_tokens: int
    stop_reason: str            # "eos" | "stop_string" | "max_tokens", or "error" when generation failed
    seconds: float
    model: str = ""             # the folder's name
    weights: str = ""           # resume.weights_identity: the digests of the files this engine ran
    backend: str = ""           # "wasm" | "webgpu" for the browser, "cpu" for PyTorch
    reused: bool = False        # read back from an earlier run (--resume), not generated now
    constraint: str = ""        # constraint_digest of the processors it ran under ("" = free)

    def as_json(self) -> dict:
        return asdict(self)


@dataclass
class EvalResults:
    settings: EvalSettings
    model: str
    cases: list[Case]
    runs: list[CaseRun] = field(default_factory=list)
    engine_info: dict = field(default_factory=dict)   # "browser fp32" -> what the runtime reported
    seconds: float = 0.0


class Generator(Protocol):
    """What runs a prompt: browser.BrowserModel, reference.TorchModel."""

    def generate(self, prompt: str, max_tokens: int, logits_processors: list | None = None) -> Generation: ...


def run_key(model_name: str, weights: str, backend: str, engine: tuple[str, str, str], case_id: str) -> RunKey:
    return RunKey(model_name, weights, backend, *engine, case_id)


def run_cases(model: Generator | None, engine: tuple[str, str, str], rendered: list[RenderedCase],
              chat_format: ChatFormat, max_tokens: int, on_run: Callable[[CaseRun], None] = lambda run: None, *,
              model_name: str = "", weights: str = "", backend: str = "",
              earlier: EarlierRuns | None = None) -> list[CaseRun]:
    """Every case through one engine (name, dtype, tool-call mode), scored. A case `earlier`
    holds a standing run for is read back instead of generated (model may then be None)."""
    name, dtype, mode = engine
    earlier = earlier or EarlierRuns()
    runs = []
    for item in rendered:
        processors = item.constrained_processors if mode == "constrained" else []
        constraint = constraint_digest(processors)
        reused = earlier.lookup(run_key(model_name, weights, backend, engine, item.case.id), item.prompt, max_tokens,
                                constraint)
        try:
            if reused is not None:
                generation = reused
            elif model is None:
                raise RuntimeError(f"{item.case.id} has no earlier run and no model was loaded for {engine}")
            else:
                generation = model.generate(item.prompt, max_tokens, processors)
        except GenerationError as error:  # recorded and counted wrong, whatever the category
            generation = Generation("", [], 0, "error", 0.0)
            verdict = Verdict(False, f"generation failed: {error}")
            read = ReadCalls([], [], "")
        else:
            read = read_calls(chat_format, item, generation.text)
            verdict = score_case(item.case, read.calls)
        run = CaseRun(name, dtype, mode, item.case.category, item.case.id, item.prompt, generation.text,
                      generation.token_ids, [{"name": c.name, "arguments": c.arguments, "opening": opening}
                                             for c, opening in zip(read.calls, read.openings)],
                      read.unparsed, verdict.correct, verdict.reason, generation.prompt_tokens,
                      len(generation.token_ids), generation.stop_reason, round(generation.seconds, 3),
                      model_name, weights, backend, reused is not None, constraint)
        runs.append(run)
        on_run(run)
    return runs


def pending_generations(settings: EvalSettings, rendered: list[RenderedCase], earlier: EarlierRuns) -> dict:
    """Per engine: how many of its cases need a new generation (the rest are read back)."""
    model_name = Path(settings.folder).name
    return {engine: len(rendered) - earlier.count_covered(
                [(run_key(model_name, weights_identity(settings.folder, engine), backend, engine, item.case.id),
                  item.prompt, constraint_digest(item.constrained_processors if engine[2] == "constrained" else []))
                 for item in rendered],
                settings.max_tokens)
            for engine, backend in settings.engines()}


def render_cases(settings: EvalSettings) -> tuple[ChatFormat, list[Case], list[RenderedCase]]:
    chat_format = chat_format_for(settings.folder)
    cases = load_cases(settings.categories, settings.limit, settings.seed)
    return chat_format, cases, [render_case(chat_format, case) for case in cases]


def run_eval(settings: EvalSettings, on_run: Callable[[CaseRun], None] = lambda run: None,
             on_stage: Callable[[str], None] = lambda stage: None, earlier: EarlierRuns | None = None,
             prepared: tuple | None = None) -> EvalResults:
    """Every engine over every case. With `earlier`, cases it holds standing runs for are read
    back; an engine with nothing left to generate is not loaded at all. `prepared` is
    render_cases(settings) when the caller already has it."""
    started = time.perf_counter()
    earlier = earlier or EarlierRuns()
    chat_format, cases, rendered = prepared or render_cases(settings)
    model_name = Path(settings.folder).name
    pending = pending_generations(settings, rendered, earlier)
    results = EvalResults(settings, model_name, cases)

    def run_engine(model, engine, backend):
        return run_cases(model, engine, rendered, chat_format, settings.max_tokens, on_run, model_name=model_name,
                         weights=weights_identity(settings.folder, engine), backend=backend, earlier=earlier)

    browser_dtypes = [dtype for dtype in settings.dtypes
                      if any(pending[("browser", dtype, mode)] for mode in settings.tool_calls)]
    for dtype in settings.dtypes:  # fully read back: scored without a browser
        if dtype not in browser_dtypes:
            for mode in settings.tool_calls:
                results.runs += run_engine(None, ("browser", dtype, mode), settings.backend)
    if browser_dtypes:
        from .browser import BrowserModel, browser_page

        with browser_page(settings.folder) as (page, folder_url):
            for dtype in browser_dtypes:
                on_stage(f"loading {dtype} in the browser")
                model = BrowserModel(page, folder_url, settings.backend, dtype)
                results.engine_info[model.name] = model.info
                try:
                    for mode in settings.tool_calls:
                        on_stage(f"browser {dtype} {mode}")
                        results.runs += run_engine(model, ("browser", dtype, mode), settings.backend)
                finally:
                    model.close()
    if settings.reference == "pytorch":
        engine = ("pytorch", "fp32", "free")
        model = None
        if pending[engine]:
            from .reference import TorchModel

            on_stage("loading the PyTorch reference")
            model = TorchModel(settings.folder, settings.torch_threads)
        on_stage("pytorch fp32 free")
        try:
            results.runs += run_engine(model, engine, "cpu")
        finally:
            if model is not None:
                model.close()
    results.seconds = time.perf_counter() - started
    return results
