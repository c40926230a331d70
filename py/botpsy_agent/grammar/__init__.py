"""Grammar-constrained tool calls: the constraint the model worker applies while the
model writes a call, built from the same tool schemas the prompt shows it.

    logits_processor_spec(tools, tool_call_format, mode="auto") -> {"name": "tool-call-grammar", "args": {...}} | None
"""

from .spec import PROCESSOR_NAME, TOOL_CALL_MODES, logits_processor_spec, structural_tag, tool_schemas, untagged_call

__all__ = ["PROCESSOR_NAME", "TOOL_CALL_MODES", "logits_processor_spec", "structural_tag", "tool_schemas",
           "untagged_call"]
