"""The PyTorch reference keeps the state after a prompt, so a conversation's next prompt (which
starts with it) computes only its new tokens, and writes what a fresh model writes for it."""

from botpsy_eval.reference import TorchModel

FIRST = "<|im_start|>user\nList the files in the current folder.<|im_end|>\n<|im_start|>assistant\n"
NEXT = FIRST + "ls<|im_end|>\n<|im_start|>user\n<tool_response>\na.txt b.txt\n</tool_response><|im_end|>\n"


def test_a_prompt_that_extends_the_last_one_reuses_its_state_and_writes_the_same(exported_model):
    folder = exported_model("tiny-qwen3.5")  # hybrid: key/value caches and recurrent states
    conversation = TorchModel(folder, threads=1)
    first = conversation.generate(FIRST, max_tokens=6)
    assert conversation.reused_prompt_tokens == 0
    following = conversation.generate(NEXT, max_tokens=6)
    assert conversation.reused_prompt_tokens == first.prompt_tokens
    fresh = TorchModel(folder, threads=1).generate(NEXT, max_tokens=6)
    assert following.token_ids == fresh.token_ids and following.text == fresh.text

    again = conversation.generate(NEXT, max_tokens=6)  # the same prompt once more: nothing new to compute
    assert again.token_ids == fresh.token_ids
    other = conversation.generate("<|im_start|>user\nHello<|im_end|>\n", max_tokens=6)  # not an extension
    assert conversation.reused_prompt_tokens == first.prompt_tokens + following.prompt_tokens
    assert other.token_ids == TorchModel(folder, threads=1).generate(
        "<|im_start|>user\nHello<|im_end|>\n", max_tokens=6).token_ids


def test_a_key_value_cache_is_cut_back_to_the_prefix_two_prompts_share(exported_model):
    folder = exported_model("smollm2-135m")  # attention only: the kept cache can be cut back
    system = "<|im_start|>system\nYou can call tools: calculator, search.<|im_end|>\n"
    first, second = (system + f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
                     for question in ("What is 2 + 2?", "Who wrote Hamlet?"))
    model = TorchModel(folder, threads=1)
    model.generate(first, max_tokens=5)
    answer = model.generate(second, max_tokens=5)
    shared = model.tokenizer.encode(system, add_special_tokens=False).ids
    assert model.reused_prompt_tokens >= len(shared) > 0
    assert answer.token_ids == TorchModel(folder, threads=1).generate(second, max_tokens=5).token_ids
