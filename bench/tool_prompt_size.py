"""How many prompt tokens the tool list costs: every built-in tool, one by one, and
the default set the agent enables (py/botpsy_agent/tool_selection.py).

A script that prints figures, not a test. Usage:
    .venv/bin/python bench/tool_prompt_size.py [MODEL_FOLDER]
MODEL_FOLDER holds tokenizer.json, tokenizer_config.json (its chat_template) and
manifest.json; default /tmp/botpsy-models/tiny-qwen3.5 (an exported test model).
Token counts depend on the tokenizer in that folder: run it on the real BotPsy
folder for BotPsy's exact figures.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tokenizers import Tokenizer

from botpsy_agent.agent import AgentOptions
from botpsy_agent.browser_session import builtin_tools
from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS

DEFAULT_FOLDER = Path("/tmp/botpsy-models/tiny-qwen3.5")


def load(folder: Path) -> tuple[ChatFormat, Tokenizer]:
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if not (folder / name).is_file():
            sys.exit(f"{folder} has no {name}: give a model folder (export one with botpsy-web export)")
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    chat_format = ChatFormat.from_model_files(json.loads((folder / "tokenizer_config.json").read_text()), manifest)
    return chat_format, Tokenizer.from_file(str(folder / "tokenizer.json"))


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_FOLDER
    chat_format, tokenizer = load(folder)
    messages = [{"role": "system", "content": AgentOptions().system_prompt}, {"role": "user", "content": "Hi"}]

    def tokens(tools) -> int:
        prompt = chat_format.render(messages, [tool.spec() for tool in tools], False)
        return len(tokenizer.encode(prompt, add_special_tokens=False).ids)

    tools = builtin_tools()
    bare = tokens([])
    print(f"model folder: {folder}")
    print(f"prompt without tools (system prompt + 'Hi'): {bare} tokens\n")
    print(f"{'tool':<24}{'tokens':>7}  {'json chars':>10}  default")
    rows = []
    for tool in tools:
        # A tool's cost: the prompt with it alone minus the prompt with no tools, less the
        # fixed tool-section preamble (measured below with one tool and with two).
        rows.append((tool.name, tokens([tool]) - bare, len(json.dumps(tool.spec()["function"]))))
    preamble = tokens(tools[:1]) + tokens(tools[1:2]) - tokens(tools[:2]) - bare
    for name, cost, chars in sorted(rows, key=lambda row: -row[1]):
        print(f"{name:<24}{cost - preamble:>7}  {chars:>10}  {'yes' if name in DEFAULT_ENABLED_TOOLS else ''}")
    everything = tokens(tools)
    default = tokens([tool for tool in tools if tool.name in DEFAULT_ENABLED_TOOLS])
    print(f"\ntool-section preamble (instructions around the list): {preamble} tokens")
    print(f"all {len(tools)} built-in tools: {everything - bare} tokens of tool list (prompt {everything})")
    print(f"default set, {len(DEFAULT_ENABLED_TOOLS)} tools: {default - bare} tokens of tool list (prompt {default})")
    print(f"saved: {everything - default} tokens ({100 * (everything - default) / (everything - bare):.0f}% of the list)")


if __name__ == "__main__":
    main()
