"""Which of the person's files their message names, so the agent reads them before the model's first step.

"How much did I spend on groceries in November? It's all in spending.csv": the person has said
where the answer is. Left to choose, Qwen2.5-Coder-0.5B called notes_list, notes_search,
current_time or a tool it made up for every task of the suite that named a file (bench/RESULTS.md,
issue 41), and answered with a figure it invented. The agent runs `files_read` on each named file
itself, as if the model had called it first: the call and its result are in the conversation and on
the page like any other, the text is marked as data (files_read's output is untrusted), and the
model answers from it or calls another tool.

Only a whole name with an extension counts ("budget.csv", "(lease.txt)", "contacts.json?"), matched
without regard to case: a file named "notes" is not read because the person wrote the word notes.
A name the person's files do not hold reads nothing (the model may still look with files_list).
"""

from __future__ import annotations

import re

from .tooling import ToolContext
from .tools.user_files import file_names

READ_TOOL = "files_read"
MAX_NAMED_FILES = 3  # a message naming more reads the first three it names

# A name's extension: a dot, then letters or digits only ("csv", "md", "json").
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")


def _named_at(message: str, name: str) -> int | None:
    """Where `message` names `name` as a whole (not inside a longer name or word), else None."""
    pattern = re.compile(r"(?<![\w./\\-])" + re.escape(name) + r"(?![\w-])(?!\.\w)", re.IGNORECASE)
    found = pattern.search(message)
    return found.start() if found else None


def files_named_in(message: str, file_names: list[str]) -> list[str]:
    """The names among `file_names` (with an extension) that `message` names, in the order it
    names them, at most MAX_NAMED_FILES."""
    places = []
    for name in file_names:
        if not _EXTENSION.search(name):
            continue
        at = _named_at(message, name)
        if at is not None:
            places.append((at, name))
    return [name for _, name in sorted(places)[:MAX_NAMED_FILES]]


async def files_to_read(message: str, context: ToolContext) -> list[str]:
    """The person's files `message` names (files_named_in over their stored and session files)."""
    return files_named_in(message, await file_names(context))
