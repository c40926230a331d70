"""`botpsy-web bench DIR`: how fast does an exported folder run in the browser?

In one headless Chromium session, for each backend (WASM always; WebGPU when a hardware
adapter exists), measures our runtime (web/runtime/model-client.js), transformers.js 4.3.2
on the same folder and dtype, and wllama 3.13 (llama.cpp in WASM) on the GGUF the folder was
exported from (bench_wllama.py; WASM only), and the native ceiling: the same folder and dtype
in Python onnxruntime with the same thread count (bench_native.py; engine "native", WASM's
column only): load time cold and from cache, prefill tok/s at
128 and 1024 tokens, decode tok/s (short context and after 1024 tokens), time to first token,
memory of the page and its workers, an agent-shaped scenario (a ~1k-token system prompt of
tool schemas, then 3 turns whose replies are 32 tokens, the whole conversation resent every
turn) with and without prefix reuse, and a returning visitor's first token (a load from the
cache, then the agent's first prompt). Our runtime's greedy decoding checks tokens guessed
from the context several per call (prompt lookup, web/runtime/decode/draft-feeder.js); its
decode is also measured one token per call (draftTokens 0), with how many guesses held and
whether the tokens were the same. Memory is `performance.measureUserAgentSpecificMemory()`
on the engine's page (cross-origin isolated): the JS heaps and WebAssembly memories of the
page and its dedicated workers, as Chromium attributes them, after the decode figures. It takes
60 s (once for all the pages): Chromium waits that long for a worker blocked in Atomics.wait, and
onnxruntime-web's threads wait there between runs.
--scenarios measures some of them only (prefill, decode, memory, agent, returning-visitor,
constrained; load always). Prints a table of figures and ratios (bench_report.py); with --json the last line is one
JSON object. Figures are medians of --repeats runs; generation is greedy and always produces
the requested number of tokens (EOS does not stop it).
"""

import json
import os
import random
import re
import signal
import statistics
import sys
import tempfile
from pathlib import Path

from botpsy_web import bench_constrained, bench_native, bench_returning_visitor, bench_wllama
from botpsy_web.bench_report import backend_ratios, format_report, headline_ratios

CHROMIUM_PATH = os.environ.get("BOTPSY_CHROMIUM", "/usr/lib/chromium/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
    "--enable-unsafe-webgpu",
    # performance.measureUserAgentSpecificMemory answers at once instead of at the next GC
    "--enable-blink-features=ForceEagerMeasureMemory",
]
BENCH_PAGE = "/bench/browser-bench.html"
ENGINES = ("botpsy", "transformers.js", bench_wllama.ENGINE, bench_native.ENGINE)
WASM_ONLY_ENGINES = (bench_wllama.ENGINE, bench_native.ENGINE)
PREFILL_LENGTHS = (128, 1024)
DECODE_TOKENS = 64
LONG_CONTEXT = 1024
LONG_CONTEXT_DECODE_TOKENS = 32
AGENT_SYSTEM_TOKENS = 1024
AGENT_TURNS = ("What is on my calendar tomorrow?",
               "Move the dentist appointment to Friday at 10.",
               "And remind me the evening before, please.")
AGENT_REPLY_TOKENS = 32
# What one bench run measures, in order (--scenarios picks some: a quicker run, or one figure again).
SCENARIOS = ("prefill", "decode", "memory", "agent", "returning-visitor", "constrained")


# --- prompts, as token ids (the same ids go to both engines) --------------------

