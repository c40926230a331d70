"""An exact, safe calculator: the expression is parsed with `ast`, never eval'd.

Integers and decimal literals become Fractions, so 0.1 + 0.2 is exactly 0.3 and
1/3 stays 1/3. Irrational functions (sin, log, non-integer powers that have no
exact root) fall back to floats and the result says it is approximate.
"""

from __future__ import annotations

import ast
import math
from fractions import Fraction
from typing import Callable

from botpsy_agent.tooling import ToolContext, ToolError, tool
from botpsy_agent.tools.calculator_spelling import python_spelling

MAX_EXPRESSION_CHARS = 1000
MAX_NODES = 500
MAX_RESULT_BITS = 1_000_000        # about 300,000 decimal digits
MAX_FACTORIAL = 5000
MAX_EXACT_DIGITS = 1000            # longer integers are shown in scientific notation
SIGNIFICANT_DIGITS = 15

Number = Fraction | float

CONSTANTS: dict[str, Number] = {"pi": math.pi, "e": math.e, "tau": math.tau}


class CalculatorError(ToolError):
    """The expression cannot be evaluated; the message says why."""


def _as_float(value: Number) -> float:
    try:
        return float(value)
    except OverflowError:
        raise CalculatorError("number too large for an approximate function") from None


def _exact_root(value: Fraction, degree: int) -> Fraction | None:
    """The exact `degree`-th root of a non-negative rational, or None when irrational."""
    if value < 0:
        return None
    roots = []
    for part in (value.numerator, value.denominator):
        root = round(part ** (1.0 / degree)) if part.bit_length() < 1000 else _integer_root(part, degree)
        for candidate in (root - 1, root, root + 1):
            if candidate >= 0 and candidate ** degree == part:
                roots.append(candidate)
                break
        else:
            return None
    return Fraction(roots[0], roots[1])


