"""What an architecture class provides to the exporter; subclasses override only what differs."""

from dataclasses import dataclass
from typing import ClassVar

import torch


@dataclass(frozen=True)
class StateSpec:
    """One state tensor carried between calls (a manifest `cache` entry)."""

    input: str
    output: str
    kind: str  # key | value | conv | recurrent
    shape: tuple  # the zero-initial state; the seq_axis dim is 0
    seq_axis: int | None = None
    dtype: str = "float32"

    def manifest_entry(self) -> dict:
        return {"input": self.input, "output": self.output, "kind": self.kind,
                "dtype": self.dtype, "shape": list(self.shape), "seq_axis": self.seq_axis}

    def zeros(self) -> torch.Tensor:
        return torch.zeros(self.shape, dtype=torch.float32)


def attention_state_specs(layer, kv_heads, head_dim):
    return [
        StateSpec(f"past_key_values.{layer}.key", f"present.{layer}.key", "key", (1, kv_heads, 0, head_dim), 2),
        StateSpec(f"past_key_values.{layer}.value", f"present.{layer}.value", "value", (1, kv_heads, 0, head_dim), 2),
    ]


class Architecture:
    """Turns a loaded Hugging Face causal LM into an exportable graph module plus folder metadata.

    The graph module's forward is (input_ids, attention_mask, position_ids, *past_states)
    -> (logits [1, 1, vocab] of the last position, *present_states), states in
    `state_specs()` order; without position_ids when `takes_position_ids` is False.
    """

    name: ClassVar[str]
    model_types: ClassVar[tuple[str, ...]]
    tool_call_format: ClassVar[str | None] = None
    uses_contrib_ops: ClassVar[bool] = False  # graph holds com.microsoft ops
    chat_template_supports_tools: ClassVar[bool] = False
    takes_position_ids: ClassVar[bool] = True  # else positions come from attention_mask inside the graph

    def __init__(self, model, tokenizer):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.config = model.config

    @classmethod
    def load_pretrained(cls, folder):
        """Load fp32 weights from a local Hugging Face folder (safetensors only)."""
        import torch
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM.from_pretrained(
            folder, dtype=torch.float32, use_safetensors=True, trust_remote_code=False)

    def release_model(self):
        """Drop the torch weights once every graph is exported (config and tokenizer stay)."""
        import gc

        self.model = None
        gc.collect()

    def state_specs(self) -> list[StateSpec]:
        raise NotImplementedError

    def graph_module(self) -> torch.nn.Module:
        raise NotImplementedError

    def chat_template(self) -> str:
        """The Jinja chat template shipped in tokenizer_config.json."""
        template = getattr(self.tokenizer, "chat_template", None)
        if not template:
            raise ValueError(f"{self.name}: the tokenizer has no chat template")
        return template

    def token_id(self, token: str) -> int:
        token_id = self.tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == self.tokenizer.unk_token_id:
            raise ValueError(f"{self.name}: the tokenizer has no token {token!r}")
        return token_id

    def eos_token_ids(self) -> list[int]:
        """End-of-turn tokens; chat models stop at the end-of-message token."""
        return [self.token_id("<|im_end|>")]

    def message_boundary_token_ids(self) -> list[int]:
        return [self.token_id("<|im_start|>")]

    def attention_heads(self) -> int:
        """Query heads of the attention layers: the runtime sizes prefill chunks by it, since a
        chunk's attention scores take heads x chunk x (past + chunk) floats."""
        return self.config.num_attention_heads

    def context_length(self) -> int:
        """Positions the model was trained for: the runtime refuses longer prompts and stops a
        generation that reaches it."""
        return self.config.max_position_embeddings

    def bos_token_id(self) -> int | None:
        """Only set when the tokenizer prepends it by itself."""
        ids = self.tokenizer("a")["input_ids"]
        bos = self.tokenizer.bos_token_id
        return bos if bos is not None and ids and ids[0] == bos else None

    def smoothing_groups(self) -> list:
        """Linear layers whose shared input can be rescaled before int8 quantization
        (`smoothing.SmoothGroup`); none by default."""
        return []

    def reference_logits(self, input_ids: torch.Tensor) -> torch.Tensor:
        """PyTorch fp32 logits for every position of [1, T] input_ids, no cache: the parity baseline."""
        with torch.no_grad():
            return self.model(input_ids=input_ids, use_cache=False).logits[0].float()

    def reference_cached_logits(self, input_ids: list, first: int) -> torch.Tensor:
        """PyTorch fp32 last-position logits after input_ids[:first] in one call, then after each
        later token fed alone through Hugging Face's own cache: [len(input_ids) - first + 1, vocab]."""
        with torch.no_grad():
            output = self.model(input_ids=torch.tensor([input_ids[:first]]), use_cache=True)
            rows = [output.logits[0, -1].float()]
            for token in input_ids[first:]:
                output = self.model(input_ids=torch.tensor([[token]]), cache=output.cache, use_cache=True)
                rows.append(output.logits[0, -1].float())
        return torch.stack(rows)

    def reference_greedy_logits(self, prompt_ids: list, steps: int):
        """Yield PyTorch fp32 last-position logits for the prompt, then after each greedy token
        (Hugging Face's own cache), `steps` rows in all."""
        with torch.no_grad():
            output = self.model(input_ids=torch.tensor([prompt_ids]), use_cache=True)
            for step in range(steps):
                logits = output.logits[0, -1].float()
                yield logits
                if step + 1 < steps:
                    output = self.model(input_ids=logits.argmax().reshape(1, 1), cache=output.cache,
                                        use_cache=True)
