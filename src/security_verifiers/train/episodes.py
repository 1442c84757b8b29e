"""Multi-turn episodes for ``sv train``: tool-using environments (E2/E3 tools modes) and the red-team episodes
(E5, E6) trained over whole episodes, with the same episode loop and scorer as ``sv eval``.

GRPO. TRL's ``rollout_func`` hands over the prompts of a generation batch and takes back, per rollout, the
prompt's tokens, the tokens after it, and which of those the policy wrote (``env_mask``). The rollout here plays
each episode with the harness's own :func:`~security_verifiers.harness.episode.play_episode` — the environment's
prompt, its tools and budgets, the error boundaries, the reply caps — through a policy (:class:`TrainerPolicy`)
that generates with the model being trained and keeps the episode's token sequence:

* the prompt, rendered by the model's chat template with the tools offered;
* each reply as the model sampled it (mask 1: the loss trains on exactly the tokens the policy chose);
* between replies, what the chat template adds for the tool results and the next turn (mask 0: tool results and
  other tokens the policy did not write are out of the loss).

The reward functions receive each episode's transcript (messages, tool calls and results, what the tools recorded
out of sight) in the ``episode`` column and score it with the environment's scorer
(:meth:`~security_verifiers.adapters.trl.EnvReward.episode_verdicts`). An episode an infrastructure error ended (a
tool's crash, not the model's doing) has no transcript: its reward is masked, never a 0.

SFT. A teacher's episodes (any harness policy: a baseline with tools) become one prompt-completion row per
assistant turn, the conversation so far as the prompt and the turn as the completion, both rendered by the same
chat template, so the loss covers the teacher's replies and nothing the tools said.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from security_verifiers.adapters.trl import EnvReward
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.types import Completion, Item, Message, Transcript, Usage
from security_verifiers.envs.base import Environment
from security_verifiers.harness.episode import play_episode
from security_verifiers.models.tool_text import parse_reply, render

if TYPE_CHECKING:
    import datasets


def is_multi_turn(env: Environment) -> bool:
    return env.max_turns > 1


@dataclass
class _Sequence:
    """One episode's tokens: the prompt, then everything after it with 1 where the policy wrote the token."""

    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    #: The chat template's rendering of the conversation through the last reply (the next turn's text starts with it).
    rendered: str = ""

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)


