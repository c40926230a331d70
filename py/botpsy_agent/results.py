"""Tool results as the text the model reads: serialised and capped in length."""

from __future__ import annotations

import json
from typing import Any

# How a call the person did not allow is answered to the model.
DENIED = "Error: Denied:"


def result_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(result)


def cap_length(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    hidden = len(text) - limit
    return text[:limit] + f"\n[... truncated: {hidden} more characters not shown]"


def error_text(error: BaseException) -> str:
    return f"Error: {type(error).__name__}: {error}"
