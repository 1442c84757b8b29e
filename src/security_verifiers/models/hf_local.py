"""A transformers causal LM run in this process (``--model hf:PATH``): a trained checkpoint measured by the same
runner, scorer, metrics and report as an API model.

* The model loads from a local directory without any network access (``local_files_only``); a hub name is
  tried only when no such directory exists, and fails with a clear error where no hub is reachable.
* The runner plays many episodes at once; each asks for one reply. Requests wait a moment in a queue and are
  generated together (left-padded, one ``generate`` call per batch of up to ``batch_size``) in a worker thread,
  so the event loop keeps running while the CPU or GPU works.
* Prompts go through the tokenizer's own chat template (a checkpoint written by ``sv train`` carries the one
  it was trained with). Sampling follows :class:`Sampling`: temperature 0 is greedy decoding.
* Tools: where the environment offers them, the chat template lists them and the model writes its calls as text
  (``<tool_call>`` JSON, :mod:`security_verifiers.models.tool_text`), which are read back into structured calls, so
  tool-using environments (E2/E3 tools modes, the red-team episodes) run as they do with an API model.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError
from security_verifiers.core.types import Completion, Item, Message, ToolCall, Usage
from security_verifiers.models.base import DEFAULT_MAX_REPLY_BYTES, Sampling
from security_verifiers.models.tool_text import parse_reply, render

#: One conversation to answer: its messages and the tools offered (None: none).
Conversation = tuple[list[Message], list[dict[str, Any]] | None]


def weights_digest(path: Path) -> str:
    """sha256 over the checkpoint's weight and tokenizer files (names and bytes): the identity of a local
    model in run metadata, so two runs of "the same path" with different weights are never confused."""
    digest = hashlib.sha256()
    patterns = ("*.safetensors", "*.bin", "tokenizer.json", "tokenizer_config.json", "config.json")
    files = sorted({f for pattern in patterns for f in path.glob(pattern) if f.is_file()})
    if not files:
        raise ConfigError(f"{path}: no model weights (*.safetensors or *.bin) found")
    for file in files:
        digest.update(file.name.encode() + b"\0")
        with file.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


class HFLocalPolicy:
    """A local causal LM answering chat messages; see the module docstring."""

    def __init__(self, source: str, *, sampling: Sampling | None = None, batch_size: int = 8,
                 device: str | None = None) -> None:
        if batch_size < 1:
            raise ConfigError("batch size must be at least 1")
        self.source = source
        self.name = f"hf:{source}"
        self.sampling = sampling or Sampling()
        self.batch_size = batch_size
        #: replies past this are recorded as unparseable (the episode's cap; ``sv eval --max-reply-bytes``)
        self.max_reply_bytes = DEFAULT_MAX_REPLY_BYTES
        self._model, self._tokenizer, self.device, self.identity = _load(source, device)
        self._queue: list[tuple[Conversation, asyncio.Future[Completion]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self._generate_lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        return {"kind": "hf", "source": self.source, "identity": self.identity, "device": self.device,
                "batch_size": self.batch_size, "sampling": self.sampling.model_dump(mode="json")}

    async def respond(self, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                      sample: int) -> Completion:
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._queue.append(((messages, tools or None), future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._queue:
            await asyncio.sleep(0.005)  # let the episodes started in the same tick join the batch
            batch, self._queue = self._queue[:self.batch_size], self._queue[self.batch_size:]
            batch = [(c, f) for c, f in batch if not f.cancelled()]  # an episode that timed out
            if not batch:
                continue
            try:
                completions = await asyncio.to_thread(self.generate, [c for c, _ in batch])
            except Exception as err:  # noqa: BLE001 - the model failed, not the answer: an infrastructure error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(InfraError(ErrorKind.PROVIDER, f"local generation failed: "
                                                        f"{type(err).__name__}: {err}"))
                continue
            for (_, future), completion in zip(batch, completions, strict=True):
                if not future.done():
                    future.set_result(completion)

    def generate(self, conversations: list[Conversation] | list[list[Message]]) -> list[Completion]:
        """Replies to several conversations (messages, or messages and the tools offered) in one batched
        ``generate`` call."""
        import torch

        tokenizer = self._tokenizer
        pairs = [c if isinstance(c, tuple) else (c, None) for c in conversations]
        texts = [render(tokenizer, messages, tools, add_generation_prompt=True) for messages, tools in pairs]
        inputs = tokenizer(texts, return_tensors="pt", padding=True, padding_side="left",
                           add_special_tokens=False).to(self.device)
        sampling = self.sampling
        options: dict[str, Any] = {"max_new_tokens": sampling.max_tokens, "pad_token_id": tokenizer.pad_token_id}
        if sampling.temperature:
            options |= {"do_sample": True, "temperature": sampling.temperature, "top_p": sampling.top_p or 1.0}
        else:
            options |= {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        with self._generate_lock, torch.inference_mode():
            if sampling.seed is not None:
                torch.manual_seed(sampling.seed)
            output = self._model.generate(**inputs, **options)
        prompt_len = inputs["input_ids"].shape[1]
        completions = []
        for row, mask, (messages, tools) in zip(output, inputs["attention_mask"], pairs, strict=True):
            new = row[prompt_len:]
            ended = bool((new == tokenizer.eos_token_id).any()) if tokenizer.eos_token_id is not None else False
            text = tokenizer.decode(new, skip_special_tokens=True)
            n_new = int((new != tokenizer.pad_token_id).sum()) if tokenizer.pad_token_id is not None else len(new)
            calls: list[ToolCall] = []
            if tools:
                turn = sum(m.role == "assistant" for m in messages)
                text, calls = parse_reply(text, f"call{turn}")
            completions.append(Completion(text=text, tool_calls=calls, finish_reason="stop" if ended else "length",
                                          usage=Usage(prompt_tokens=int(mask.sum()), completion_tokens=n_new)))
        return completions


def _load(source: str, device: str | None) -> tuple[Any, Any, str, dict[str, str]]:
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as err:
        raise ConfigError("hf: models need the training extra: pip install -e '.[train]' "
                          "(see DEVELOPERS.md for the CPU torch wheel)") from err
    path = Path(source).expanduser()
    local = path.is_dir()
    if not local and (source.startswith((".", "/", "~")) or path.suffix):
        raise ConfigError(f"hf:{source}: no such model directory")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path) if local else source, local_files_only=local)
        model = AutoModelForCausalLM.from_pretrained(str(path) if local else source, local_files_only=local)
    except (OSError, ValueError) as err:
        where = "the directory" if local else "the hub (none may be reachable from here)"
        raise ConfigError(f"hf:{source}: cannot load a causal LM from {where}: {err}") from err
    if tokenizer.chat_template is None:
        raise ConfigError(f"hf:{source}: the tokenizer has no chat template")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device).eval()
    identity = {"weights_sha256": weights_digest(path)} if local else {"hub_name": source}
    return model, tokenizer, device, identity
