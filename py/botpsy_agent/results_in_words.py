"""Tool results as a person reads them: the answer shown when the model has no words of its own.

The model reads a result as JSON, third-party text inside its data frame, errors as
"Error: Kind: message". When the turn ends without the model's words (it repeated its calls, or
copied the agent's own line back), the person gets the results instead, and they should read as
an answer: records as lines, no data frame, a denial said as a denial. The conversation keeps
the results as the model read them (agent.py): third-party text never becomes the model's words.
"""

from __future__ import annotations

import json
from typing import Any

from .results import DENIED
from .safety import unmarked

# Fields a person does not need in a list of their records.
_HIDDEN_FIELDS = frozenset({"id", "provenance"})


def result_in_words(name: str, content: str) -> str:
    """One tool's result, as a line or a short block a person reads."""
    text = unmarked(content).strip()
    if text.startswith(DENIED):
        return f"You did not allow {name}, so it did not run."
    if text.startswith("Error:"):
        reason = text.split(":", 2)[-1].strip() if text.count(":") >= 2 else text
        return f"{name} could not run: {reason}"
    try:
        value = json.loads(text)
    except ValueError:
        return _labelled(name, text)
    return _labelled(name, "" if value in (None, [], {}, "") else _value_in_words(value))


def _labelled(name: str, body: str) -> str:
    if not body:
        return f"{name} found nothing."
    return f"{name}:\n{body}" if "\n" in body else f"{name}: {body}"


def _value_in_words(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(f"- {_item_in_words(item)}" for item in value)
    if isinstance(value, dict):
        return "\n".join(f"- {field}" for field in _fields(value))
    return _scalar(value)


def _item_in_words(item: Any) -> str:
    return ", ".join(_fields(item)) if isinstance(item, dict) else _scalar(item)


def _fields(record: dict) -> list[str]:
    """A record's fields worth reading, as "key: value"."""
    return [f"{key}: {_scalar(field)}" for key, field in record.items()
            if key not in _HIDDEN_FIELDS and field not in (None, "", [], {})]


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
