"""Arithmetic as people (and models copying them) write it, in Python's spelling.

"17% of 2,340", "$10,000 * 1.04^5", "2,499.00 EUR * 1.19", "12 x 4", "5²", "half of 90" all
reach the calculator; Python's parser reads none of them as meant ("2,340" is a tuple). Each
rewrite below keeps the meaning and is refused nowhere else: a comma between arguments of a
function call stays a comma, "7 % 3" stays modulo, a name that is not a number's unit is left
for the evaluator to refuse by name.
"""

from __future__ import annotations

import re

# Symbols Python spells differently.
_SYMBOLS = {"×": "*", "·": "*", "÷": "/", "−": "-", "–": "-", "^": "**", "²": "**2", "³": "**3"}
_ROOT_OF_NUMBER = re.compile(r"√\s*(\d+(?:\.\d*)?)")

# Operators written as words, whole words only, longest first.
_WORDS = [
    (r"to the power of", "**"), (r"multiplied by", "*"), (r"divided by", "/"), (r"times", "*"),
    (r"plus", "+"), (r"minus", "-"), (r"squared", "**2"), (r"cubed", "**3"),
    (r"(?:one |a )?half of", "(1/2) *"), (r"(?:one |a )?third of", "(1/3) *"), (r"(?:one |a )?quarter of", "(1/4) *"),
    (r"twice", "2 *"), (r"double", "2 *"),
]
_WORD_OPERATORS = [(re.compile(rf"\b{words}\b", re.IGNORECASE), python) for words, python in _WORDS]

# A currency symbol or ISO code written next to a number: the number alone is meant.
_CURRENCY_SYMBOLS = "$€£¥₹"
_CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "INR", "CNY", "SEK", "NOK", "DKK", "PLN")
_SYMBOL_BEFORE = re.compile(rf"[{re.escape(_CURRENCY_SYMBOLS)}]\s*(?=[\d.])")
_SYMBOL_AFTER = re.compile(rf"(?<=[\d.])\s*[{re.escape(_CURRENCY_SYMBOLS)}]")
_CODE = re.compile(rf"(?:\b(?:{'|'.join(_CURRENCY_CODES)})\s*(?=[\d.])|(?<=[\d.])\s*(?:{'|'.join(_CURRENCY_CODES)})\b)")

# "12 x 4", "12x4" (not "0x1F", Python's hex literal) between two numbers.
_TIMES_X = re.compile(r"(?<=[\d)])\s*[xX]\s*(?=[\d(])")
_HEX = re.compile(r"\b0[xX][0-9a-fA-F]+\b")

# A number with thousands separators: 2,340 or 1,234,567.89 (no space after a comma).
_GROUPED = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])")
_CALL_OPEN = re.compile(r"[A-Za-z_]\w*\s*\($")

# "15%" followed by nothing, an operator, ")" , "," or "of" is a percentage; "7 % 3" stays modulo.
_PERCENT = re.compile(r"(\d+(?:\.\d*)?)\s*%(?=\s*(?:$|[-+*/^),]|of\b))")
_OF = re.compile(r"(?<=\))\s*of\b")


def python_spelling(expression: str) -> str:
    """The expression as the evaluator parses it (see the module's docstring)."""
    for written, python in _SYMBOLS.items():
        expression = expression.replace(written, python)
    expression = _ROOT_OF_NUMBER.sub(r"sqrt(\1)", expression).replace("√", "sqrt")
    for pattern, python in _WORD_OPERATORS:
        expression = pattern.sub(f" {python} ", expression)
    expression = _CODE.sub(" ", _SYMBOL_AFTER.sub("", _SYMBOL_BEFORE.sub("", expression)))
    expression = _without_thousands_separators(expression)
    if not _HEX.search(expression):
        expression = _TIMES_X.sub(" * ", expression)
    expression = _PERCENT.sub(r"(\1/100)", expression)
    return _OF.sub(" *", expression).strip()


def _without_thousands_separators(expression: str) -> str:
    """2,340 -> 2340, except inside a function call's parentheses (gcd(1,234) is two arguments)."""
    pieces, last = [], 0
    for match in _GROUPED.finditer(expression):
        if _inside_a_call(expression[:match.start()]):
            continue
        pieces += [expression[last:match.start()], match.group().replace(",", "")]
        last = match.end()
    return "".join(pieces) + expression[last:]


def _inside_a_call(before: str) -> bool:
    """Whether the text up to here has an open parenthesis that belongs to a function call."""
    opened: list[bool] = []  # per open parenthesis: does it follow a function's name?
    for index, char in enumerate(before):
        if char == "(":
            opened.append(bool(_CALL_OPEN.search(before[:index + 1])))
        elif char == ")" and opened:
            opened.pop()
    return any(opened)
