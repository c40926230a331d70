"""The calculator: exact where it can be, safe always, clear when it refuses."""

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.calculator import calculate_result, calculator

from .conftest import call


@pytest.mark.parametrize("expression, result", [
    ("0.1 + 0.2", "0.3"),
    ("(3 + 4) * 2 / 7", "2"),
    ("2^10", "1024"),
    ("2 ** -3", "0.125"),
    ("-7 // 2", "-4"),
    ("10 % 3", "1"),
    ("sqrt(16)", "4"),
    ("8 ** (1/3)", "2"),
    ("cbrt(-27)", "-3"),
    ("factorial(20)", "2432902008176640000"),
    ("gcd(12, 18) + lcm(4, 6)", "18"),
    ("1_000 * 1.5e3", "1500000"),
    ("3 × 4 ÷ 2 − 1", "5"),
    ("abs(-2.50)", "2.5"),
    ("round(2.675, 2)", "2.68"),
    ("max(1, 2/3, 0.5)", "1"),
    ("hypot(3, 4)", "5"),
    ("15% of 80", "12"),
    ("80 * 2.5%", "2"),
    ("7 % 3", "1"),
    ("√16 + √(9)", "7"),
])
def test_exact_results(expression, result):
    answer = calculate_result(expression)
    assert answer["result"] == result
    assert answer["exact"] is True


@pytest.mark.parametrize("expression, result", [
    ("17% of 2,340", "397.8"),
    ("(17/100) * 2,340", "397.8"),
    ("$10,000 * (1 + 0.04)^5", "12166.529024"),
    ("2,499.00 EUR * 1.19", "2973.81"),
    ("EUR 2,499.00 * 1.19", "2973.81"),
    ("€129.99 * (1 - 30%)", "90.993"),
    ("£1,234,567.89 - 0.89", "1234567"),
    ("84.50$ * 15%", "12.675"),
    ("12 x 4", "48"),
    ("12x4", "48"),
    ("(2 + 1) x (3)", "9"),
    ("5²  + 2³", "33"),
    ("3 times 4 plus 2", "14"),
    ("10 divided by 4 minus 1", "1.5"),
    ("2 to the power of 10", "1024"),
    ("7 squared", "49"),
    ("half of 90", "45"),
    ("a third of $1,200.60", "400.2"),
    ("twice 21", "42"),
    ("2,340 / 10 – 4", "230"),
    ("gcd(1,234)", "1"),            # inside a call a comma separates arguments
    ("max(1,234, 5) + 1,000", "1234"),
    ("0x10 + 1", "17"),             # Python's hex literal is not "0 times 10"
])
def test_how_people_write_numbers_and_operators(expression, result):
    answer = calculate_result(expression)
    assert answer["result"] == result, answer
    assert answer["expression"] == expression  # the result shows what was asked, as written


def test_a_parse_error_shows_a_working_example():
    with pytest.raises(ToolError, match=r'could not parse .*for example "17% of 2340"'):
        calculate_result("17 of of 3")


def test_a_decimal_that_ends_has_no_fraction_beside_it():
    answer = calculate_result("84.50 * 15%")
    assert answer == {"expression": "84.50 * 15%", "result": "12.675", "exact": True}


def test_repeating_fraction_keeps_exact_fraction():
    answer = calculate_result("1/3")
    assert answer["fraction"] == "1/3"
    assert answer["exact"] is False
    assert answer["result"].startswith("0.33333333")


def test_irrational_results_are_marked_approximate():
    for expression, approximately in (("sin(pi/2)", 1.0), ("log(100, 10)", 2.0), ("sqrt(2)", 1.41421356237)):
        answer = calculate_result(expression)
        assert answer["exact"] is False
        assert abs(float(answer["result"]) - approximately) < 1e-9


def test_huge_integers_are_shown_in_scientific_notation():
    answer = calculate_result("2**10000")
    assert answer["result"].startswith("1.99506311688")
    assert answer["result"].endswith("e+3010")
    assert answer["exact"] is False


@pytest.mark.parametrize("expression, message", [
    ("1/0", "division by zero"),
    ("5 % 0", "division by zero"),
    ("", "empty"),
    ("2 +", "could not parse"),
    ("x + 1", "unknown name 'x'"),
    ("sqrt", "it is a function"),
    ("foo(2)", "unknown function 'foo'"),
    ("__import__('os')", "unknown function '__import__'"),
    ("(1).real", "attribute is not allowed"),
    ("'a' * 3", "only numbers"),
    ("[1, 2]", "list is not allowed"),
    ("lambda: 1", "lambda is not allowed"),
    ("2 ** 10 ** 10", "too large"),
    ("9 ** 9 ** 9", "too large"),
    ("factorial(100000)", "factorial is limited"),
    ("factorial(2.5)", "non-negative integer"),
    ("sqrt(-1)", "negative"),
    ("(-8) ** 0.5", "negative number"),
    ("log(0)", "logarithm"),
    ("0 ** -1", "zero cannot be raised"),
    ("1 < 2", "compare is not allowed"),
    ("sqrt(x=4)", "keyword"),
    ("True + 1", "only numbers"),
    ("1" * 1001, "longer than 1000"),
])
def test_refusals_say_what_was_wrong(expression, message):
    with pytest.raises(ToolError, match=message):
        calculate_result(expression)


def test_exp_overflow_is_a_clear_error():
    with pytest.raises(ToolError, match="undefined|too large|not a finite"):
        calculate_result("exp(100000)")


def test_tool_wrapper_returns_the_same_answer(ctx):
    assert call(calculator, ctx, expression="0.1+0.2")["result"] == "0.3"
    assert calculator.side_effects is False and calculator.untrusted_output is False
