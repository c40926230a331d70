"""The PyTorch reference keeps the manifest's context window as the browser runtime does
(tests/runtime/test_context_window.py): a generation that fills it stops with "context_full",
the same tokens as far as it got; a prompt that does not fit is refused, naming its length."""

import pytest

from botpsy_eval.generation import GenerationError
from botpsy_eval.reference import TorchModel

PROMPT = "<|im_start|>user\nName three colours.<|im_end|>\n<|im_start|>assistant\n"


def test_a_generation_stops_at_the_end_of_the_window_and_a_longer_prompt_is_refused(exported_model):
    model = TorchModel(exported_model("tiny-qwen3.5"), threads=1)
    unbounded = model.generate(PROMPT, max_tokens=12)
    assert unbounded.stop_reason == "max_tokens" and len(unbounded.token_ids) == 12  # random weights: no eos
    model.context_length = unbounded.prompt_tokens + 5
    bounded = model.generate(PROMPT, max_tokens=12)
    assert bounded.stop_reason == "context_full" and bounded.token_ids == unbounded.token_ids[:5]
    model.context_length = unbounded.prompt_tokens
    with pytest.raises(GenerationError, match=rf"the prompt is {unbounded.prompt_tokens} tokens and this model "
                                              rf"reads at most {unbounded.prompt_tokens} \(manifest context_length\)"):
        model.generate(PROMPT, max_tokens=12)
