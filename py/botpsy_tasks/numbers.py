"""Numbers as people and models write them in an answer: "2,340", "$1,200.50", "397.80",
"22.2 °C", "−3" (a Unicode minus), "17%", "1.5e3"."""

from __future__ import annotations

import re

# A sign only where it cannot be a hyphen between words or a range ("10-20" is 10 and 20).
# Thousands separators: "," (or "_" / a thin space) between groups of exactly three digits.
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+\u2212])?"
    r"(?P<whole>\d{1,3}(?:[,_\u2009\u202f]\d{3})+|\d+)?"
    r"(?P<fraction>\.\d+)?"
    r"(?P<exponent>[eE][-+]?\d+)?"
)


def numbers_in(text: str) -> list[float]:
    """Every number written in the text, in order."""
    found = []
    for match in _NUMBER.finditer(text):
        whole, fraction = match.group("whole"), match.group("fraction")
        if whole is None and fraction is None:
            continue
        sign = match.group("sign")
        digits = re.sub(r"[,_\u2009\u202f]", "", whole or "0") + (fraction or "")
        exponent = match.group("exponent") or ""
        try:
            value = float(digits + exponent)
        except ValueError:
            value = float(digits)
        found.append(-value if sign in ("-", "\u2212") else value)
    return found


def default_tolerance(value: float) -> float:
    """0.5% of the value, at least 0.01: "22.2" stands for 22.22, "$12.68" for 12.675."""
    return max(0.01, abs(value) * 0.005)
