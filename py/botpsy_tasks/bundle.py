"""The agent worker's bundle for `botpsy-web tasks` (static/build/agent-tasks-py.zip): the app's
bundle (botpsy_web.build_py) plus what runs a task in the worker. The app's agent-py.zip stays
as it is; only the harness page loads this one."""

from __future__ import annotations

from pathlib import Path

PY_ROOT = Path(__file__).resolve().parents[1]
OUR_MODULES = ("botpsy_tasks/__init__.py", "botpsy_tasks/session.py", "botpsy_tasks/in_worker.py",
               "botpsy_eval/__init__.py", "botpsy_eval/constraint.py")
BUNDLE_NAME = "agent-tasks-py.zip"


def build_tasks_bundle() -> Path:
    from botpsy_web.build_py import DEFAULT_OUT, build_agent_bundle, bundle_entries

    entries = sorted(bundle_entries() + [(name, PY_ROOT / name) for name in OUR_MODULES])
    return build_agent_bundle(DEFAULT_OUT.with_name(BUNDLE_NAME), entries)
