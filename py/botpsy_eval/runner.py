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
from .data import Case, load_cases
from .generation import Generation, GenerationError
from .pipeline import ReadCalls, RenderedCase, chat_format_for, read_calls, render_case

TOOL_CALL_MODES = ("free", "constrained")
REFERENCES = ("pytorch",)


@dataclass(frozen=True)
class EvalSettings:
    folder: Path
    dtypes: tuple[str, ...]
    categories: tuple[str, ...]
    backend: str = "wasm"
    limit: int | None = None
    seed: int = 0
    tool_calls: tuple[str, ...] = ("free",)
    reference: str | None = None
    max_tokens: int = 256
    torch_threads: int | None = None  # None: torch's default


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
    calls: list[dict]           # [{"name", "arguments"}] that parsed
    unparsed: list[dict]        # [{"raw", "error"}] that did not
    correct: bool
    reason: str
    prompt_tokens: int
    output_tokens: int
    stop_reason: str            # "eos" | "stop_string" | "max_tokens", or "error" when generation failed
    seconds: float

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


def run_cases(model: Generator, engine: tuple[str, str, str], rendered: list[RenderedCase], chat_format: ChatFormat,
              max_tokens: int, on_run: Callable[[CaseRun], None] = lambda run: None) -> list[CaseRun]:
    """Every case through one engine (name, dtype, tool-call mode), scored."""
    name, dtype, mode = engine
    runs = []
    for item in rendered:
        processors = item.constrained_processors if mode == "constrained" else []
        try:
            generation = model.generate(item.prompt, max_tokens, processors)
        except GenerationError as error:  # recorded and counted wrong, whatever the category
            generation = Generation("", [], 0, "error", 0.0)
            verdict = Verdict(False, f"generation failed: {error}")
            read = ReadCalls([], [], "")
        else:
            read = read_calls(chat_format, item, generation.text)
            verdict = score_case(item.case, read.calls)
        run = CaseRun(name, dtype, mode, item.case.category, item.case.id, item.prompt, generation.text,
                      generation.token_ids, [{"name": c.name, "arguments": c.arguments} for c in read.calls],
                      read.unparsed, verdict.correct, verdict.reason, generation.prompt_tokens,
                      len(generation.token_ids), generation.stop_reason, round(generation.seconds, 3))
        runs.append(run)
        on_run(run)
    return runs


def plan_size(settings: EvalSettings, case_count: int) -> int:
    browser = len(settings.dtypes) * len(settings.tool_calls)
    return case_count * (browser + (1 if settings.reference else 0))


def run_eval(settings: EvalSettings, on_run: Callable[[CaseRun], None] = lambda run: None,
             on_stage: Callable[[str], None] = lambda stage: None) -> EvalResults:
    started = time.perf_counter()
    chat_format = chat_format_for(settings.folder)
    cases = load_cases(settings.categories, settings.limit, settings.seed)
    rendered = [render_case(chat_format, case) for case in cases]
    results = EvalResults(settings, Path(settings.folder).name, cases)

    if settings.dtypes:
        from .browser import BrowserModel, browser_page

        with browser_page(settings.folder) as (page, folder_url):
            for dtype in settings.dtypes:
                on_stage(f"loading {dtype} in the browser")
                model = BrowserModel(page, folder_url, settings.backend, dtype)
                results.engine_info[model.name] = model.info
                try:
                    for mode in settings.tool_calls:
                        on_stage(f"browser {dtype} {mode}")
                        results.runs += run_cases(model, ("browser", dtype, mode), rendered, chat_format,
                                                  settings.max_tokens, on_run)
                finally:
                    model.close()
    if settings.reference == "pytorch":
        from .reference import TorchModel

        on_stage("loading the PyTorch reference")
        model = TorchModel(settings.folder, settings.torch_threads)
        on_stage("pytorch fp32 free")
        results.runs += run_cases(model, ("pytorch", "fp32", "free"), rendered, chat_format,
                                  settings.max_tokens, on_run)
        model.close()
    results.seconds = time.perf_counter() - started
    return results