class BenchPrompts:
    """Token-id prompts built with the folder's own tokenizer and chat template."""

    def __init__(self, folder: Path):
        from transformers import AutoTokenizer

        self.folder = folder
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        if not self.tokenizer.chat_template:
            raise ValueError(f"{folder}/tokenizer_config.json has no chat_template: the agent scenario needs one")
        self.system_prompt = self._system_prompt(AGENT_SYSTEM_TOKENS)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def plain(self, length: int, variant: int) -> list[int]:
        """Exactly `length` tokens of prose; each variant differs from its first token on."""
        rng = random.Random(variant)
        ids: list[int] = []
        while len(ids) < length:
            ids += self.encode(_prose_paragraph(rng))
        return ids[:length]

    def chat(self, messages: list[dict]) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return self.encode(text)

    def system_only(self) -> list[int]:
        """The system message as it opens every agent prompt (no generation prompt after it)."""
        messages = [{"role": "system", "content": self.system_prompt}]
        return self.encode(self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False))

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _system_prompt(self, target_tokens: int) -> str:
        """An assistant preamble plus JSON tool schemas, grown until it is ~target_tokens long."""
        text = "You are a careful assistant running privately in the user's browser. Use the tools below.\n"
        rng = random.Random(7)
        index = 0
        while len(self.encode(text)) < target_tokens:
            text += json.dumps(_tool_schema(rng, index)) + "\n"
            index += 1
        return text


_WORDS = ("the keeper walked along quiet harbour road while gulls circled over grey water and "
          "a lantern flickered in every window of small stone houses near old pier where boats "
          "rested after long night of fishing under cold northern stars").split()


def _prose_paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(6):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 14))]
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences) + "\n"


def _tool_schema(rng: random.Random, index: int) -> dict:
    verbs = ("get", "set", "list", "create", "delete", "search", "convert", "summarize")
    nouns = ("calendar_event", "reminder", "note", "contact", "file", "unit", "timezone", "task")
    name = f"{verbs[index % len(verbs)]}_{nouns[(index // len(verbs)) % len(nouns)]}_{index}"
    properties = {
        f"arg_{k}": {"type": rng.choice(("string", "integer", "boolean")),
                     "description": " ".join(rng.choice(_WORDS) for _ in range(8))}
        for k in range(3)
    }
    return {"type": "function", "function": {
        "name": name, "description": " ".join(rng.choice(_WORDS) for _ in range(12)),
        "parameters": {"type": "object", "properties": properties, "required": ["arg_0"]}}}


# --- one engine on one backend --------------------------------------------------

class BenchPage:
    """A fresh bench page with one engine selected."""

    def __init__(self, context, base_url: str, engine: str):
        self.page = context.new_page()
        self.page.on("pageerror", lambda error: log(f"  page error: {error}"))
        self.page.goto(base_url + BENCH_PAGE)
        self.page.wait_for_function("window.benchReady === true")
        self.page.evaluate("name => bench.useEngine(name)", engine)
        # (ids sent, tokens the engine saw) where they differ: wllama takes the prompt as text
        self.prompt_mismatches: list[tuple[int, int]] = []

    def call(self, method: str, *args):
        return self.page.evaluate(f"args => bench.{method}(...args)", list(args))

    def generate(self, prompt_ids: list[int], max_tokens: int, reuse_prefix: bool = False,
                 draft_tokens: int | None = None) -> dict:
        options = {"maxTokens": max_tokens, "reusePrefix": reuse_prefix}
        if draft_tokens is not None:
            options["draftTokens"] = draft_tokens
        run = self.call("generate", prompt_ids, options)
        if run.get("promptTokens") not in (None, len(prompt_ids)):
            self.prompt_mismatches.append((len(prompt_ids), run["promptTokens"]))
        return run

    def close(self, unload=True):
        try:
            if unload:  # not after Ctrl+C: an engine busy in a long call would keep the bench waiting
                self.call("unload")
        finally:
            self.page.close()


