"""run_python: computations work; the agent, files, network and time stay out of reach."""

import sys

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.python_sandbox import run_code, run_python

from .conftest import call


def test_prints_and_shows_the_last_expression(ctx):
    answer = call(run_python, ctx, code="total = 0\nfor n in range(5):\n    total += n\n    print(n)\ntotal * 2")
    assert answer == {"output": "0\n1\n2\n3\n4\n", "result": "20"}


def test_allowed_modules_and_classes_work():
    code = ("import statistics, math\nfrom fractions import Fraction\nimport json\n"
            "class Box:\n    def __init__(self, v):\n        self.v = v\n"
            "print(statistics.median([3, 1, 2]), math.comb(5, 2), Fraction(1, 3) + Fraction(1, 6))\n"
            "json.dumps({'b': Box(4).v})")
    assert run_code(code) == {"output": "2 10 1/2\n", "result": "'{\"b\": 4}'"}


def test_each_run_starts_with_a_fresh_namespace():
    run_code("leftover = 1")
    assert "NameError" in run_code("leftover")["error"]


@pytest.mark.parametrize("code, error", [
    ("import os", "ImportError: module 'os' is not available"),
    ("import sys", "ImportError"),
    ("from botpsy_agent import tooling", "ImportError"),
    ("import importlib", "ImportError"),
    ("open('/etc/passwd')", "NameError: name 'open' is not defined"),
    ("eval('1')", "NameError: name 'eval' is not defined"),
    ("getattr(print, 'x')", "NameError: name 'getattr' is not defined"),
    ("import re\nre.enum.sys", "AttributeError"),
    ("import json\njson.decoder", "AttributeError"),
    ("1/0", "ZeroDivisionError: division by zero (line 1)"),
    ("x = 1\ny = [][x]", "IndexError: list index out of range (line 2)"),
])
def test_blocked_and_failing_code_reports_errors(code, error):
    assert run_code(code)["error"].startswith(error)


@pytest.mark.parametrize("code", [
    "().__class__.__base__.__subclasses__()",
    "print.__self__",
    "__builtins__",
    "import json\ng = json.JSONEncoder(indent=1).iterencode([1])\ng.gi_frame.f_globals",
    "def f():\n    yield 1\nf().gi_frame",
    "'{0.__class__}'.format_map({})",
])
def test_escape_routes_are_refused_before_running(code):
    with pytest.raises(ToolError, match="not allowed in run_python"):
        run_code(code)


@pytest.mark.parametrize("code", [
    "while True: pass",
    "while True:\n    pass",
    "[0 for _ in iter(int, 1)]",
    "sum(1 for _ in iter(int, 1))",
    "list(map(lambda x: x, iter(int, 1)))",
    "def spin():\n    while True:\n        try:\n            while True: pass\n        except:\n            pass\nspin()",
])
def test_time_limit_stops_endless_code(code):
    assert run_code(code, time_limit=0.3)["error"].startswith("TimeLimitExceeded")


def test_previous_trace_function_is_restored():
    before = sys.gettrace()
    run_code("while True: pass", time_limit=0.1)
    assert sys.gettrace() is before


def test_output_is_capped():
    answer = run_code("for i in range(10**6):\n    print('spam')", output_limit=100)
    assert len(answer["output"]) == 100 and answer["truncated"] is True
    assert answer["error"].startswith("OutputLimitExceeded")


def test_deep_recursion_is_an_error_not_a_crash():
    assert run_code("def f(n):\n    return f(n + 1)\nf(0)")["error"].startswith("RecursionError")


@pytest.mark.parametrize("code, message", [("", "code is empty"), ("def (:", "syntax error on line 1"),
                                           ("x" * 20_001, "longer than")])
def test_refusals(code, message):
    with pytest.raises(ToolError, match=message):
        run_code(code)


@pytest.mark.parametrize("code", [
    "import string\nstring.Formatter().get_field('0.gi_frame', [1], {})",
    "import operator\noperator.attrgetter('gi_frame')",
    "import operator\noperator.methodcaller('mro')",
    "import calendar\ncalendar.main(['x'])",
])
def test_library_functions_that_bypass_the_attribute_rule_are_withheld(code):
    assert run_code(code)["error"].startswith("AttributeError")


def test_allowed_modules_keep_their_useful_parts():
    code = "import string, operator, calendar\n(string.ascii_lowercase[:3], operator.add(2, 3), calendar.isleap(2028))"
    assert run_code(code)["result"] == "('abc', 5, True)"


def test_decimal_precision_changes_do_not_leak_out():
    import decimal

    before = decimal.getcontext().prec
    assert run_code("import decimal\ndecimal.getcontext().prec = 3\ndecimal.Decimal(1) / 3")["result"] == "Decimal('0.333')"
    assert decimal.getcontext().prec == before
