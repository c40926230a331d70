"""The conversation: messages in the shape chat templates expect, export and restore."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from .provenance import UntrustedRead
from .safety import defuse

EXPORT_FORMAT = "botpsy-conversation"
EXPORT_VERSION = 1
ROLES = ("system", "user", "assistant", "tool")


class ConversationFormatError(ValueError):
    """Exported conversation data that cannot be restored."""


@dataclass
class Conversation:
    messages: list[dict] = field(default_factory=list)

    def add(self, message: dict) -> None:
        self.messages.append(message)

    def add_assistant(self, text: str, thinking: str, calls: list) -> None:
        """What the model said: visible text, thinking and the parsed calls (with their ids)."""
        self.messages.append({
            "role": "assistant",
            "content": text.strip(),
            "reasoning_content": thinking.strip("\n"),
            "tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": call.name or "", "arguments": call.arguments}}
                           for call_id, call in calls],
        })

    def messages_with_system(self, system_prompt: str) -> list[dict]:
        if system_prompt and not (self.messages and self.messages[0]["role"] == "system"):
            return [{"role": "system", "content": system_prompt}] + self.messages
        return list(self.messages)

    def holds_untrusted_content(self) -> bool:
        """True once any tool result from a third party is part of the conversation."""
        return any(message.get("untrusted") for message in self.messages)

    def holds_personal_data(self) -> bool:
        """True once any tool result read the person's own stored data (notes, to-dos, events,
        files), or came from a restored conversation (which may hold any of it)."""
        return any(message.get("personal_data") for message in self.messages)

    def untrusted_source(self) -> str | None:
        """Where the first third-party text in the conversation came from ("the tool files_read"),
        or None while it holds none."""
        for message in self.messages:
            if message.get("untrusted"):
                return _source_of(message)
        return None

    def untrusted_reads(self) -> list[UntrustedRead]:
        """Every third-party text the conversation holds, in order, each (tool, arguments, source)
        once: what a prompt built from it has read. Empty exactly when untrusted_source() is None."""
        # A restored conversation's calls are whatever its file said: take only well-formed parts.
        calls = {call.get("id"): call["function"]
                 for message in self.messages if isinstance(message.get("tool_calls"), list)
                 for call in message["tool_calls"]
                 if isinstance(call, dict) and isinstance(call.get("id"), str)
                 and isinstance(call.get("function"), dict)}
        reads: list[UntrustedRead] = []
        for message in self.messages:
            if not message.get("untrusted"):
                continue
            call_id = message.get("tool_call_id")
            function = calls.get(call_id, {}) if isinstance(call_id, str) else {}
            arguments = function.get("arguments")
            read = UntrustedRead(str(message.get("name") or function.get("name") or "unknown"),
                                 dict(arguments) if isinstance(arguments, dict) else {}, _source_of(message))
            if read not in reads:
                reads.append(read)
        return reads

    def clear(self) -> None:
        self.messages.clear()

    def export(self) -> dict:
        return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
                "messages": copy.deepcopy(self.messages)}

    @classmethod
    def restore(cls, data: dict, special_tokens: tuple[str, ...] = ()) -> "Conversation":
        """Exported data back as a conversation. The data comes from outside this agent (a
        file, the host page's storage) and cannot prove what it claims, so it is restored as
        data: every tool result counts as untrusted whatever its flags say (later side-effecting
        calls need the person's confirmation, as after reading a file), and no message keeps the
        model's special tokens (`special_tokens`: they could open a turn or a tool call)."""
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise ConversationFormatError(f"not an exported conversation: expected format "
                                          f"{EXPORT_FORMAT!r}")
        if data.get("version") != EXPORT_VERSION:
            raise ConversationFormatError(f"unsupported conversation version {data.get('version')!r}; "
                                          f"this agent reads version {EXPORT_VERSION}")
        messages = data.get("messages")
        if not isinstance(messages, list):
            raise ConversationFormatError("conversation 'messages' must be a list")
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                raise ConversationFormatError(f"message {index} needs a role in {ROLES}")
            if not isinstance(message.get("content", ""), str):
                raise ConversationFormatError(f"message {index}: content must be text")
        return cls([_as_restored(message, special_tokens) for message in copy.deepcopy(messages)])


def _source_of(message: dict) -> str:
    return message.get("untrusted_source") or f"the tool {message.get('name') or 'unknown'}"


def _as_restored(message: dict, special_tokens: tuple[str, ...]) -> dict:
    if "content" in message:
        message["content"] = defuse(message["content"], special_tokens)
    if message["role"] == "tool":
        source = message.get("untrusted_source") if message.get("untrusted") else None
        message["untrusted"] = True
        message["personal_data"] = True
        message["untrusted_source"] = (source if isinstance(source, str) and source
                                       else f"a restored conversation (the tool {message.get('name') or 'unknown'})")
    return message
