"""An environment as TRL sees it: a split as a chat dataset, the one scorer as reward functions.

Training must optimise exactly what the benchmark measures, so nothing here computes a reward: every value
comes from the environment's own ``score_many``, the code that also fills ``results.jsonl`` and the report.
TRL calls each reward function separately on the same completions, so :class:`EnvReward` scores each
(item, completion) once and serves every function from that verdict.

* One function per reward component (named after it, e.g. ``decision`` and ``calibration`` for
  network-logs) and one for the ``total``. Which of them move the policy is the trainer's choice through
  ``reward_weights`` (see :func:`reward_weights`): GRPO weighs the total alone, GDPO-style training the
  components, so both variants read the same verdicts.
* A scorer infrastructure error (an engine that crashed on the original, a dead worker) is not the model's
  doing, so it must not be a reward of 0: every function returns ``None`` for that completion, which TRL
  turns into NaN, keeps out of the group baseline and gives an advantage of 0 (no gradient from it). The
  adapter counts them (:attr:`RewardStats.scorer_errors`) so a run can report and bound them.
* Single turn: the completion is the model's final answer, scored after the item's prompt. Multi-turn episodes
  (tools modes, the red-team environments) are played by ``sv train``'s rollout function
  (:mod:`security_verifiers.train.episodes`), which hands each episode's whole transcript to the reward functions
  in the ``episode`` column; a single-turn form (:func:`prompt_dataset`, :func:`sft_dataset`, a reward call
  without episodes) of a multi-turn environment is refused (:func:`check_single_turn`) rather than scoring a tool
  call as an answer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError
from security_verifiers.core.types import Item, Message, ParseStatus, Score, Transcript
from security_verifiers.envs.base import Environment
from security_verifiers.harness.episode import score_batch

if TYPE_CHECKING:
    import datasets

    from security_verifiers.harness.scoring_pool import BatchScorer

#: Name of the reward function that returns the environment's reward itself.
TOTAL = "total"
#: Verdicts kept per adapter: enough for a few GRPO steps' groups, bounded for long runs.
_CACHE_SIZE = 65_536

Variant = Literal["grpo", "gdpo", "weighted"]


def check_single_turn(env: Environment) -> None:
    """Raise :class:`ConfigError` when ``env`` is configured for multi-turn episodes (tools)."""
    if env.max_turns > 1:
        raise ConfigError(
            f"{env.name} plays multi-turn episodes ({env.max_turns} turns): its answers are whole episodes (the "
            "`episode` column of sv train's rollout), not single completions"
        )


def chat_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Messages in the plain ``{"role", "content"}`` form that chat templates and TRL read."""
    return [{"role": m.role, "content": m.content} for m in messages]


def prompt_dataset(env: Environment, items: Sequence[Item]) -> datasets.Dataset:
    """Conversational prompts with the id of their item (the reward functions look the item up by it)."""
    import datasets

    check_single_turn(env)
    rows = [{"prompt": chat_messages(env.prompt(item)), "item_id": item.id} for item in items]
    return datasets.Dataset.from_list(rows)


def sft_dataset(env: Environment, items: Sequence[Item], answers: Sequence[str]) -> datasets.Dataset:
    """Prompt-completion pairs for supervised fine-tuning: ``answers[i]`` is the target reply to ``items[i]``."""
    import datasets

    check_single_turn(env)
    if len(items) != len(answers):
        raise ValueError(f"{len(items)} items but {len(answers)} answers")
    rows = [{"prompt": chat_messages(env.prompt(item)), "completion": [{"role": "assistant", "content": answer}],
             "item_id": item.id} for item, answer in zip(items, answers, strict=True)]
    return datasets.Dataset.from_list(rows)