class TrainerPolicy:
    """The model being trained as a harness policy: replies are generated in batches across the episodes of a
    rollout, and each episode's token sequence (:class:`_Sequence`) is kept for the trainer."""

    name = "sv-train-policy"
    max_reply_bytes = 1 << 30  # the token budget bounds a reply

    def __init__(self, model: Any, tokenizer: Any, generation_config: Any, *, max_turn_tokens: int,
                 max_episode_tokens: int, batch_size: int) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.generation_config = generation_config
        self.max_turn_tokens = max_turn_tokens
        self.max_episode_tokens = max_episode_tokens
        self.batch_size = batch_size
        self.sequences: dict[int, _Sequence] = {}
        self._queue: list[tuple[int, list[int], asyncio.Future[list[int]]]] = []
        self._drainer: asyncio.Task[None] | None = None

    async def respond(self, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                      sample: int) -> Completion:
        sequence = self.sequences.setdefault(sample, _Sequence())
        text = render(self.tokenizer, messages, tools, add_generation_prompt=True)
        if not sequence.prompt_ids:
            sequence.prompt_ids = self._encode(text)
        else:
            if not text.startswith(sequence.rendered):
                raise ConfigError("the chat template renders an earlier turn differently once the conversation goes "
                                  "on; multi-turn training needs a template that only appends")
            added = self._encode(text[len(sequence.rendered):])
            sequence.completion_ids += added
            sequence.mask += [0] * len(added)
        budget = min(self.max_turn_tokens, self.max_episode_tokens - sequence.length)
        reply_ids = await self._generate(sample, sequence.prompt_ids + sequence.completion_ids, budget) \
            if budget > 0 else []
        sequence.completion_ids += reply_ids
        sequence.mask += [1] * len(reply_ids)
        ended = bool(reply_ids) and reply_ids[-1] == self.tokenizer.eos_token_id
        text = self.tokenizer.decode(reply_ids, skip_special_tokens=True)
        turn = sum(m.role == "assistant" for m in messages)
        # A reply cut by the budget is an answer as it stands: a call in it is not run.
        content, calls = parse_reply(text, f"call{turn}") if tools and ended else (text, [])
        sequence.rendered = render(self.tokenizer, [*messages, Message(role="assistant", content=content,
                                                                       tool_calls=calls)],
                                   tools, add_generation_prompt=False)
        return Completion(text=content, tool_calls=calls, finish_reason="stop" if ended else "length",
                          usage=Usage(prompt_tokens=sequence.length - len(reply_ids),
                                      completion_tokens=len(reply_ids)))

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    async def _generate(self, sample: int, ids: list[int], budget: int) -> list[int]:
        future: asyncio.Future[list[int]] = asyncio.get_running_loop().create_future()
        self._queue.append((budget, ids, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._queue:
            await asyncio.sleep(0)  # let every episode that is ready join the batch
            await asyncio.sleep(0.001)
            batch, self._queue = self._queue[:self.batch_size], self._queue[self.batch_size:]
            try:
                replies = await asyncio.to_thread(self._generate_batch, [(ids, b) for b, ids, _ in batch])
            except Exception as err:  # noqa: BLE001 - delivered to the episodes, which record it as the provider's
                for _, _, future in batch:
                    future.set_exception(err)
                continue
            for (_, _, future), reply in zip(batch, replies, strict=True):
                future.set_result(reply)

    def _generate_batch(self, requests: list[tuple[list[int], int]]) -> list[list[int]]:
        """Sampled continuations of several sequences (left-padded, one ``generate`` call), each cut after its first
        end-of-turn token and to its own budget."""
        import copy

        import torch

        pad = self.tokenizer.pad_token_id
        eos = self.tokenizer.eos_token_id
        width = max(len(ids) for ids, _ in requests)
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids, _ in requests])
        attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids, _ in requests])
        config = copy.deepcopy(self.generation_config)
        config.max_new_tokens = max(budget for _, budget in requests)
        device = next(self.model.parameters()).device
        with torch.no_grad():
            output = self.model.generate(input_ids=input_ids.to(device), attention_mask=attention.to(device),
                                         generation_config=config)
        replies = []
        for row, (_, budget) in zip(output[:, width:].tolist(), requests, strict=True):
            row = row[:budget]
            if eos in row:
                row = row[:row.index(eos) + 1]
            replies.append([t for t in row if t != pad])
        return replies


