"""`botpsy-web` console script: one subcommand per module, each registering itself.

A command module exposes `register(subparsers)`, which adds its parser and sets
`func` to a callable taking the parsed args and returning an exit status.
Heavy imports (torch, playwright) stay inside those callables so `--help` is fast.
"""

import argparse
import importlib
import sys

COMMAND_MODULES = [
    "botpsy_export.command",
    "botpsy_web.demo",
    "botpsy_web.serve",
    "botpsy_web.verify_browser",
    "botpsy_web.bench",
    "botpsy_web.build_py",
    "botpsy_web.site.command",
    "botpsy_web.prompt_state.command",
    "botpsy_eval.command",
    "botpsy_agentdojo.command",
    "botpsy_tasks.command",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="botpsy-web",
        description="A private, on-device AI assistant in a web page.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
    except KeyboardInterrupt:
        return 130
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
