"""Run the selected tasks through each engine, judge them, write one line per task run.

Engines: the browser (one dtype of the folder, the page's default tool-call mode) and, when
asked, the PyTorch model the folder was exported from, with the same agent under CPython (free
tool calls: the reference takes no grammar). Each task run's line (TaskRun) holds its whole record
(session.py), the verdicts and the failure classes. --resume reads the lines back: a run stands
for the same task digest (everything but the checks), model weights, backend, engine, dtype and
temperature, when today's agent would start it with the same prompt and grammar; it is judged
again with today's checks.
"""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable

from botpsy_eval.jsonl_files import RunLines, read_text
from botpsy_eval.resume import weights_identity

from .checks import judge
from .cpython import folder_page_agent, run_task_in_cpython
from .data import Task
from .failures import failure_classes


@dataclass(frozen=True)
class TaskSettings:
    folder: Path
    dtype: str | None                # None: no browser run
    backend: str = "wasm"
    reference: str | None = None     # "pytorch"
    temperature: float = 0.0
    torch_threads: int | None = None

    def engines(self) -> list[tuple[str, str, str]]:
        """(engine, dtype, backend) in the order they run."""
        listed = [("browser", self.dtype, self.backend)] if self.dtype else []
        if self.reference == "pytorch":
            listed.append(("pytorch", "fp32", "cpu"))
        return listed


@dataclass
class TaskRun:
    """One task through one engine: a line of the records file."""
    engine: str
    dtype: str
    backend: str
    model: str
    weights: str
    temperature: float
    task_id: str
    category: str
    task_digest: str
    turns: int
    done: bool
    failures: list[str]
    verdicts: list[dict]
    seconds: float
    generations: int
    confirmations: int
    record: dict
    reused: bool = False

    def key(self) -> tuple:
        return (self.model, self.weights, self.backend, self.engine, self.dtype, self.temperature, self.task_id,
                self.task_digest)


@dataclass
class TaskResults:
    settings: TaskSettings
    model: str
    tasks: list[Task]
    runs: list[TaskRun] = field(default_factory=list)
    engine_info: dict = field(default_factory=dict)
    seconds: float = 0.0


def make_run(task: Task, record: dict, engine: tuple[str, str, str], model: str, weights: str,
             temperature: float, reused: bool = False) -> TaskRun:
    verdicts = judge(task.checks, record, task.zone())
    return TaskRun(engine[0], engine[1], engine[2], model, weights, temperature, task.id, task.category,
                   task.run_digest(), len(task.data["turns"]), all(v["passed"] for v in verdicts),
                   failure_classes(record, verdicts), verdicts, float(record.get("seconds", 0.0)),
                   int(record.get("generations", 0)), int(record.get("confirmations", 0)), record, reused)


class EarlierTaskRuns:
    """The runs of an earlier records file (--resume), by key; the last line for a key wins."""

    def __init__(self, path: Path | None = None):
        self.runs: dict[tuple, TaskRun] = {}
        if path is None or not Path(path).is_file():
            return
        names = {f.name for f in fields(TaskRun)}
        lines = read_text(Path(path)).splitlines()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                run = TaskRun(**{key: value for key, value in json.loads(line).items() if key in names})
            except (json.JSONDecodeError, TypeError) as error:
                if number == len(lines):  # a run killed mid-write leaves half a line
                    break
                raise ValueError(f"{path}:{number} is not a `botpsy-web tasks` record: {error}") from None
            if not run.record.get("error"):
                self.runs[run.key()] = run

    def standing(self, key: tuple, start: tuple[str, str]) -> dict | None:
        """The stored record for the key, if its first prompt and grammar are today's."""
        run = self.runs.get(key)
        if run is None or (run.record.get("first_prompt_digest"), run.record.get("first_constraint")) != start:
            return None
        return run.record


