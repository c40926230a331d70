"""run_python: small computations in an isolated namespace, with output and time limits.

Isolation (enough to keep a model's code away from the agent, not a security boundary
against a determined attacker; the page's worker is the real boundary):
- a fresh namespace whose builtins are a whitelist (no open, eval, exec, getattr, ...);
- `import` only of a few computation modules, each handed over as a copy without
  its submodules (so no route from `re` to `enum.sys`);
- no attribute names starting with "_" and no frame/code attributes, so the usual
  `().__class__.__subclasses__()` and `gen.gi_frame.f_globals` escapes do not parse;
- a time limit through sys.settrace (works in Pyodide; no threads), plus a deadline
  check inserted into every loop and comprehension (a one-line `while True: pass`
  raises no trace events); and an output cap.
A single long C-level operation (e.g. 10**10**8) cannot be interrupted.
"""

from __future__ import annotations

import ast
import builtins
import decimal
import sys
import time
import types

from botpsy_agent.tooling import ToolContext, ToolError, tool

TIME_LIMIT_SECONDS = 5.0
MAX_OUTPUT_CHARS = 10_000
MAX_CODE_CHARS = 20_000
ALLOWED_MODULES = ("math", "cmath", "statistics", "fractions", "decimal", "itertools", "functools",
                   "collections", "json", "re", "datetime", "random", "string", "operator", "heapq",
                   "bisect", "calendar")
SAFE_BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "format", "frozenset", "hash", "hex", "int", "isinstance", "issubclass",
    "iter", "len", "list", "map", "max", "min", "next", "oct", "ord", "pow", "range", "repr", "reversed",
    "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip", "True", "False", "None",
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "IndexError", "KeyError",
    "LookupError", "NameError", "OverflowError", "RuntimeError", "StopIteration", "TypeError",
    "ValueError", "ZeroDivisionError", "NotImplementedError", "RecursionError",
    "type", "object", "staticmethod", "classmethod", "property", "super", "__build_class__")
# Library functions that fetch attributes by name (a way round the "_" rule) or act on the process.
WITHHELD_FROM_MODULES = {"string": {"Formatter"}, "operator": {"attrgetter", "methodcaller"},
                         "calendar": {"main", "setfirstweekday"}}
BLOCKED_ATTRIBUTES = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code",
    "ag_await", "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "tb_frame", "tb_next",
    "mro", "format_map"})


class TimeLimitExceeded(BaseException):
    """Raised inside the user's code when the time is up (BaseException: `except Exception` won't catch it)."""


class OutputLimitExceeded(BaseException):
    """Raised inside the user's code when it printed more than the cap."""


