"""A small causal LM built from a config, with a tokenizer trained here on the environment's own text.

No hub is reachable from a CI machine, and a download would make the smoke runs depend on someone else's
files, so the ``tiny-cpu`` preset starts from nothing: a byte-level BPE tokenizer trained on the prompts and
answers of the training split, a ChatML chat template (what TRL and ``hf:`` read), and a Qwen3-architecture
model of a few hundred thousand parameters, randomly initialised from a seed. It is the same architecture
that ``lora-gpu`` fine-tunes, so the LoRA code path can be smoke-tested on CPU with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerFast

#: ChatML, as Qwen models use; ``{% generation %}`` marks what an assistant-only loss trains on. Tools, when offered,
#: are listed in the system turn and called the way Qwen's template renders calls (``<tool_call>`` JSON, see
#: :mod:`security_verifiers.models.tool_text`); a tool's result comes back as a ``<tool_response>`` user turn.
CHAT_TEMPLATE = (
    "{% set first = 0 %}"
    "{% if tools %}<|im_start|>system\n"
    "{% if messages and messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}\n\n{% set first = 1 %}"
    "{% endif %}"
    "# Tools\n\nCall a function by writing, for each call, a JSON object with its name and arguments between "
    "<tool_call></tool_call> tags.\n<tools>\n{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}</tools>"
    "<|im_end|>\n{% endif %}"
    "{% for message in messages[first:] %}"
    "{% if message['role'] == 'assistant' %}<|im_start|>assistant\n"
    "{% generation %}{{ message['content'] }}"
    "{% for call in message.get('tool_calls') or [] %}"
    "{% if message['content'] or not loop.first %}\n{% endif %}"
    "<tool_call>\n{\"name\": {{ call['function']['name'] | tojson }}, "
    "\"arguments\": {% if call['function']['arguments'] is string %}{{ call['function']['arguments'] }}"
    "{% else %}{{ call['function']['arguments'] | tojson }}{% endif %}}\n</tool_call>"
    "{% endfor %}<|im_end|>{% endgeneration %}\n"
    "{% elif message['role'] == 'tool' %}<|im_start|>user\n<tool_response>\n{{ message['content'] }}\n"
    "</tool_response><|im_end|>\n"
    "{% else %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>")


class TinyModelSpec(BaseModel):
    """Size of the config-built model and its tokenizer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vocab_size: int = Field(2048, ge=300, le=65_536, description="Tokenizer vocabulary (BPE merges + bytes).")
    hidden_size: int = Field(64, ge=8, le=4096)
    layers: int = Field(2, ge=1, le=64)
    heads: int = Field(4, ge=1, le=64)
    kv_heads: int = Field(2, ge=1, le=64)
    intermediate_size: int = Field(128, ge=8, le=16_384)
    max_positions: int = Field(4096, ge=64, le=131_072, description="Longest prompt + answer, in tokens.")


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on ``texts`` (any text encodes: unseen bytes fall back to bytes)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token=None, eos_token="<|im_end|>",
                                   pad_token="<|pad|>", unk_token=None)
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_model(tokenizer: PreTrainedTokenizerFast, spec: TinyModelSpec, seed: int) -> PreTrainedModel:
    """A randomly initialised Qwen3 causal LM sized by ``spec`` for ``tokenizer``; the same ``seed`` gives the
    same weights."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    if spec.hidden_size % spec.heads or spec.heads % spec.kv_heads:
        raise ValueError("hidden_size must be a multiple of heads, and heads a multiple of kv_heads")
    config = Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=spec.hidden_size, intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.layers, num_attention_heads=spec.heads, num_key_value_heads=spec.kv_heads,
        head_dim=spec.hidden_size // spec.heads, max_position_embeddings=spec.max_positions,
        tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model
