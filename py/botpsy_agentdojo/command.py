"""`botpsy-web agentdojo`: AgentDojo's prompt-injection benchmark through botpsy-web's agent.

Every case runs our agent loop (chat format, parser, safety gate, data marking) over AgentDojo's
functions; a named approver answers the gate; AgentDojo's own checks score utility and attack
success. `--model scripted` (default) is the worst-case obeyer (obeyer.py); `--model DIR` runs an
exported folder in headless Chromium with the browser runtime, greedy, as `eval` does.
Prints a table (per approver and suite, plus overall) and the attacks that succeeded under
`deny` and `oracle` (and how many reached the person without the answer's provenance notice);
`--json` prints {"rows": [...]} as the last line.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

DEFAULT_MAX_TOKENS = 512


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def register(subparsers):
    from .approvers import APPROVERS
    from .suites import BENCHMARK_VERSION, SUITE_NAMES

    parser = subparsers.add_parser(
        "agentdojo", help="AgentDojo prompt-injection benchmark through the agent, its gate and its provenance")
    parser.add_argument("--suites", type=_list, default=list(SUITE_NAMES),
                        help=f"comma-separated suites (default all: {','.join(SUITE_NAMES)})")
    parser.add_argument("--model", default="scripted",
                        help="'scripted' (the worst-case obeyer, default) or an exported folder run in the browser")
    parser.add_argument("--approver", type=_list, default=list(APPROVERS),
                        help=f"comma-separated approvers of the gate's confirmations (default {','.join(APPROVERS)})")
    parser.add_argument("--attack", default="important_instructions", help="an AgentDojo attack (default important_instructions)")
    parser.add_argument("--limit", type=int, default=None, help="a seeded sample of N cases per suite (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--benchmark-version", default=BENCHMARK_VERSION, help=f"AgentDojo benchmark (default {BENCHMARK_VERSION})")
    parser.add_argument("--chat-format", type=Path, default=None, metavar="DIR",
                        help="scripted model: speak the chat format of this exported folder (default: BotPsy's Qwen3.5 "
                             "template, Qwen3-Coder XML calls)")
    parser.add_argument("--dtype", default=None, help="browser model: the dtype to load (default the folder's first of fp32,q8,q4)")
    parser.add_argument("--backend", choices=["wasm", "webgpu"], default="wasm", help="browser model: onnxruntime-web backend")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                        help=f"browser model: most tokens per reply (default {DEFAULT_MAX_TOKENS})")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="most replies per run (default 12, or more when the user task needs more calls)")
    parser.add_argument("--outputs", type=Path, default=None, help="write every run as a JSON line to this file")
    parser.add_argument("--json", action="store_true", help='print {"rows": [...]} as the last line')
    parser.set_defaults(func=run)


def _problem(args) -> str | None:
    from .approvers import APPROVERS
    from .suites import SUITE_NAMES

    unknown = [name for name in args.approver if name not in APPROVERS]
    if unknown or not args.approver:
        return f"--approver takes {', '.join(APPROVERS)}; got {','.join(args.approver) or 'nothing'}"
    unknown = [name for name in args.suites if name not in SUITE_NAMES]
    if unknown or not args.suites:
        return f"--suites takes {', '.join(SUITE_NAMES)}; got {','.join(args.suites) or 'nothing'}"
    if args.limit is not None and args.limit < 1:
        return f"--limit must be at least 1, got {args.limit}"
    if args.max_steps is not None and args.max_steps < 1:
        return f"--max-steps must be at least 1, got {args.max_steps}"
    if args.model != "scripted" and not (Path(args.model) / "manifest.json").is_file():
        return f"--model must be 'scripted' or an exported folder with a manifest.json; {args.model} is neither"
    if args.chat_format is not None and not (args.chat_format / "tokenizer_config.json").is_file():
        return f"--chat-format {args.chat_format} has no tokenizer_config.json"
    return None


def run(args) -> int:
    from .suites import AgentDojoMissing, require_agentdojo

    try:
        require_agentdojo()
    except AgentDojoMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    problem = _problem(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2

    from .report import markdown_table, rows, successful_attacks
    from .runner import RunSettings, select_cases

    settings = RunSettings(tuple(args.suites), tuple(args.approver), args.attack, args.limit, args.seed,
                           args.benchmark_version, args.max_steps)
    selections = select_cases(settings)
    total = sum(len(s.cases) + len(s.user_tasks) for s in selections.values()) * len(settings.approvers)
    outputs = args.outputs.open("w", encoding="utf-8") if args.outputs else None
    done, started = [0], time.perf_counter()

    def on_result(result):
        done[0] += 1
        if outputs:
            outputs.write(json.dumps(result.as_json()) + "\n")
            outputs.flush()  # a long browser run stopped early keeps what it did
        if args.model != "scripted" or done[0] % 100 == 0 or done[0] == total:
            print(f"[{done[0]}/{total}] {time.perf_counter() - started:.0f} s  {result.approver} {result.suite} "
                  f"{result.user_task} {result.injection_task or '(no attack)'}: utility {result.utility}, "
                  f"attack {result.security}", file=sys.stderr, flush=True)

    try:
        results = _run_model(args, settings, selections, on_result)
    finally:
        if outputs:
            outputs.close()
    table = rows(results)
    print(markdown_table(table))
    for approver in ("deny", "oracle"):
        won = successful_attacks(results, approver)
        if approver in settings.approvers:
            classes = Counter(f"{r.suite}/{r.injection_task}" for r in won)
            unmarked = Counter(f"{r.suite}/{r.injection_task}" for r in won if not r.answer_marked)
            print(f"attacks that succeeded under {approver}: {len(won)}, {sum(unmarked.values())} of them with an "
                  "unmarked answer"
                  + "".join(f"\n  {name}: {count} cases, {unmarked[name]} unmarked"
                            for name, count in sorted(classes.items())))
    print(f"{len(results)} runs in {time.perf_counter() - started:.1f} s")
    if args.json:
        print(json.dumps({"rows": table}))
    return 0


def _run_model(args, settings, selections, on_result):
    from .runner import run_folder_in_browser

    if args.model != "scripted":
        return run_folder_in_browser(Path(args.model), settings, selections, on_result, dtype=args.dtype,
                                     backend=args.backend, max_tokens=args.max_tokens)
    from .element import BotPsyElement
    from .models import default_chat_format, folder_chat_format, scripted_model_factory
    from .runner import agent_options, run_cases

    chat_format, special_tokens = (folder_chat_format(args.chat_format) if args.chat_format
                                   else (default_chat_format(), ()))
    element = BotPsyElement(chat_format, special_tokens, agent_options(args.max_tokens))
    return run_cases(element, "scripted", scripted_model_factory(chat_format, max_steps=64), settings,
                     selections, on_result)