def _check_code(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (node.attr.startswith("_") or node.attr in BLOCKED_ATTRIBUTES):
            raise ToolError(f"line {node.lineno}: attribute '{node.attr}' is not allowed in run_python")
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise ToolError(f"line {node.lineno}: name '{node.id}' is not allowed in run_python")
        if isinstance(node, (ast.Global, ast.Nonlocal)) and any(name.startswith("__") for name in node.names):
            raise ToolError(f"line {node.lineno}: dunder names are not allowed in run_python")


_TICK = "__sandbox_tick__"


class _InsertDeadlineChecks(ast.NodeTransformer):
    """Every loop iteration and comprehension step calls the deadline check."""

    def _tick(self, node: ast.AST) -> ast.Call:
        return ast.copy_location(ast.Call(ast.Name(_TICK, ast.Load()), [], []), node)

    def _loop(self, node):
        self.generic_visit(node)
        node.body.insert(0, ast.copy_location(ast.Expr(self._tick(node)), node))
        return node

    visit_While = visit_For = visit_AsyncFor = _loop

    def visit_comprehension(self, node):
        self.generic_visit(node)
        node.ifs.append(self._tick(node.iter))
        return node


def _module_copy(name: str) -> types.ModuleType:
    """A fresh module holding only the public, non-module names of a real one."""
    original = __import__(name)
    copy = types.ModuleType(name, getattr(original, "__doc__", None))
    withheld = WITHHELD_FROM_MODULES.get(name, set())
    for attribute in dir(original):
        value = getattr(original, attribute)
        if not attribute.startswith("_") and attribute not in withheld and not isinstance(value, types.ModuleType):
            setattr(copy, attribute, value)
    return copy


class _Output:
    """Collects what print() writes, up to a cap."""

    def __init__(self, limit: int):
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.truncated = False

    def write(self, text: str) -> None:
        room = self.limit - self.size
        if len(text) > room:
            self.parts.append(text[:room])
            self.size = self.limit
            self.truncated = True
            raise OutputLimitExceeded()
        self.parts.append(text)
        self.size += len(text)

    def text(self) -> str:
        return "".join(self.parts)


def _make_namespace(output: _Output) -> dict:
    modules = {}

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level or name not in ALLOWED_MODULES:
            raise ImportError(f"module {name!r} is not available in run_python; allowed: {', '.join(ALLOWED_MODULES)}")
        if name not in modules:
            modules[name] = _module_copy(name)
        return modules[name]

    def captured_print(*values, sep=" ", end="\n"):
        output.write(str(sep).join(str(value) for value in values) + str(end))

    safe = {name: getattr(builtins, name) for name in SAFE_BUILTINS if hasattr(builtins, name)}
    safe.update(print=captured_print, __import__=guarded_import, ImportError=ImportError)
    return {"__builtins__": safe, "__name__": "__sandbox__"}


def _deadline_check(deadline: float):
    def tick() -> bool:
        if time.monotonic() > deadline:
            raise TimeLimitExceeded()
        return True
    return tick


def _time_limiter(deadline: float):
    def trace(frame, event, argument):
        if time.monotonic() > deadline:
            raise TimeLimitExceeded()
        return trace
    return trace


def _compile(code: str) -> tuple[types.CodeType | None, types.CodeType | None]:
    """(statements, final expression): the value of a last bare expression is shown, as in a REPL."""
    try:
        tree = ast.parse(code, filename="<run_python>", mode="exec")
    except SyntaxError as error:
        raise ToolError(f"syntax error on line {error.lineno}: {error.msg}") from None
    _check_code(tree)
    tree = ast.fix_missing_locations(_InsertDeadlineChecks().visit(tree))
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    statements = compile(tree, "<run_python>", "exec")
    expression = compile(last, "<run_python>", "eval") if last is not None else None
    return statements, expression


def run_code(code: str, time_limit: float = TIME_LIMIT_SECONDS, output_limit: int = MAX_OUTPUT_CHARS) -> dict:
    """Run `code`; returns {"output", "result"?, "error"?, "truncated"?}."""
    if not isinstance(code, str) or not code.strip():
        raise ToolError("the code is empty")
    if len(code) > MAX_CODE_CHARS:
        raise ToolError(f"the code is longer than {MAX_CODE_CHARS} characters")
    statements, expression = _compile(code)
    output = _Output(output_limit)
    namespace = _make_namespace(output)
    deadline = time.monotonic() + time_limit
    namespace[_TICK] = _deadline_check(deadline)
    answer: dict = {}
    previous_trace = sys.gettrace()
    decimal_context = decimal.getcontext().copy()     # the program may change precision for itself only
    sys.settrace(_time_limiter(deadline))
    try:
        exec(statements, namespace)
        if expression is not None:
            value = eval(expression, namespace)
            if value is not None:
                answer["result"] = repr(value)[:output_limit]
    except TimeLimitExceeded:
        answer["error"] = f"TimeLimitExceeded: stopped after {time_limit:g} seconds"
    except OutputLimitExceeded:
        answer["error"] = f"OutputLimitExceeded: stopped after printing {output_limit} characters"
    except RecursionError:
        answer["error"] = "RecursionError: maximum recursion depth exceeded"
    except MemoryError:
        answer["error"] = "MemoryError: the computation needs too much memory"
    except Exception as error:   # the user's code failed: report it like Python would, briefly
        line = _error_line(error)
        answer["error"] = f"{type(error).__name__}: {error}" + (f" (line {line})" if line else "")
    except SystemExit:
        answer["error"] = "SystemExit: the program tried to exit"
    finally:
        sys.settrace(previous_trace)
        decimal.setcontext(decimal_context)
    answer = {"output": output.text(), **answer}
    if output.truncated:
        answer["truncated"] = True
    return answer


def _error_line(error: BaseException) -> int | None:
    trace = error.__traceback__
    line = None
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "<run_python>":
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


@tool
def run_python(ctx: ToolContext, code: str) -> dict:
    """Run a short Python program for a computation and return what it prints (and the value of
    its last expression). Allowed imports: math, cmath, statistics, fractions, decimal, itertools,
    functools, collections, json, re, datetime, random, string, operator, heapq, bisect, calendar.
    No files, no network; 5 second limit.

    Args:
        code: The Python source to run.
    """
    return run_code(code)
