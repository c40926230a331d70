"""Numbers in an answer that neither the person nor a tool gave: figures the model worked out itself.

Qwen2.5-Coder-0.5B answers many number questions in words without calling a tool, and the figure
is then its own arithmetic, mostly wrong: "and 25%?" after "What's 20% of 350?" answered 75,
"and in Kelvin?" answered with the Celsius figure again, "The current time in Los Angeles is 19:00"
(Tokyo's, from the turn before), "$4,250 a month ... over a year" worked through in prose to a
wrong total (bench/tasks-done.md, issue 41). When a turn's words state such a number and no tool
ran in the turn, the agent asks the model again with a call required, of the tools that only read
or compute (agent.py), so the figure comes from a tool.

A number counts as given when it appears, to the precision the answer writes it, in the person's
messages (the agent's date line included) or in one of the turn's tool results. Single-digit
whole numbers ("2 eggs", "step 3") and numbers inside code are not checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NUMBER = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+(?!\d)|\d+)(\.\d+)?(?!\d)")
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.DOTALL)


def numbers_in(text: str) -> list[tuple[str, float, int]]:
    """Each number written in `text`: (as written, value, decimals written). "2,340" is 2340; a
    date or time gives its parts ("2026-12-12T11:00": 2026, 12, 12, 11, 00)."""
    found = []
    for match in _NUMBER.finditer(text):
        whole, fraction = match.group(1), match.group(2) or ""
        found.append((match.group(0), float(whole.replace(",", "") + fraction), max(len(fraction) - 1, 0)))
    return found


def unsourced_numbers(answer: str, sources: Iterable[str]) -> list[str]:
    """The numbers `answer` states (outside code) that no text of `sources` holds, as written."""
    given = [value for text in sources for _, value, _ in numbers_in(text)]
    unsourced = []
    for written, value, decimals in numbers_in(_CODE.sub(" ", answer)):
        if decimals == 0 and value < 10:
            continue
        tolerance = 0.5 * 10 ** -decimals + 1e-9    # "22.2" and "22" are 22.2222 written shorter
        if not any(abs(value - other) <= tolerance for other in given):
            unsourced.append(written)
    return unsourced
