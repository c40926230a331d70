"""web/runtime/grammar/call-span.js under Node: where a reply decides on a tool call or writes
one (args.greedyCalls picks those tokens greedily). The tags come from the processor's own
structural tag, so any format's begin and end work."""

import json
import shutil
import subprocess

from botpsy_web import REPO_ROOT

SCRIPT = """
import {CallSpan, callTagsOf} from "./call-span.mjs";
const {tag, pieces} = JSON.parse(await new Promise((resolve) => {
  let data = ""; process.stdin.on("data", (chunk) => { data += chunk; }); process.stdin.on("end", () => resolve(data));
}));
const tags = callTagsOf(tag);
const span = new CallSpan(tags, (id) => pieces[id]);
const seen = [span.decidingOrCalling];
pieces.forEach((_, id) => { span.push(id); seen.push(span.decidingOrCalling); });
span.pop();
console.log(JSON.stringify({tags, seen, afterPop: span.decidingOrCalling}));
"""

TRIGGERED = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [
    {"type": "tag", "begin": "<tool_call>", "content": {"type": "grammar", "grammar": 'root ::= "x"'}, "end": "</tool_call>"}]}}
NO_CALL = {"type": "structural_tag", "format": {"type": "grammar", "grammar": "root ::= text"}}


def run_span(tmp_path, tag, pieces):
    node = shutil.which("node")
    assert node, "Node.js is needed (./run.sh installs it with npm)"
    shutil.copy(REPO_ROOT / "web/runtime/grammar/call-span.js", tmp_path / "call-span.mjs")
    (tmp_path / "span.mjs").write_text(SCRIPT)
    done = subprocess.run([node, str(tmp_path / "span.mjs")], input=json.dumps({"tag": tag, "pieces": pieces}),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_first_token_and_a_calls_tokens_up_to_its_end_tag(tmp_path):
    pieces = ["Let", " me", " check", ".", "<tool_", "call>", "\n{\"name\"", ": \"x\"}", "\n</tool", "_call>", " Done"]
    out = run_span(tmp_path, TRIGGERED, pieces)
    assert out["tags"] == [{"begin": "<tool_call>", "end": "</tool_call>"}]
    # before each token: the reply's first decides; words are free; from the first part of the tag's begin
    # ("<tool_") to its end, greedy
    assert out["seen"] == [True, False, False, False, False, True, True, True, True, True, False, False]
    assert out["afterPop"] is False


def test_a_tag_left_open_keeps_every_later_token_greedy_and_pop_takes_one_back(tmp_path):
    out = run_span(tmp_path, TRIGGERED, ["<tool_call>", "\n<function=x>", "\n</tool_call", ">"])
    assert out["seen"] == [True, True, True, True, False]
    assert out["afterPop"] is True  # "</tool_call" without its ">": still inside


def test_words_that_only_look_like_a_tags_start_for_a_moment_go_back_to_the_temperature(tmp_path):
    out = run_span(tmp_path, TRIGGERED, ["Use", " <", "br", "> here"])
    assert out["seen"] == [True, False, True, False, False]


def test_a_grammar_that_lets_no_call_open_leaves_every_token_to_the_temperature(tmp_path):
    out = run_span(tmp_path, NO_CALL, ["Hello", " there"])
    assert out["tags"] == [] and out["seen"] == [False, False, False]