class EngineRuns:
    """The engines under test on one backend, each on its own loaded page. Measurements
    alternate between engines run by run, so a change in machine load hits both alike."""

    def __init__(self, context, base_url, engines, load_options, prompts):
        self.prompts = prompts
        self.pages: dict[str, BenchPage] = {}
        self.figures: dict[str, dict] = {}
        self.errors: dict[str, str] = {}
        for engine in engines:
            log(f"  {engine}: load cold, then from cache")
            try:
                cold_page = self._open(context, base_url, engine)
                cold_page.call("clearCache", load_options["folderUrl"], load_options)
                cold = cold_page.call("load", load_options)
                cold_page.close()
                page = self._open(context, base_url, engine)
                self.pages[engine] = page
                cached = page.call("load", load_options)
                page.generate(prompts.plain(16, variant=99), 4)  # warm-up: first calls compile kernels
            except Exception as error:  # noqa: BLE001 - the other engine's figures still count
                self._fail(engine, error)
                continue
            self.figures[engine] = {
                "backend": cached["backend"], "dtype": cached["dtype"], "format": cached["dtype"],
                "threads": cached["threads"],
                "load_cold_s": cold["loadMs"] / 1000, "load_cached_s": cached["loadMs"] / 1000}
            log(f"    {engine} load: {cold['loadMs'] / 1000:.2f} s cold, {cached['loadMs'] / 1000:.2f} s from cache")

    def _open(self, context, base_url, engine):
        """A bench page with `engine`, or (native) the engine itself: it runs in this process."""
        if engine == bench_native.ENGINE:
            return bench_native.NativeEngine(self.prompts.folder)
        return BenchPage(context, base_url, engine)

    def _fail(self, engine, error):
        message = str(error).splitlines()[0]
        log(f"  {engine} failed: {message}")
        self.errors[engine] = message
        self.figures.pop(engine, None)
        page = self.pages.pop(engine, None)
        if page:
            page.close(unload=False)

    def alternate(self, repeats, measure, only=None) -> dict[str, list]:
        """measure(engine, page, run) for each run and engine (those in `only` when given), engines taking turns."""
        results = {engine: [] for engine in self.pages if only is None or engine in only}
        for run in range(repeats):
            for engine, page in [(e, p) for e, p in self.pages.items() if e in results]:
                try:
                    results[engine].append(measure(engine, page, run))
                    log_run(engine, run, results[engine][-1])
                except Exception as error:  # noqa: BLE001
                    self._fail(engine, error)
                    results.pop(engine, None)
        return results

    def record(self, key, results, summarize):
        """The median under `key`, and every run's value under `key`_runs (to judge the spread)."""
        for engine, runs in results.items():
            if engine in self.figures and runs:
                values = [summarize(run) for run in runs]
                self.figures[engine][key] = statistics.median(values)
                self.figures[engine][f"{key}_runs"] = values
                log(f"    {engine} {key}: {self.figures[engine][key]:.4g}")  # figures as they come, for long runs

    def close(self, unload=True):
        for engine, page in self.pages.items():
            if engine in self.figures:
                self.figures[engine]["prompt_token_mismatches"] = page.prompt_mismatches
                if page.prompt_mismatches:
                    log(f"  {engine} saw other prompt lengths than the ids sent: {page.prompt_mismatches[:5]}")
            page.close(unload)


def log_run(engine: str, run: int, result: dict):
    """One generate call's timings as soon as it ends (a long run's figures can be read off the log)."""
    if "ttftMs" in result:
        log(f"    {engine} run {run + 1}: first token {result['ttftMs'] / 1000:.2f} s, "
            f"{generated_tokens(result)} tokens in {result['totalMs'] / 1000:.2f} s")