class _StopAtFirstGeneration:
    """A model that only lets the agent render its first prompt (today's start of a task)."""

    async def generate(self, prompt: str, options: dict):
        raise RuntimeError("only the first prompt is wanted")
        yield ""


def todays_start(agent, task: Task, temperature: float) -> tuple[str, str]:
    record = run_task_in_cpython(agent, _StopAtFirstGeneration(), task.data, temperature)
    return record.get("first_prompt_digest", ""), record.get("first_constraint", "")


def run_tasks(settings: TaskSettings, tasks: list[Task], lines: RunLines, earlier: EarlierTaskRuns | None = None,
              on_run: Callable[[TaskRun], None] = lambda run: None,
              on_stage: Callable[[str], None] = lambda stage: None,
              on_step: Callable[[dict], None] = lambda progress: None) -> TaskResults:
    started = time.perf_counter()
    earlier = earlier or EarlierTaskRuns()
    model_name = Path(settings.folder).name
    results = TaskResults(settings, model_name, tasks)
    # Read once, at the start: the weights an engine loads then are the ones it runs.
    weights = {engine: weights_identity(settings.folder, engine) for engine in settings.engines()}
    agents = {"browser": folder_page_agent(settings.folder), "pytorch": folder_page_agent(settings.folder)}
    agents["pytorch"].options.tool_calls = "off"  # the reference takes no grammar: free calls

    # Every stored run is judged now, before a browser opens (the agent runs under asyncio, which
    # cannot start beside Playwright's sync API).
    standing = {}
    for engine in settings.engines():
        for task in tasks:
            key = (model_name, weights[engine], engine[2], engine[0], engine[1], settings.temperature, task.id,
                   task.run_digest())
            stored = earlier.runs.get(key)
            standing[(engine, task.id)] = stored and earlier.standing(
                key, todays_start(agents[engine[0]], task, settings.temperature))

    def run_engine(engine, run_task) -> None:
        for task in tasks:
            stored = standing[(engine, task.id)]
            record = stored if stored is not None else run_task(task)
            run = make_run(task, record, engine, model_name, weights[engine], settings.temperature,
                           reused=stored is not None)
            if not run.reused:
                entry = asdict(run)
                del entry["reused"]
                lines.append(entry)
            results.runs.append(run)
            on_run(run)

    for engine in settings.engines():
        pending = [task for task in tasks if standing[(engine, task.id)] is None]
        if engine[0] == "browser":
            if not pending:
                run_engine(engine, None)
                continue
            from botpsy_eval.browser import browser_page

            from .browser import BrowserTasks
            from .bundle import build_tasks_bundle

            bundle = build_tasks_bundle()
            run_name = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d%H%M%S")
            with browser_page(settings.folder) as (page, folder_url):
                bundle_url = folder_url.split("/models/")[0] + "/static/build/" + bundle.name
                on_stage(f"loading {engine[1]} in the browser")
                browser = BrowserTasks(page, folder_url, engine[2], engine[1], bundle_url, run_name, on_step)
                results.engine_info[f"browser {engine[1]}"] = browser.info
                on_stage(f"browser {engine[1]}: warm-up {browser.info['warmUpSeconds']:.1f} s "
                         f"({browser.info['warmUpTokens']} tokens)")
                try:
                    run_engine(engine, lambda task: browser.run_task(task.data, settings.temperature))
                finally:
                    browser.close()
        else:
            model = None
            if pending:
                from botpsy_eval.reference import TorchModel

                from .cpython import TorchAgentModel

                if settings.temperature:
                    raise ValueError("the PyTorch reference decodes greedily: run it with --temperature 0")
                on_stage("loading the PyTorch reference")
                model = TorchAgentModel(TorchModel(settings.folder, settings.torch_threads))
            on_stage("pytorch fp32")
            run_engine(engine, lambda task: run_task_in_cpython(agents["pytorch"], model, task.data,
                                                                settings.temperature, on_step))
    results.seconds = time.perf_counter() - started
    return results
