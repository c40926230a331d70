"""Render conversations into prompts with the model's own chat template.

The template comes from the model folder (tokenizer_config.json "chat_template")
and is rendered with jinja2 the way transformers does it: sandboxed, trim_blocks,
lstrip_blocks, `tools=` and `enable_thinking=`. BotPsy therefore sees exactly the
format it was trained on.

Fallback for templates that ignore `tools` (SmolLM2): the tool list and the
Hermes JSON calling convention go into the system message, earlier calls are
written into the assistant text as `<tool_call>{json}</tool_call>`, and tool
results come back as user messages wrapped in `<tool_response>`.

Prefix reuse: the runtime keeps the processed prompt prefix, so a prompt should
extend the previous prompt plus the model's output. Within a turn,
`continue_prompt` builds exactly that: the model's own output stays as it was
generated (thinking included), and only what the template writes after it is
rendered. A new user turn renders the whole conversation with the template
(which may drop earlier thinking); the runtime then reuses the prefix up to the
first difference.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

TOOL_CALL_FORMATS = ("qwen3_coder_xml", "hermes_json")


class TemplateError(ValueError):
    """The chat template is missing or failed to render."""


def _raise_exception(message):
    raise TemplateError(f"chat template error: {message}")


def _tojson(value, indent=None, separators=None, sort_keys=False, ensure_ascii=False):
    return json.dumps(value, indent=indent, separators=separators, sort_keys=sort_keys,
                      ensure_ascii=ensure_ascii)


def _strftime_now(format_string):
    return datetime.datetime.now().strftime(format_string)


def compile_template(source: str) -> jinja2.Template:
    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                extensions=["jinja2.ext.loopcontrols"])
    environment.filters["tojson"] = _tojson
    environment.globals["raise_exception"] = _raise_exception
    environment.globals["strftime_now"] = _strftime_now
    try:
        return environment.from_string(source)
    except jinja2.TemplateSyntaxError as error:
        raise TemplateError(f"chat template does not compile: {error}") from None


def fallback_tool_instructions(tool_specs: list[dict]) -> str:
    """The system-prompt text that teaches a template-less model our tools (Hermes JSON)."""
    lines = ["# Tools", "",
             "You can call functions to help with the user's request. "
             "Their signatures are inside <tools></tools>:", "<tools>"]
    lines += [json.dumps(spec, ensure_ascii=False) for spec in tool_specs]
    lines += ["</tools>", "",
              "To call a function, answer with one JSON object per call inside "
              "<tool_call></tool_call> tags:",
              '<tool_call>\n{"name": "function_name", "arguments": {"argument": "value"}}\n</tool_call>',
              "Results come back inside <tool_response></tool_response>. "
              "When you have what you need, answer the user in plain text."]
    return "\n".join(lines)


@dataclass
class ChatFormat:
    """How one model wants its prompts written and its tool calls read."""

    template_source: str
    tool_call_format: str = "qwen3_coder_xml"
    supports_tools: bool = True
    bos_token: str = ""
    eos_token: str = ""

    def __post_init__(self):
        if not self.template_source:
            raise TemplateError("the model folder has no chat_template in tokenizer_config.json")
        if self.tool_call_format not in TOOL_CALL_FORMATS:
            raise TemplateError(f"unknown tool_call_format {self.tool_call_format!r}; "
                                f"expected one of {TOOL_CALL_FORMATS}")
        self._template = compile_template(self.template_source)

    @classmethod
    def from_model_files(cls, tokenizer_config: dict, manifest: dict | None = None) -> "ChatFormat":
        """Build from the folder's tokenizer_config.json and manifest.json (both parsed)."""
        manifest = manifest or {}
        template = tokenizer_config.get("chat_template")
        if isinstance(template, list):  # named templates: [{"name": "default", "template": ...}]
            named = {entry.get("name"): entry.get("template") for entry in template}
            template = named.get("tool_use") or named.get("default")
        supports = manifest.get("chat_template_supports_tools")
        if supports is None:
            supports = bool(template) and "tools" in template
        call_format = manifest.get("tool_call_format")
        if call_format is None:
            call_format = "qwen3_coder_xml" if template and "<function=" in template else "hermes_json"
        if not supports:
            call_format = "hermes_json"  # our fallback always teaches Hermes JSON
        return cls(template or "", call_format, bool(supports),
                   _token_text(tokenizer_config.get("bos_token")),
                   _token_text(tokenizer_config.get("eos_token")))

    def render(self, messages: list[dict], tool_specs: list[dict], thinking: bool,
               add_generation_prompt: bool = True) -> str:
        if self.supports_tools:
            prepared, tools = [_native_message(message) for message in messages], tool_specs or None
        else:
            prepared, tools = _fallback_messages(messages, tool_specs), None
        try:
            return self._template.render(
                messages=prepared, tools=tools, add_generation_prompt=add_generation_prompt,
                enable_thinking=thinking, bos_token=self.bos_token, eos_token=self.eos_token)
        except TemplateError:
            raise
        except Exception as error:
            raise TemplateError(f"chat template failed to render: {type(error).__name__}: {error}") from None

    def continue_prompt(self, previous_prompt: str, raw_output: str, messages: list[dict],
                        tool_specs: list[dict], thinking: bool) -> str | None:
        """The next prompt of the same turn: the previous prompt, the model's own output
        as it was generated, then what the template writes after that assistant message
        (end of turn, tool results, generation prompt). None when the template does not
        allow it; the caller then renders the whole conversation."""
        assistant_indexes = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
        if not self.eos_token or not assistant_indexes:
            return None
        before = self.render(messages[:assistant_indexes[-1]], tool_specs, thinking,
                             add_generation_prompt=False)
        full = self.render(messages, tool_specs, thinking)
        if not full.startswith(before):  # the new messages changed earlier text
            return None
        rest = full[len(before):]
        end_of_message = rest.find(self.eos_token)
        if end_of_message < 0:
            return None
        if raw_output.endswith(self.eos_token):
            raw_output = raw_output[:-len(self.eos_token)]
        return previous_prompt + raw_output + rest[end_of_message:]