def measure_backend(context, base_url, engines, load_options, prompts, repeats, scenarios=SCENARIOS) -> EngineRuns:
    """The figures of the scenarios asked for (load always); after Ctrl+C, those of the scenarios that
    finished (runs.interrupted)."""
    runs = EngineRuns(context, base_url, engines, load_options, prompts)
    runs.interrupted = False
    try:
        if "prefill" in scenarios:
            measure_prefill(runs, repeats, prompts)
        if "decode" in scenarios:
            measure_decodes(runs, repeats, prompts)
        if "memory" in scenarios:
            measure_memory(runs)
        if "agent" in scenarios:
            measure_agent(runs, repeats, prompts)
        if "returning-visitor" in scenarios:
            log("  returning visitor (our runtime: prompt state stored on the first visit; the others: none to store)")
            visits = runs.alternate(1, lambda engine, page, run: bench_returning_visitor.measure_returning_visitor(
                engine, page, load_options, prompts.folder, prompts.encode, repeats, log))
            for engine, [figures] in visits.items():
                runs.figures[engine].update(figures)
        if "constrained" in scenarios and "botpsy" in runs.pages:
            log("  constrained decoding (our runtime: tool-call grammar against none, same prompt)")
            runs.figures["botpsy"].update(bench_constrained.measure_constrained(
                runs.pages["botpsy"].page, load_options, prompts.folder, repeats, log))
    except KeyboardInterrupt:
        log("  interrupted: reporting the scenarios that finished")
        runs.interrupted = True
    finally:
        runs.close(unload=not runs.interrupted)
    return runs


def measure_prefill(runs: EngineRuns, repeats, prompts):
    for length in PREFILL_LENGTHS:
        log(f"  prefill {length} tokens")
        results = runs.alternate(repeats, lambda e, page, run: page.generate(prompts.plain(length, run), 1))
        runs.record(f"prefill_tok_s_{length}", results, lambda r: length / (r["ttftMs"] / 1000))


def measure_decodes(runs: EngineRuns, repeats, prompts):
    """Decode after a short chat prompt and after a long context."""
    log(f"  decode {DECODE_TOKENS} tokens")
    chat = prompts.chat([{"role": "user", "content": "Tell me a long story about a lighthouse keeper."}])
    measure_decode(runs, repeats, "decode_tok_s", lambda run: chat, DECODE_TOKENS, record_ttft=True)

    log(f"  decode {LONG_CONTEXT_DECODE_TOKENS} tokens after {LONG_CONTEXT} tokens of context")
    measure_decode(runs, repeats, f"decode_tok_s_after_{LONG_CONTEXT}",
                   lambda run: prompts.plain(LONG_CONTEXT, variant=100 + run), LONG_CONTEXT_DECODE_TOKENS)


def measure_memory(runs: EngineRuns):
    """Each page's memory with its model loaded: every page's measurement starts before any is
    awaited, so the 60 s Chromium waits (the module's docstring) pass once."""
    log("  memory (Chromium waits 60 s for workers blocked in Atomics.wait)")
    for page in runs.pages.values():
        page.call("startMemory")
    for engine, page in runs.pages.items():
        memory = page.call("memoryResult")
        if memory:
            runs.figures[engine].update(memory_bytes=memory["bytes"], memory_bytes_workers=memory["workerBytes"])
            log(f"    {engine} memory: {memory['bytes'] / 1e6:.0f} MB ({memory['workerBytes'] / 1e6:.0f} MB in workers)")


def measure_agent(runs: EngineRuns, repeats, prompts):
    log("  agent scenario")
    results = runs.alternate(repeats, lambda engine, page, run: run_agent_variants(engine, page, prompts))
    for variant in AGENT_VARIANTS:
        runs.record(f"agent_s_{variant}", {e: [r[variant] for r in rs if variant in r] for e, rs in results.items()},
                    lambda r: r["seconds"])
    for engine, variants in results.items():
        last = variants[-1]
        for variant, run in last.items():
            runs.figures[engine][f"agent_reused_tokens_{variant}"] = run["reused"]
        if "with_reuse" in last:
            runs.figures[engine]["agent_reuse_gives_identical_tokens"] = (
                last["with_reuse"]["replies"] == last["without_reuse"]["replies"])


