"""What the streaming tool-call parser costs on adversarial output: a call whose value repeats
`</tool_call>` (and closing tags) thousands of times, the way a model copying an injected
document might, fed in 4-character chunks as the runtime streams it. Prints seconds per shape
and size; linear growth is what to look for.

    .venv/bin/python bench/parser_cost.py
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

from botpsy_agent.parsing.stream import ModelOutputParser  # noqa: E402

XML_OPEN = "<tool_call>\n<function=write_note>\n<parameter=text>\n"
XML_CLOSE = "\n</parameter>\n</function>\n</tool_call>"
SHAPES = {
    "xml: text </tool_call>": ("qwen3_coder_xml", "x </tool_call> "),
    "xml: </parameter> text </tool_call>": ("qwen3_coder_xml", "a </parameter> b </tool_call> "),
    "xml: </parameter></function> text </tool_call>": ("qwen3_coder_xml", "</parameter></function> z </tool_call> "),
    "hermes: </tool_call> in a string": ("hermes_json", "x </tool_call> "),
}


def body(tool_call_format: str, unit: str, repeats: int) -> str:
    if tool_call_format == "hermes_json":
        return '<tool_call>\n{"name": "write_note", "arguments": {"text": "' + unit * repeats + '"}}\n</tool_call>'
    return XML_OPEN + unit * repeats + XML_CLOSE


def seconds_to_parse(tool_call_format: str, text: str, chunk: int = 4) -> float:
    parser = ModelOutputParser(tool_call_format)
    started = time.perf_counter()
    for start in range(0, len(text), chunk):
        parser.feed(text[start:start + chunk])
    parser.finish()
    assert len(parser.calls) == 1, parser.calls
    return time.perf_counter() - started


def main() -> None:
    sizes = (250, 500, 1000, 2000)
    print(f"{'shape':<48}" + "".join(f"{f'x{n}':>10}" for n in sizes) + "   (seconds; chars at x2000)")
    for label, (tool_call_format, unit) in SHAPES.items():
        texts = [body(tool_call_format, unit, n) for n in sizes]
        cells = "".join(f"{seconds_to_parse(tool_call_format, text):>10.3f}" for text in texts)
        print(f"{label:<48}{cells}   ({len(texts[-1])})")


if __name__ == "__main__":
    main()
