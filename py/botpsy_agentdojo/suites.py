"""AgentDojo's suites and attacks, imported from the installed package (never copied here)."""

from __future__ import annotations

AGENTDOJO_VERSION = "0.1.35"
BENCHMARK_VERSION = "v1.1.2"  # the newest v1.1.x: 97 user tasks x 27 injection tasks = 629 security cases
SUITE_NAMES = ("workspace", "travel", "banking", "slack")


class AgentDojoMissing(RuntimeError):
    """The agentdojo package is not installed."""


def require_agentdojo() -> None:
    try:
        import agentdojo  # noqa: F401
    except ImportError:
        raise AgentDojoMissing(
            f"the agentdojo package (PyPI agentdojo=={AGENTDOJO_VERSION}) is not installed in this Python "
            f"environment; `./run.sh test` installs it, or run: "
            f".venv/bin/pip install 'agentdojo=={AGENTDOJO_VERSION}'") from None


def load_suites(names: tuple[str, ...] = SUITE_NAMES, benchmark_version: str = BENCHMARK_VERSION) -> dict:
    """{name: agentdojo TaskSuite} for the named suites, in the order asked."""
    require_agentdojo()
    from agentdojo.task_suite.load_suites import get_suites

    suites = get_suites(benchmark_version)
    unknown = [name for name in names if name not in suites]
    if unknown:
        raise ValueError(f"unknown AgentDojo suite {', '.join(map(repr, unknown))}; "
                         f"{benchmark_version} has {', '.join(suites)}")
    return {name: suites[name] for name in names}


def load_attack(name: str, suite, pipeline):
    require_agentdojo()
    from agentdojo.attacks import load_attack as agentdojo_load_attack

    return agentdojo_load_attack(name, suite, pipeline)