def prompt_leaves_thinking_open(prompt: str) -> bool:
    """True when the generation prompt already opened <think> (Qwen3.5 with thinking on)."""
    return prompt.rfind("<think>") > prompt.rfind("</think>")


def _token_text(token: Any) -> str:
    if isinstance(token, dict):  # {"content": "<|im_end|>", ...}
        return token.get("content", "")
    return token or ""


def _native_message(message: dict) -> dict:
    prepared = {key: value for key, value in message.items() if value is not None}
    if message["role"] == "assistant" and not message.get("tool_calls"):
        prepared.pop("tool_calls", None)
    return prepared


def _fallback_messages(messages: list[dict], tool_specs: list[dict]) -> list[dict]:
    prepared: list[dict] = []
    instructions = fallback_tool_instructions(tool_specs) if tool_specs else ""
    if instructions:
        if messages and messages[0]["role"] == "system":
            prepared.append({"role": "system", "content": messages[0]["content"] + "\n\n" + instructions})
            messages = messages[1:]
        else:
            prepared.append({"role": "system", "content": instructions})
    for message in messages:
        if message["role"] == "assistant":
            text = message.get("content") or ""
            for call in message.get("tool_calls") or []:
                function = call["function"]
                body = json.dumps({"name": function["name"], "arguments": function["arguments"]},
                                  ensure_ascii=False)
                text += ("\n" if text else "") + f"<tool_call>\n{body}\n</tool_call>"
            prepared.append({"role": "assistant", "content": text})
        elif message["role"] == "tool":
            response = f"<tool_response>\n{message['content']}\n</tool_response>"
            if prepared and prepared[-1].get("from_tools"):
                prepared[-1]["content"] += "\n" + response
            else:
                prepared.append({"role": "user", "content": response, "from_tools": True})
        else:
            prepared.append({"role": message["role"], "content": message.get("content") or ""})
    return [{key: value for key, value in message.items() if key != "from_tools"} for message in prepared]
