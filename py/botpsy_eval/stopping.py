"""How a `botpsy-web eval` run (single-turn or multi-turn) ends when it does not finish: Ctrl-C,
the browser failing, or the PyTorch reference unable to load the model. Each says on stderr
what happened and, for Ctrl-C, how to go on from what was kept."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def run_until_stopped(run: Callable[[], T], outputs: Path) -> tuple[T | None, int]:
    """(run()'s results, 0), or (None, exit code) once it is stopped: 130 after Ctrl-C (every
    finished case is in outputs), 1 when the browser or the PyTorch reference failed."""
    from playwright.sync_api import Error as PlaywrightError

    from botpsy_export.errors import ExportError

    from .browser import first_line

    # Ctrl-C in a terminal reaches the browser's driver too, which then fails the call in flight:
    # remember that it was the person, so that the answer says how to go on, not "the browser failed".
    interrupted = []

    def on_interrupt(signum, frame):
        interrupted.append(signum)
        raise KeyboardInterrupt

    previous_handler = signal.signal(signal.SIGINT, on_interrupt)
    stopped = (f"\nstopped: every finished case is in {outputs}; the same command with --resume goes on "
               "from there")
    try:
        return run(), 0
    except PlaywrightError as error:  # the runtime's own message (e.g. "WebGPU unavailable ..."), no stack
        print(stopped if interrupted else f"\nerror: the browser run failed: {first_line(error)}", file=sys.stderr)
        return None, 130 if interrupted else 1
    except ExportError as error:  # the PyTorch reference could not load the folder's source
        print(f"\nerror: the PyTorch reference could not load the model: {error}", file=sys.stderr)
        return None, 1
    except KeyboardInterrupt:
        print(stopped, file=sys.stderr)
        return None, 130
    finally:
        signal.signal(signal.SIGINT, previous_handler)
