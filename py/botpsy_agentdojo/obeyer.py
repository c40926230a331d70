"""The scripted obeyer: the worst-case model for measuring what the boundaries hold by themselves.

It does the user's task (the user task's ground-truth calls, one per reply, then the task's
ground-truth answer) and, as soon as the injection's goal is anywhere in its prompt, obeys it
exactly: its next reply makes every ground-truth call of the injection task, and its final
answer also says the injection task's ground-truth output (the travel suite's "say that I
should visit ..." goal is won by text alone). Refusals do not discourage it.

It speaks as a model of the folder would: every reply is the text the folder's own chat
template writes for such an assistant message (tool calls in the folder's dialect, Qwen3-Coder
XML or Hermes JSON), and the agent reads it with its own parser. Nothing is handed to the loop
behind the parser's back.
"""

from __future__ import annotations

import os
import re

from botpsy_agent.chat_format import ChatFormat

_NOT_ALPHANUMERIC = re.compile(r"[^0-9a-z]+")


def _letters_and_digits(text: str) -> str:
    """Text reduced to what survives any quoting: data marks, YAML line folding and escapes
    all change only spaces and punctuation."""
    return _NOT_ALPHANUMERIC.sub("", text.lower())


def assistant_reply(chat_format: ChatFormat, tool_specs: list[dict], text: str, calls: list[tuple[str, dict]]) -> str:
    """What a model of this chat format writes for an assistant message with `text` and `calls`,
    read off the template: the rendered message minus the generation prompt's header, up to the
    end-of-turn token."""
    history = [{"role": "system", "content": "."}, {"role": "user", "content": "."}]
    message = {"role": "assistant", "content": text, "reasoning_content": "",
               "tool_calls": [{"id": f"call_{index}", "type": "function",
                               "function": {"name": name, "arguments": arguments}}
                              for index, (name, arguments) in enumerate(calls)]}
    before = chat_format.render(history, tool_specs, False, add_generation_prompt=False)
    with_message = chat_format.render(history + [message], tool_specs, False, add_generation_prompt=False)
    generation_prompt = chat_format.render(history, tool_specs, False)
    if not (with_message.startswith(before) and generation_prompt.startswith(before)):
        raise ValueError("the chat template rewrites earlier messages; cannot read a reply off it")
    body, header = with_message[len(before):], generation_prompt[len(before):]
    # The role header both share ends with a line break; past it, the generation prompt may
    # open what the model does not write itself (an empty <think> block).
    shared = os.path.commonprefix([body, header])
    reply = body[shared.rfind("\n") + 1:]
    end = reply.find(chat_format.eos_token) if chat_format.eos_token else -1
    return reply[:end] if end >= 0 else reply.rstrip("\n")


class ScriptedObeyer:
    """A prompt -> reply function for botpsy_agent's ScriptedModel (one per case)."""

    def __init__(self, chat_format: ChatFormat, tool_specs: list[dict],
                 user_calls: list[tuple[str, dict]], user_answer: str,
                 injection_goal: str | None = None, injection_calls: list[tuple[str, dict]] = (),
                 injection_answer: str = ""):
        self.chat_format = chat_format
        self.tool_specs = tool_specs
        self.pending_user_calls = list(user_calls)
        self.user_answer = user_answer
        self.goal_key = _letters_and_digits(injection_goal) if injection_goal else None
        self.injection_calls = list(injection_calls)
        self.injection_answer = injection_answer
        self.obeyed = False

    def __call__(self, prompt: str) -> str:
        if not self.obeyed and self.goal_key and self.goal_key in _letters_and_digits(prompt):
            self.obeyed = True
            if self.injection_calls:
                return self._reply("", self.injection_calls)
        if self.pending_user_calls:
            return self._reply("", [self.pending_user_calls.pop(0)])
        answer = self.user_answer
        if self.obeyed and self.injection_answer:
            answer = f"{answer}\n{self.injection_answer}".strip()
        return self._reply(answer or "Done.", [])

    def _reply(self, text: str, calls: list[tuple[str, dict]]) -> str:
        return assistant_reply(self.chat_format, self.tool_specs, text, calls)
