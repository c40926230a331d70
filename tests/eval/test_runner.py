"""run_cases: every case's prompt goes to the engine, its output is read and scored; a
generation that fails is recorded with the runtime's message and counted wrong (also where
no call was the right answer), and the run goes on."""

import json

from botpsy_agent.chat_format import ChatFormat
from botpsy_eval.data import load_cases
from botpsy_eval.generation import Generation, GenerationError
from botpsy_eval.pipeline import render_case
from botpsy_eval.runner import run_cases
from botpsy_eval.schema import tool_name

TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


class ScriptedModel:
    """Answers each prompt with a fixed output (or fails on the prompts it is told to)."""

    def __init__(self, outputs: dict, failing: set):
        self.outputs, self.failing, self.prompts = outputs, failing, []

    def generate(self, prompt, max_tokens, logits_processors=None):
        self.prompts.append(prompt)
        if prompt in self.failing:
            raise GenerationError("the model worker stopped")
        return Generation(self.outputs[prompt], [7, 8, 2], 123, "eos", 0.25)


def test_outputs_are_read_and_scored_and_failures_are_recorded(ground_truth):
    chat_format = ChatFormat(TEMPLATE, "hermes_json", supports_tools=False)
    simple, irrelevant = load_cases(["simple_python"], limit=1)[0], load_cases(["irrelevance"], limit=2)
    rendered = [render_case(chat_format, case) for case in (simple, *irrelevant)]
    (name, arguments), = ground_truth.base_calls(simple)
    right_call = json.dumps({"name": tool_name(name), "arguments": arguments})  # untagged, as Qwen2.5-Coder writes it
    model = ScriptedModel({rendered[0].prompt: right_call, rendered[1].prompt: "No tool can do that."},
                          failing={rendered[2].prompt})
    seen = []
    runs = run_cases(model, ("browser", "q8", "free"), rendered, chat_format, 64, seen.append)

    assert model.prompts == [item.prompt for item in rendered] and seen == runs
    assert [run.correct for run in runs] == [True, True, False]
    assert runs[0].calls == [{"name": tool_name(name), "arguments": arguments, "opening": "bare_json"}]
    assert (runs[0].engine, runs[0].dtype, runs[0].tool_calls) == ("browser", "q8", "free")
    assert runs[0].prompt_tokens == 123 and runs[0].output_tokens == 3 and runs[0].stop_reason == "eos"
    failed = runs[2]
    assert failed.case_id == irrelevant[1].id and failed.stop_reason == "error"
    assert failed.reason == "generation failed: the model worker stopped" and failed.output == ""
