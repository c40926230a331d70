"""What identifies the constraint a generation ran under, so a stored run stands in for a new
one only under the same grammar (--resume). Pure Python: the agent worker's Pyodide records it
in multi-turn transcripts too."""

from __future__ import annotations

import hashlib
import json


def constraint_digest(processors: list[dict] | None) -> str:
    """A digest of the logits-processor requests (grammar text, structural tags, schemas) the
    runtime was asked to compile; "" for none (free tool calls)."""
    if not processors:
        return ""
    text = json.dumps(processors, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