def _integer_root(value: int, degree: int) -> int:
    """floor(value ** (1/degree)) for big integers, by Newton's method."""
    guess = 1 << -(-value.bit_length() // degree)
    while True:
        better = ((degree - 1) * guess + value // guess ** (degree - 1)) // degree
        if better >= guess:
            return guess
        guess = better


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(base, Fraction) and isinstance(exponent, Fraction):
        if exponent.denominator == 1:
            power = exponent.numerator
            if base == 0 and power < 0:
                raise CalculatorError("zero cannot be raised to a negative power")
            size = max(abs(base.numerator).bit_length(), base.denominator.bit_length())
            if base not in (0, 1, -1) and size * abs(power) > MAX_RESULT_BITS:
                raise CalculatorError(f"result of the power is too large (limit about {MAX_RESULT_BITS} bits)")
            return base ** power
        if exponent.denominator <= 64:
            root = _exact_root(base, exponent.denominator)
            if root is not None:
                return _power(root, Fraction(exponent.numerator))
    if base < 0 and not float(exponent).is_integer():
        raise CalculatorError("a negative number has no real non-integer power")
    try:
        return math.pow(_as_float(base), _as_float(exponent))
    except OverflowError:
        raise CalculatorError("result of the power is too large") from None
    except ValueError:
        raise CalculatorError("power is undefined for these values") from None


def _sqrt(value: Number) -> Number:
    if value < 0:
        raise CalculatorError("square root of a negative number")
    return _power(value, Fraction(1, 2))


def _cbrt(value: Number) -> Number:
    if value < 0:
        return -_power(-value, Fraction(1, 3))
    return _power(value, Fraction(1, 3))


def _log(value: Number, base: Number | None = None) -> float:
    if value <= 0 or (base is not None and (base <= 0 or base == 1)):
        raise CalculatorError("logarithm needs a positive value and a positive base other than 1")
    return math.log(_as_float(value)) if base is None else math.log(_as_float(value), _as_float(base))


def _factorial(value: Number) -> Fraction:
    if not (isinstance(value, Fraction) and value.denominator == 1 and value >= 0):
        raise CalculatorError("factorial needs a non-negative integer")
    if value > MAX_FACTORIAL:
        raise CalculatorError(f"factorial is limited to n <= {MAX_FACTORIAL}")
    return Fraction(math.factorial(int(value)))


def _integers(name: str, values: tuple[Number, ...]) -> list[int]:
    if not all(isinstance(v, Fraction) and v.denominator == 1 for v in values):
        raise CalculatorError(f"{name} needs integers")
    return [int(v) for v in values]


def _round(value: Number, digits: Number = Fraction(0)) -> Number:
    places = _integers("round's digits", (digits,))[0]
    if isinstance(value, Fraction):
        return Fraction(round(value, places))
    return round(value, places)


def _approximate(function: Callable[[float], float]) -> Callable[[Number], float]:
    def apply(value: Number) -> float:
        try:
            return function(_as_float(value))
        except (ValueError, OverflowError):
            raise CalculatorError(f"{function.__name__} is undefined for {_format_plain(value)}") from None
    return apply


FUNCTIONS: dict[str, Callable[..., Number]] = {
    "sqrt": _sqrt, "cbrt": _cbrt, "abs": abs,
    "round": _round, "floor": lambda v: Fraction(math.floor(v)), "ceil": lambda v: Fraction(math.ceil(v)),
    "log": _log, "ln": lambda v: _log(v), "log10": lambda v: _log(v, Fraction(10)),
    "log2": lambda v: _log(v, Fraction(2)),
    "exp": _approximate(math.exp),
    "sin": _approximate(math.sin), "cos": _approximate(math.cos), "tan": _approximate(math.tan),
    "asin": _approximate(math.asin), "acos": _approximate(math.acos), "atan": _approximate(math.atan),
    "sinh": _approximate(math.sinh), "cosh": _approximate(math.cosh), "tanh": _approximate(math.tanh),
    "degrees": _approximate(math.degrees), "radians": _approximate(math.radians),
    "factorial": _factorial,
    "gcd": lambda *v: Fraction(math.gcd(*_integers("gcd", v))),
    "lcm": lambda *v: Fraction(math.lcm(*_integers("lcm", v))),
    "min": min, "max": max,
    "hypot": lambda *v: _sqrt(sum((x * x for x in v), Fraction(0))),
}


def _divide(left: Number, right: Number, operation: Callable[[Number, Number], Number]) -> Number:
    if right == 0:
        raise CalculatorError("division by zero")
    return operation(left, right)


def _floor_divide(left: Number, right: Number) -> Number:
    quotient = left // right
    return Fraction(quotient) if isinstance(quotient, int) else quotient


_BINARY: dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: _divide(a, b, lambda x, y: x / y),
    ast.FloorDiv: lambda a, b: _divide(a, b, _floor_divide),
    ast.Mod: lambda a, b: _divide(a, b, lambda x, y: x % y),
    ast.Pow: _power,
}


class _Evaluator:
    """Walks the parsed expression; only the node types below are accepted."""

    def __init__(self, source: str):
        self.source = source

    def evaluate(self, node: ast.AST) -> Number:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise CalculatorError(f"{type(node).__name__.lower()} is not allowed in a calculation"
                                  f"{self._where(node)}")
        value = method(node)
        if isinstance(value, float) and not math.isfinite(value):
            raise CalculatorError("the result is not a finite number")
        return value

    def _where(self, node: ast.AST) -> str:
        segment = ast.get_source_segment(self.source, node)
        return f" ('{segment}')" if segment else ""

    def _Expression(self, node: ast.Expression) -> Number:
        return self.evaluate(node.body)

    def _Constant(self, node: ast.Constant) -> Number:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CalculatorError(f"only numbers are allowed, not {value!r}")
        if isinstance(value, int):
            return Fraction(value)
        literal = (ast.get_source_segment(self.source, node) or repr(value)).replace("_", "")
        try:
            return Fraction(literal)    # the exact decimal the user typed, not the binary float
        except ValueError:
            return Fraction(value)

    def _Name(self, node: ast.Name) -> Number:
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        hint = " (it is a function: call it with parentheses)" if node.id in FUNCTIONS else ""
        raise CalculatorError(f"unknown name '{node.id}'{hint}; constants: {', '.join(CONSTANTS)}; "
                              f"functions: {', '.join(FUNCTIONS)}")

    def _UnaryOp(self, node: ast.UnaryOp) -> Number:
        operand = self.evaluate(node.operand)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return operand
        raise CalculatorError(f"operator not allowed{self._where(node)}")

    def _BinOp(self, node: ast.BinOp) -> Number:
        operation = _BINARY.get(type(node.op))
        if operation is None:
            raise CalculatorError(f"operator not allowed{self._where(node)}; use + - * / // % **")
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        try:
            return operation(left, right)
        except OverflowError:
            raise CalculatorError("the result is too large") from None

    def _Call(self, node: ast.Call) -> Number:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.get_source_segment(self.source, node.func)
            raise CalculatorError(f"unknown function '{name}'; functions: {', '.join(FUNCTIONS)}")
        if node.keywords:
            raise CalculatorError(f"{node.func.id}() takes no keyword arguments")
        arguments = [self.evaluate(argument) for argument in node.args]
        try:
            return FUNCTIONS[node.func.id](*arguments)
        except TypeError:
            raise CalculatorError(f"wrong number of arguments for {node.func.id}()") from None
        except ValueError as error:
            raise CalculatorError(f"{node.func.id}(): {error}") from None


def evaluate(expression: str) -> Number:
    """Evaluate an arithmetic expression; raises CalculatorError with the reason."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculatorError("the expression is empty")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculatorError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    source = python_spelling(expression)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as error:
        raise CalculatorError(f"could not parse '{expression}' (column {error.offset or '?'}): {error.msg}; "
                              "write numbers and operators, for example \"17% of 2340\" or \"(48.75 + 9.99) / 2\"") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculatorError(f"the expression has more than {MAX_NODES} parts")
    return _Evaluator(source).evaluate(tree)


def _format_integer(value: int) -> str:
    if value.bit_length() * 0.30103 < MAX_EXACT_DIGITS:
        return str(value)
    exponent = int(math.log10(abs(value)))
    mantissa = abs(value) // 10 ** (exponent - SIGNIFICANT_DIGITS)
    digits = str(mantissa)
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[0]}.{digits[1:SIGNIFICANT_DIGITS].rstrip('0') or '0'}e+{exponent + len(digits) - SIGNIFICANT_DIGITS - 1}"


def _decimal_places(value: Fraction) -> int | None:
    """How many decimal places write `value` exactly, or None when it repeats forever."""
    denominator, twos, fives = value.denominator, 0, 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    return max(twos, fives) if denominator == 1 else None


def _format_plain(value: Number) -> str:
    if isinstance(value, float):
        return f"{value:.{SIGNIFICANT_DIGITS}g}"
    if value.denominator == 1:
        return _format_integer(value.numerator)
    places = _decimal_places(value)
    if places is None or places > 40:
        return _format_plain(_as_float(value))
    scaled = str(abs(value.numerator) * 10 ** places // value.denominator).rjust(places + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{scaled[:-places]}.{scaled[-places:]}"


def calculate_result(expression: str) -> dict:
    """The calculator's answer as data: result text, exactness, the exact fraction of a decimal that repeats."""
    value = evaluate(expression)
    answer = {"expression": expression, "result": _format_plain(value)}
    if isinstance(value, float):
        answer["exact"] = False
    else:
        shown_in_full = value.denominator != 1 or value.numerator.bit_length() * 0.30103 < MAX_EXACT_DIGITS
        answer["exact"] = shown_in_full and _decimal_places(value) is not None
        # Only a decimal that never ends gains from its fraction (1/3); beside 0.12675 a model
        # answered "507/4000" for a tip.
        if _decimal_places(value) is None and value.denominator.bit_length() < 200:
            answer["fraction"] = f"{value.numerator}/{value.denominator}"
    return answer


@tool(side_effects=False, untrusted_output=False)
def calculator(ctx: ToolContext, expression: str) -> dict:
    """Evaluate an arithmetic expression exactly (fractions stay exact, 0.1+0.2 is 0.3).

    Supports + - * / // % ** (or ^), percentages ("15% of 80", "80 * 15%"), parentheses, the constants pi, e, tau and the
    functions sqrt, cbrt, abs, round, floor, ceil, log (natural, or log(x, base)),
    ln, log10, log2, exp, sin, cos, tan (radians), asin, acos, atan, sinh, cosh,
    tanh, degrees, radians, factorial, gcd, lcm, min, max, hypot.

    Args:
        expression: The arithmetic expression, for example "(3 + 4) * 2 / 7" or "sqrt(2) ^ 2".
    """
    return calculate_result(expression)