def completion_text(completion: Any) -> str:
    """The answer text of one TRL completion: a string, or a list of messages (the last assistant one)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role") == "assistant":
                return str(message.get("content") or "")
        return ""
    raise TypeError(f"unexpected completion type {type(completion).__name__}")


@dataclass
class RewardStats:
    """Counts over every completion the adapter scored (each counted once)."""

    scored: int = 0
    scorer_errors: int = 0
    parse_failures: int = 0
    #: Multi-turn episodes an infrastructure error ended before their answer (a tool's crash): not scored, their
    #: rewards masked; counted by the rollout that played them.
    failed_episodes: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"scored": self.scored, "scorer_errors": self.scorer_errors, "parse_failures": self.parse_failures,
                "failed_episodes": self.failed_episodes}


class EnvReward:
    """The environment's scorer behind TRL's reward-function interface."""

    def __init__(self, env: Environment, items: Sequence[Item], pool: BatchScorer | None = None) -> None:
        self.env = env
        #: Score in these killable workers, under the environment's time and memory limits (as ``sv eval`` does);
        #: None scores in this process, where only the parsers' own caps apply.
        self.pool = pool
        self.components = tuple(env.component_weights())
        self._items = {item.id: item for item in items}
        self._verdicts: OrderedDict[tuple[str, str], Score | InfraError] = OrderedDict()
        self._lock = threading.Lock()
        self.stats = RewardStats()
        #: Messages of the scorer errors seen (a few), for the run's log.
        self.error_examples: list[str] = []

    def verdicts(self, item_ids: Sequence[str], texts: Sequence[str]) -> list[Score | InfraError]:
        """The scorer's verdict on each (item, answer text) of a single-turn episode."""
        check_single_turn(self.env)
        return self._verdicts_of(list(zip(item_ids, texts, strict=True)), lambda item, text: Transcript(
            messages=[*self.env.prompt(item), Message(role="assistant", content=text)]))

    def episode_verdicts(self, item_ids: Sequence[str], episodes: Sequence[str | None]) -> list[Score | InfraError]:
        """The scorer's verdict on each (item, whole episode): a multi-turn rollout's transcript (its messages,
        tool calls and results, and what the tools recorded), as JSON (:mod:`security_verifiers.train.episodes`).
        ``None``: an infrastructure error ended the episode (a tool crashed), which is nobody's answer."""
        played = [(i, e) for i, e in zip(item_ids, episodes, strict=True) if e is not None]
        verdicts = iter(self._verdicts_of(played, lambda _item, episode: Transcript.model_validate_json(episode)))
        # A failed episode is counted (and its error kept) by the rollout that played it, once (:meth:`failed`):
        # every reward function sees it.
        failure = InfraError(ErrorKind.TOOL, "an infrastructure error ended the episode before its answer")
        return [failure if episode is None else next(verdicts) for episode in episodes]

    def _verdicts_of(self, keys: list[tuple[str, str]],
                     transcript: Callable[[Item, str], Transcript]) -> list[Score | InfraError]:
        """Verdicts for (item id, answer) keys, each scored once, in one batch, where not seen before."""
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._verdicts))
        if missing:
            unknown = [i for i, _ in missing if i not in self._items]
            if unknown:
                raise KeyError(f"item {unknown[0]!r} is not in the dataset this reward was built for")
            items = [self._items[i] for i, _ in missing]
            transcripts = [transcript(item, answer) for item, (_, answer) in zip(items, missing, strict=True)]
            scores = self.pool.score_blocking(items, transcripts) if self.pool is not None \
                else score_batch(self.env, items, transcripts)
            with self._lock:
                for key, score in zip(missing, scores, strict=True):
                    self._count(score)
                    self._verdicts[key] = score
                while len(self._verdicts) > _CACHE_SIZE:
                    self._verdicts.popitem(last=False)
        with self._lock:
            return [self._verdicts[k] for k in keys]

    def failed(self, message: str) -> None:
        """Count one episode an infrastructure error ended before its answer (``message``: what happened)."""
        with self._lock:
            self.stats.failed_episodes += 1
            if len(self.error_examples) < 5:
                self.error_examples.append(message)

    def _count(self, score: Score | InfraError) -> None:
        self.stats.scored += 1
        if isinstance(score, InfraError):
            self.stats.scorer_errors += 1
            if len(self.error_examples) < 5:
                self.error_examples.append(f"{score.kind.value}: {score.message}")
        elif score.parse_status != ParseStatus.OK:
            self.stats.parse_failures += 1

    def function(self, name: str) -> Callable[..., list[float | None]]:
        """The TRL reward function for component ``name`` (or :data:`TOTAL`)."""
        if name != TOTAL and name not in self.components:
            raise ValueError(f"{self.env.name} has no reward component {name!r}; it has {', '.join(self.components)}")

        def reward(prompts: list[Any], completions: list[Any], item_id: list[str], episode: list[str] | None = None,
                   **_: Any) -> list[float | None]:
            verdicts = self.episode_verdicts(item_id, episode) if episode is not None \
                else self.verdicts(item_id, [completion_text(c) for c in completions])
            out: list[float | None] = []
            for verdict in verdicts:
                if isinstance(verdict, InfraError):
                    out.append(None)  # masked out of the loss, never a 0
                else:
                    out.append(verdict.reward if name == TOTAL else verdict.components[name])
            return out

        reward.__name__ = name
        reward.__qualname__ = f"EnvReward.{name}"
        return reward

    def functions(self) -> list[Callable[..., list[float | None]]]:
        """One reward function per component, then the total (the order of :func:`reward_weights`)."""
        return [self.function(name) for name in (*self.components, TOTAL)]


def reward_weights(env: Environment, variant: Variant, weights: dict[str, float] | None = None) -> list[float]:
    """TRL ``reward_weights`` for the functions of :meth:`EnvReward.functions` under ``variant``.

    ``grpo``: the environment's total reward alone (components logged, weight 0), group-normalised.
    ``gdpo``: each component with the environment's own weight (the total logged, weight 0), to be used with
    ``multi_objective_aggregation="normalize_then_sum"`` so each is normalised within its group first.
    ``weighted``: the components with ``weights`` (every component named), total 0.
    """
    own = env.component_weights()
    if variant == "grpo":
        return [0.0] * len(own) + [1.0]
    if variant == "gdpo":
        return [*own.values(), 0.0]
    if weights is None or set(weights) != set(own):
        raise ConfigError(f"the weighted variant needs a weight for each of {', '.join(own)}; got "
                          f"{', '.join(sorted(weights or {})) or 'none'}")
    return [weights[name] for name in own] + [0.0]


#: TRL's ``multi_objective_aggregation`` for each variant.
AGGREGATION: dict[str, str] = {"grpo": "sum_then_normalize", "gdpo": "normalize_then_sum",
                               "weighted": "sum_then_normalize"}