def measure_decode(runs: EngineRuns, repeats, key, prompt_for, tokens, record_ttft=False):
    """Decode speed under `key` for every engine (prompt_for(run) -> ids); for ours also one token
    per call (`key`_one_per_call), the share of guessed tokens that held, and whether both gave the same tokens."""
    results = runs.alternate(repeats, lambda e, page, run: page.generate(prompt_for(run), tokens))
    if record_ttft:
        runs.record("ttft_ms", results, lambda r: r["ttftMs"])
    runs.record(key, results, decode_rate)
    if "botpsy" not in results:
        return
    if bench_native.ENGINE in results and "botpsy" in runs.figures:
        runs.figures["botpsy"][f"{key}_same_tokens_as_native"] = all(
            a["tokens"] == b["tokens"] for a, b in zip(results["botpsy"], results[bench_native.ENGINE]))
    single = runs.alternate(repeats, lambda e, page, run: page.generate(prompt_for(run), tokens, draft_tokens=0),
                            only=("botpsy",))
    runs.record(f"{key}_one_per_call", single, decode_rate)
    ours, figures = results["botpsy"], runs.figures.get("botpsy")
    if figures is None or not single.get("botpsy"):
        return
    drafted = sum(run["draftedTokens"] or 0 for run in ours)
    figures[f"{key}_guesses_held"] = sum(run["acceptedDraftTokens"] or 0 for run in ours) / drafted if drafted else None
    figures[f"{key}_model_calls"] = [run["modelCalls"] for run in ours]
    figures[f"{key}_same_tokens_one_per_call"] = all(
        a["tokens"] == b["tokens"] for a, b in zip(ours, single["botpsy"]))


def decode_rate(run: dict) -> float:
    """Tokens per second after the first token (the first one pays for the prefill)."""
    return (generated_tokens(run) - 1) / ((run["totalMs"] - run["ttftMs"]) / 1000)


def generated_tokens(run: dict) -> int:
    """How many tokens a generate call made (wllama may report only the count, without ids)."""
    return len(run["tokens"]) if run.get("tokens") is not None else run["tokenCount"]


AGENT_VARIANTS = ("without_reuse", "with_reuse", "with_reuse_prewarmed")


def run_agent_variants(engine: str, page: BenchPage, prompts: BenchPrompts) -> dict:
    """The agent scenario without prefix reuse, and (our runtime and wllama) with it: from an empty
    state, and (ours only) with the system prompt prefilled beforehand, as the app does while a
    person types. transformers.js keeps no cache between generate calls."""
    results = {"without_reuse": run_agent_turns(page, prompts, reuse=False)}
    if engine in ("botpsy", bench_wllama.ENGINE):
        page.generate(prompts.plain(8, variant=500), 1, reuse_prefix=False)  # forget earlier prefixes
        results["with_reuse"] = run_agent_turns(page, prompts, reuse=True)
    if engine == "botpsy":
        page.generate(prompts.plain(8, variant=501), 1, reuse_prefix=False)
        page.generate(prompts.system_only(), 1, reuse_prefix=True)
        results["with_reuse_prewarmed"] = run_agent_turns(page, prompts, reuse=True)
    return results


def run_agent_turns(page: BenchPage, prompts: BenchPrompts, reuse: bool) -> dict:
    messages = [{"role": "system", "content": prompts.system_prompt}]
    total_ms, replies, reused = 0.0, [], []
    for turn in AGENT_TURNS:
        messages.append({"role": "user", "content": turn})
        run = page.generate(prompts.chat(messages), AGENT_REPLY_TOKENS, reuse_prefix=reuse)
        total_ms += run["totalMs"]
        reused.append(run["reusedTokens"])
        reply = prompts.decode(run["tokens"]) if run.get("tokens") is not None else run["text"]
        replies.append(run["tokens"] if run.get("tokens") is not None else reply)  # ids where the engine gives them
        messages.append({"role": "assistant", "content": reply})
    return {"seconds": total_ms / 1000, "replies": replies, "reused": reused}


