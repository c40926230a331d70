"""Whether the person's message asks a question, which a turn answers without changing anything.

Asked "how much flour goes in my pancake recipe?", "what did Ravi agree to do in the meeting
notes?" or "In this chat app, how do I start a new line in my message without sending it?",
Qwen2.5-Coder-0.5B began with notes_create, then wrote it again (bench/tasks-done.md, issue 41):
a note nobody asked for, stopped only by the gate. A question asks for something to be found or
worked out, so the first step of its turn may call only the tools without side effects
(topic_routing.py); the answer still comes from whatever those read.

A question here is a message whose every sentence ends with a question mark ("I earn $4,250 a
month. How much is that a year?" is left alone: the agent cannot tell a statement from "Add milk."),
and that is not a request put as one: "Could you block two hours on Wednesday?", "Can you add milk
to my list?", "actually, would you mind deleting it?" ask the assistant to act, and keep every
tool. Only the message's own words count.
"""

from __future__ import annotations

import re

# "Can you ...?", "Actually, could you ...?", "please will you ...?", "would you mind ...?": a request.
_REQUEST = re.compile(r"^(?:(?:ok(?:ay)?|so|actually|and|hey|hi|please)\W+)*(?:can|could|would|will|won't)\s+(?:you|u)\b",
                      re.IGNORECASE)
# Where a sentence ends: ".", "!" or "?" before a space or a new line, or a line break itself.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def asks_a_question(message: str) -> bool:
    """True when `message` is a question, not a request: "what did Ravi agree to?" is one, "can you
    add it to my calendar?" and "Add milk. What else is on it?" are not."""
    sentences = [each.strip() for each in _SENTENCE_END.split(message.strip()) if each.strip()]
    return bool(sentences) and all(each.endswith("?") and not _REQUEST.match(each) for each in sentences)
