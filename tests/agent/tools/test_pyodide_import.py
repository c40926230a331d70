"""The tools package imports and runs under Pyodide (Python 3.14, no IANA database),
loaded from local files by Node: no network, no C extensions, no threads."""

import json
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCRIPT = Path(__file__).with_name("pyodide_smoke.mjs")


def test_every_tool_runs_in_pyodide():
    node = shutil.which("node")
    assert node, "node is needed to run Pyodide outside the browser"
    finished = subprocess.run([node, str(SCRIPT), str(REPO)], capture_output=True, text=True, timeout=300,
                              cwd=REPO)
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads(finished.stdout.strip().splitlines()[-1])
    assert report["python"].startswith("3.14")
    assert report["tools"] == 29
    assert report["system_tz"] is False            # so the bundled rules are what answered
    assert report["convert_time"]["to"]["datetime"] == "2026-07-01T06:00-04:00"
    assert report["calculator"]["result"] == "0.3"
    assert report["convert_units"]["result"] == 8.04672
    assert report["notes_search"][0]["id"] == "n1"
    assert report["calendar_export_ics"] == 1
    assert report["todo_add"]["due"] == "2026-12-01T09:00+00:00"
    assert report["files_search"] == [{"name": "list.csv", "line": 3, "text": "eggs,12"}]
    # In Pyodide the code runs only in the page's sandbox (web/sandbox/), never in the agent's interpreter.
    assert report["run_python"] == "ToolError: run_python needs the page's sandbox, and this agent was started without one"
    assert "privacy" in report["search_docs"]
    assert report["outbox_draft"]["status"] == "draft"
    assert report["fetch_url"].startswith("ToolError: network access is off")