# --- the whole bench -------------------------------------------------------------

def choose_backends(requested: str, adapter: dict) -> list[str]:
    if requested == "auto":
        hardware_gpu = adapter["available"] and not adapter["fallback"]
        return ["wasm", "webgpu"] if hardware_gpu else ["wasm"]
    backends = [name.strip() for name in requested.split(",") if name.strip()]
    unknown = [name for name in backends if name not in ("wasm", "webgpu")]
    if unknown or not backends:
        raise ValueError(f"--backends takes auto, wasm, webgpu or wasm,webgpu; got {requested!r}")
    if "webgpu" in backends and not adapter["available"]:
        raise ValueError(f"--backends asks for webgpu but this browser has no WebGPU adapter ({adapter['name']})")
    return backends


def pick_dtype(manifest: dict, backend: str, requested: str | None) -> str:
    dtypes = manifest.get("dtypes", {})
    if requested:
        if requested not in dtypes:
            raise ValueError(f"--dtype {requested} is not in this folder; it has {', '.join(dtypes)}")
        return requested
    recommended = manifest.get("recommended_dtype", {}).get(backend)
    return recommended if recommended in dtypes else "fp32"


def run_bench(folder: Path, backends: str = "auto", dtype: str | None = None, repeats: int = 3,
              engines=ENGINES, gguf: Path | None = None, scenarios=SCENARIOS) -> dict:
    from playwright.sync_api import sync_playwright

    folder = Path(folder).resolve()
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder} has no manifest.json: is it a folder written by `botpsy-web export`?")
    manifest = json.loads(manifest_path.read_text())
    unknown = [name for name in engines if name not in ENGINES]
    if unknown:
        raise ValueError(f"unknown engine(s) {', '.join(unknown)}; known: {', '.join(ENGINES)}")
    unknown = [name for name in scenarios if name not in SCENARIOS]
    if unknown or not scenarios:
        raise ValueError(f"unknown scenario(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(SCENARIOS)}")
    prompts = BenchPrompts(folder)
    report = {"model": manifest.get("name", folder.name), "folder": str(folder),
              "architecture": manifest.get("architecture"), "repeats": repeats,
              "scenarios": [name for name in SCENARIOS if name in scenarios],
              "machine": {"cpus": os.cpu_count(), "load_average_at_start": list(os.getloadavg())},
              "gguf": None, "backends": {}}
    engines, gguf_path, gguf_error = bench_wllama.engines_and_gguf(manifest, engines, gguf, log)
    if gguf_path:
        report["gguf"] = {"path": str(gguf_path), "file_type": bench_wllama.gguf_file_type(gguf_path),
                          "size_bytes": gguf_path.stat().st_size}
    server, base_url = bench_wllama.serve_with_gguf(folder.parent, gguf_path)
    folder_url = f"/models/{folder.name}/"
    try:
        with sync_playwright() as playwright, tempfile.TemporaryDirectory(prefix="botpsy-bench-") as profile:
            # A persistent profile, as a person's browser has: a private (non-persistent) context
            # refuses to store large files (at 1.5B: wllama's 1.1 GB GGUF, our returning state).
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS, headless=True)
            probe = BenchPage(context, base_url, "botpsy")
            report["browser"] = browser_name(probe.page.evaluate("navigator.userAgent"))
            adapter = probe.call("webGpuAdapter")
            isolated = probe.call("crossOriginIsolated")
            probe.page.close()
            report["webgpu_adapter"] = adapter
            threads = 2 if isolated else 1
            for backend in choose_backends(backends, adapter):
                chosen_dtype = pick_dtype(manifest, backend, dtype)
                log(f"bench: {backend}, dtype {chosen_dtype}")
                load_options = {"folderUrl": folder_url, "backend": backend, "dtype": chosen_dtype,
                                "threads": threads}
                backend_engines = [e for e in engines if backend == "wasm" or e not in WASM_ONLY_ENGINES]
                if gguf_path:
                    load_options.update(ggufUrl=bench_wllama.gguf_url(gguf_path),
                                        contextTokens=wllama_context_tokens(prompts))
                runs = measure_backend(context, base_url, backend_engines, load_options, prompts, repeats, scenarios)
                if bench_wllama.ENGINE in runs.figures:
                    runs.figures[bench_wllama.ENGINE]["format"] = f"GGUF {report['gguf']['file_type']}"
                if gguf_error:
                    runs.errors[bench_wllama.ENGINE] = gguf_error
                entry = {"dtype": chosen_dtype, "engines": runs.figures, "errors": runs.errors,
                         "ratios": backend_ratios(runs.figures)}
                report["backends"][backend] = entry
                if runs.interrupted:
                    report["interrupted"] = True
                    break
            context.close()
    finally:
        server.shutdown()
        server.server_close()
    report["machine"]["load_average_at_end"] = list(os.getloadavg())
    report["ratios"] = headline_ratios(report)
    return report


