"""`botpsy-web build-py`: the agent's Python packed for Pyodide, deterministic and pure Python."""

import subprocess
import sys
import zipfile

from botpsy_web.build_py import build_agent_bundle


def test_bundle_holds_the_agent_tools_and_pure_python_jinja2(tmp_path):
    path = build_agent_bundle(tmp_path / "agent-py.zip")
    names = zipfile.ZipFile(path).namelist()
    for required in ("botpsy_agent/agent.py", "botpsy_agent/bridge.py", "botpsy_agent/tools/__init__.py",
                     "botpsy_agent/tools/data/tz_rules.json", "botpsy_agent/tools/data/city_zones.json",
                     "jinja2/sandbox.py",
                     "markupsafe/__init__.py", "markupsafe/_native.py"):
        assert required in names
    assert not [name for name in names if name.endswith((".so", ".pyc", ".c")) or "__pycache__" in name]
    assert names == sorted(names)


def test_bundle_is_deterministic_and_not_rewritten_when_unchanged(tmp_path):
    first = build_agent_bundle(tmp_path / "a.zip").read_bytes()
    second_path = build_agent_bundle(tmp_path / "b.zip")
    assert second_path.read_bytes() == first
    written_at = second_path.stat().st_mtime_ns
    build_agent_bundle(second_path)
    assert second_path.stat().st_mtime_ns == written_at


def test_bundle_imports_without_the_venv(tmp_path):
    """The zip alone is enough: jinja2 renders with markupsafe's pure-Python fallback."""
    path = build_agent_bundle(tmp_path / "agent-py.zip")
    code = ("import sys; sys.path[:] = [p for p in sys.path if 'site-packages' not in p]; "
            f"sys.path.insert(0, {str(path)!r}); "
            "import markupsafe, jinja2, botpsy_agent.browser_session as s; "
            "assert 'site-packages' not in jinja2.__file__; "
            "print(markupsafe.escape('<b>'), jinja2.Template('{{ x }}').render(x=1))")
    result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "&lt;b&gt; 1"


def test_cli_writes_the_bundle(tmp_path):
    out = tmp_path / "cli.zip"
    result = subprocess.run([sys.executable, "-m", "botpsy_web.cli", "build-py", "--out", str(out)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert out.is_file() and "files)" in result.stdout
