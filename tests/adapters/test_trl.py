"""The TRL adapter returns the environment's own scores, masks scorer errors and scores each answer once."""

from __future__ import annotations

from typing import Any

import pytest

from security_verifiers.adapters.trl import (
    AGGREGATION,
    TOTAL,
    EnvReward,
    completion_text,
    prompt_dataset,
    reward_weights,
    sft_dataset,
)
from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError
from security_verifiers.core.types import Message, Transcript
from security_verifiers.envs.base import get_env
from security_verifiers.harness.episode import score_batch

ANSWERS = ['{"label": "Malicious", "p_malicious": 0.9}', '{"label": "Benign", "p_malicious": 0.2}',
           '{"label": "Abstain", "p_malicious": 0.5}', "not json", ""]


def _completions(texts: list[str]) -> list[list[dict[str, str]]]:
    return [[{"role": "assistant", "content": t}] for t in texts]


def test_every_function_returns_exactly_the_environments_score() -> None:
    env = get_env("network-logs")
    items = list(env.dataset("test").items)[:6]
    reward = EnvReward(env, items)
    ids = [i.id for i in items for _ in ANSWERS]
    texts = [a for _ in items for a in ANSWERS]
    by_name = {f.__name__: f(prompts=[None] * len(ids), completions=_completions(texts), item_id=ids)
               for f in reward.functions()}
    assert list(by_name) == ["decision", "calibration", TOTAL]
    expected = score_batch(env, [i for i in items for _ in ANSWERS],
                           [Transcript(messages=[Message(role="assistant", content=t)]) for t in texts])
    for n, score in enumerate(expected):
        assert not isinstance(score, InfraError)
        assert by_name[TOTAL][n] == score.reward
        assert by_name["decision"][n] == score.components["decision"]
        assert by_name["calibration"][n] == score.components["calibration"]
    assert reward.stats.as_dict() == {"scored": 30, "scorer_errors": 0, "parse_failures": 12, "failed_episodes": 0}


def test_config_audit_rewards_equal_its_scorer_on_reference_answers() -> None:
    env = get_env("config-audit")
    items = list(env.dataset("test").items)[:3]
    reference = env.baselines()["reference"]()
    texts = [reference.answer(i, env.prompt(i)) for i in items]
    reward = EnvReward(env, items)
    total = reward.function(TOTAL)(prompts=[None] * 3, completions=texts, item_id=[i.id for i in items])
    assert total == [env.score(i, Transcript(messages=[Message(role="assistant", content=t)])).reward
                     for i, t in zip(items, texts, strict=True)]
    assert total == [1.0, 1.0, 1.0]


def test_scorer_errors_are_masked_not_zeroed_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    env = get_env("network-logs")
    items = list(env.dataset("test").items)[:3]
    real_score = env.score

    def flaky(item: Any, transcript: Transcript) -> Any:
        if item.id == items[1].id:
            raise InfraError(ErrorKind.SCORER, "checker crashed")
        return real_score(item, transcript)

    monkeypatch.setattr(env, "score", flaky)
    reward = EnvReward(env, items)
    ids = [i.id for i in items]
    for function in reward.functions():
        values = function(prompts=[None] * 3, completions=_completions([ANSWERS[0]] * 3), item_id=ids)
        assert values[1] is None and values[0] is not None and values[2] is not None
    assert reward.stats.scorer_errors == 1 and reward.stats.scored == 3
    assert reward.error_examples == ["scorer: checker crashed"]


def test_each_answer_is_scored_once_across_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    env = get_env("network-logs")
    items = list(env.dataset("test").items)[:4]
    calls: list[int] = []
    real = env.score_many

    def counting(batch_items: Any, transcripts: Any) -> Any:
        calls.append(len(batch_items))
        return real(batch_items, transcripts)

    monkeypatch.setattr(env, "score_many", counting)
    reward = EnvReward(env, items)
    ids = [i.id for i in items] * 2  # a group of two generations per prompt, the same text twice
    for function in reward.functions():
        function(prompts=[None] * 8, completions=_completions([ANSWERS[1]] * 8), item_id=ids)
    assert calls == [4]


def test_an_unknown_item_or_component_is_an_error() -> None:
    env = get_env("network-logs")
    reward = EnvReward(env, list(env.dataset("test").items)[:1])
    with pytest.raises(KeyError, match="not in the dataset"):
        reward.function(TOTAL)(prompts=[None], completions=["x"], item_id=["nl-nope"])
    with pytest.raises(ValueError, match="no reward component 'patch'"):
        reward.function("patch")


def test_variants_weigh_the_same_functions_differently() -> None:
    env = get_env("network-logs")
    assert reward_weights(env, "grpo") == [0.0, 0.0, 1.0]
    assert reward_weights(env, "gdpo") == [0.7, 0.3, 0.0]
    assert reward_weights(env, "weighted", {"decision": 0.5, "calibration": 0.5}) == [0.5, 0.5, 0.0]
    with pytest.raises(ConfigError, match="needs a weight for each of decision, calibration"):
        reward_weights(env, "weighted", {"decision": 1.0})
    assert AGGREGATION["gdpo"] == "normalize_then_sum" and AGGREGATION["grpo"] == "sum_then_normalize"


def test_datasets_carry_prompts_and_item_ids() -> None:
    env = get_env("network-logs", {"window": 3})
    items = list(env.dataset("test").items)[:2]
    prompts = prompt_dataset(env, items)
    assert prompts.column_names == ["prompt", "item_id"] and prompts[0]["item_id"] == items[0].id
    assert [m["role"] for m in prompts[0]["prompt"]] == ["system", "user"]
    sft = sft_dataset(env, items, ["a", "b"])
    assert sft[1]["completion"] == [{"role": "assistant", "content": "b"}]
    with pytest.raises(ValueError, match="2 items but 1 answers"):
        sft_dataset(env, items, ["a"])


def test_a_tool_mode_has_no_single_turn_form() -> None:
    """A multi-turn environment's answers are whole episodes (train/episodes.py): its single-turn datasets and a
    reward call without episodes are refused rather than scoring a tool call as the answer."""
    env = get_env("config-audit", {"mode": "tools"})
    items = list(env.dataset("test").items)[:1]
    for refused in (lambda: prompt_dataset(env, items), lambda: sft_dataset(env, items, ["a"]),
                    lambda: EnvReward(env, items).function(TOTAL)([None], ["a"], [items[0].id])):
        with pytest.raises(ConfigError, match="multi-turn"):
            refused()


def test_completion_text_reads_strings_and_messages() -> None:
    assert completion_text("x") == "x"
    assert completion_text([{"role": "assistant", "content": "y"}]) == "y"
    assert completion_text([]) == ""
    with pytest.raises(TypeError):
        completion_text(3)


def test_rewards_scored_in_killable_workers_equal_in_process_rewards() -> None:
    from security_verifiers.harness.scoring_pool import ScorerPool

    env = get_env("config-audit")
    items = list(env.dataset("test").items)[:4]
    reference = env.baselines()["reference"]()
    texts = [reference.answer(i, env.prompt(i)) for i in items[:2]] + ["not json", ""]
    ids = [i.id for i in items]
    pool = ScorerPool(env, 1)
    try:
        pooled = EnvReward(env, items, pool).functions()
        local = EnvReward(env, items).functions()
        for a, b in zip(pooled, local, strict=True):
            assert a(prompts=[None] * 4, completions=texts, item_id=ids) == \
                b(prompts=[None] * 4, completions=texts, item_id=ids)
    finally:
        pool.close()