def browser_name(user_agent: str) -> str:
    """'Chromium 156.0.8078.114' from the browser's user agent (a persistent context has no Browser object)."""
    found = re.search(r"(?:HeadlessChrome|Chrome)/([\d.]+)", user_agent)
    return f"Chromium {found.group(1)}" if found else "Chromium (version unknown)"


def wllama_context_tokens(prompts: BenchPrompts) -> int:
    """wllama's KV cache size (n_ctx, fixed at load): enough for the longest prompt here and its reply."""
    _, visitor_prompt = bench_returning_visitor.agent_prompts(prompts.folder, prompts.encode)
    agent_prompt = len(prompts.system_only()) + len(AGENT_TURNS) * (AGENT_REPLY_TOKENS + 64)  # 64: a turn's text and markup
    return bench_wllama.context_tokens([LONG_CONTEXT, agent_prompt, len(visitor_prompt)], DECODE_TOKENS)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def log(message: str):
    print(message, file=sys.stderr, flush=True)


def register(subparsers):
    parser = subparsers.add_parser("bench", help="measure load, prefill, decode and agent speed in the browser")
    parser.add_argument("folder", type=Path, metavar="DIR", help="an exported model folder (with manifest.json)")
    parser.add_argument("--json", action="store_true", help="print the raw figures as one JSON object, last")
    parser.add_argument("--backends", default="auto",
                        help="auto (WASM, plus WebGPU when a hardware adapter exists), wasm, webgpu, or wasm,webgpu")
    parser.add_argument("--dtype", help="dtype for every engine (default: the manifest's recommendation per backend)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure; the median is reported (default 3)")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help=f"comma-separated engines to measure (default {','.join(ENGINES)})")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help=f"comma-separated scenarios to measure besides load (default {','.join(SCENARIOS)})")
    parser.add_argument("--gguf", type=Path, metavar="PATH",
                        help="the GGUF wllama runs (default: the GGUF the folder's manifest says it was exported from)")
    parser.set_defaults(func=run)


def run(args) -> int:
    if args.repeats < 1:
        print(f"error: --repeats must be at least 1, got {args.repeats}")
        return 2
    engines = [name.strip() for name in args.engines.split(",") if name.strip()]
    scenarios = [name.strip() for name in args.scenarios.split(",") if name.strip()]
    signal.signal(signal.SIGTERM, _interrupt)  # like Ctrl+C: stop, and report what finished
    try:
        report = run_bench(args.folder, backends=args.backends, dtype=args.dtype, repeats=args.repeats,
                           engines=engines, gguf=args.gguf, scenarios=scenarios)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}")
        return 2
    print(format_report(report))
    if args.json:
        print(json.dumps(report))
    return 0 if all(entry["engines"].get("botpsy") for entry in report["backends"].values()) else 1
