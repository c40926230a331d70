"""Google-style docstrings: the summary and the per-argument descriptions."""

from __future__ import annotations

import inspect
import re

_SECTION_HEADER = re.compile(r"^(\w[\w ]*):\s*$")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_ARGS_HEADERS = {"Args", "Arguments", "Parameters"}


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {argument: description}).

    The description is everything before the first section header (Args:,
    Returns:, Raises:, ...). Argument descriptions may continue on further,
    more deeply indented lines.
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    description: list[str] = []
    arguments: dict[str, str] = {}
    section = None
    current = None
    arguments_indent = 0
    for line in lines:
        header = _SECTION_HEADER.match(line)
        if header and not line.startswith((" ", "\t")):
            section = header.group(1)
            current = None
            continue
        if section is None:
            description.append(line)
        elif section in _ARGS_HEADERS:
            stripped = line.strip()
            if not stripped:
                continue
            indent = len(line) - len(line.lstrip())
            match = _ARG_LINE.match(stripped)
            if match and (current is None or indent <= arguments_indent):
                current = match.group(1).lstrip("*")
                arguments_indent = indent
                arguments[current] = match.group(2).strip()
            elif current is not None:
                arguments[current] = (arguments[current] + " " + stripped).strip()
    return "\n".join(description).strip(), arguments