class EpisodeRollout:
    """TRL's ``rollout_func`` for a multi-turn environment (see the module docstring)."""

    def __init__(self, env: Environment, items: Sequence[Item], tokenizer: Any, reward: EnvReward, *,
                 max_turn_tokens: int, max_episode_tokens: int, timeout_s: float = 600.0) -> None:
        self.env = env
        self.items = {item.id: item for item in items}
        self.tokenizer = tokenizer
        self.max_turn_tokens = max_turn_tokens
        self.max_episode_tokens = max_episode_tokens
        self.timeout_s = timeout_s
        #: Tool calls made since the start.
        self.tool_calls = 0
        #: Where an episode an infrastructure error ended is counted (:meth:`EnvReward.failed`): its reward masked.
        self.reward = reward

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        item_ids = [row["item_id"] for row in trainer.sv_inputs]
        if len(item_ids) != len(prompts):
            raise RuntimeError(f"{len(prompts)} prompts but {len(item_ids)} inputs reached the rollout")
        with self._generation_model(trainer) as model:
            policy = TrainerPolicy(model, self.tokenizer, trainer.generation_config,
                                   max_turn_tokens=self.max_turn_tokens, max_episode_tokens=self.max_episode_tokens,
                                   batch_size=len(item_ids))
            transcripts = asyncio.run(self.play(policy, item_ids))
        return self.batch(policy, transcripts)

    @staticmethod
    def _generation_model(trainer: Any) -> Any:
        """The model to generate with, as TRL's own generation unwraps it (distributed wrappers off, gradient
        checkpointing off so the key-value cache works, the run's generation settings on)."""
        if not hasattr(trainer, "model_wrapped"):  # a stand-in trainer (tests): its model as it is
            return contextlib.nullcontext(trainer.model)
        from trl.models import unwrap_model_for_generation

        return unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator,
                                           gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
                                           generation_kwargs=trainer.generation_kwargs,
                                           gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs)

    async def play(self, policy: TrainerPolicy, item_ids: list[str]) -> list[Transcript | None]:
        """Every episode of the batch at once (their replies generated together, turn by turn)."""
        results = await asyncio.gather(*(play_episode(self.env, policy, self.items[item_id], sample, self.timeout_s)
                                         for sample, item_id in enumerate(item_ids)))
        out = []
        for record, transcript in results:
            if transcript is None:
                error = record.error
                self.reward.failed(f"{error.kind}: {error.message}" if error is not None else "no transcript")
            else:
                self.tool_calls += transcript.tool_calls
            out.append(transcript)
        return out

    def batch(self, policy: TrainerPolicy, transcripts: list[Transcript | None]) -> dict[str, Any]:
        """The rollout's output in the form TRL takes. An episode in which the policy wrote nothing (its prompt
        alone fills ``max_episode_tokens``, or it failed before the first reply) had no chance to answer: one masked
        end token, and no transcript, so its reward is masked too."""
        eos = self.tokenizer.eos_token_id
        out: dict[str, Any] = {"prompt_ids": [], "completion_ids": [], "env_mask": [], "logprobs": None,
                               "episode": []}
        for sample, transcript in enumerate(transcripts):
            sequence = policy.sequences.get(sample)
            if sequence is None or not sequence.completion_ids:
                sequence = _Sequence(prompt_ids=sequence.prompt_ids if sequence and sequence.prompt_ids else [eos],
                                     completion_ids=[eos], mask=[0])
                transcript = None
            out["prompt_ids"].append(sequence.prompt_ids)
            out["completion_ids"].append(sequence.completion_ids)
            out["env_mask"].append(sequence.mask)
            out["episode"].append(transcript.model_dump_json() if transcript is not None else None)
        return out


def turn_rows(tokenizer: Any, env: Environment, episodes: Sequence[tuple[Item, list[Message]]]
              ) -> list[dict[str, str]]:
    """One prompt-completion row per assistant turn of each episode (text rendered by ``tokenizer``'s chat template,
    the episode's tools offered), for supervised fine-tuning on a teacher's episodes."""
    rows = []
    eos = tokenizer.eos_token
    for item, messages in episodes:
        toolbox = env.tools(item)
        tools = toolbox.schemas() if toolbox is not None else None
        for k, message in enumerate(messages):
            if message.role != "assistant":
                continue
            prompt = render(tokenizer, messages[:k], tools, add_generation_prompt=True)
            whole = render(tokenizer, messages[:k + 1], tools, add_generation_prompt=False)
            if not whole.startswith(prompt):
                raise ConfigError("the chat template renders a conversation's start differently once a reply "
                                  "follows; multi-turn training needs a template that only appends")
            completion = whole[len(prompt):].rstrip()
            if eos and eos in completion:
                completion = completion[:completion.rindex(eos) + len(eos)]
            rows.append({"prompt": prompt, "completion": completion, "item_id": item.id})
    return rows


def turn_dataset(tokenizer: Any, env: Environment, episodes: Sequence[tuple[Item, list[Message]]]
                 ) -> datasets.Dataset:
    import datasets

    return datasets.Dataset.from_list(turn_rows(tokenizer, env, episodes))


def episode_prompts(env: Environment, items: Sequence[Item]) -> datasets.Dataset:
    """The GRPO dataset of a multi-turn environment: each item's opening messages (TRL requires a prompt; the
    rollout renders them itself, tools included) and its id."""
    import datasets

    return datasets.Dataset.from_list([{"prompt": [{"role": m.role, "content": m.content} for m in env.prompt(item)],
                                        "item_id": item.id} for item in items])
