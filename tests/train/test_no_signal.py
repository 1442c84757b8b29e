"""A step with no learning signal (every group's rewards equal, so every advantage 0) leaves the policy as it was:
neither Adam's momentum from earlier steps nor weight decay moves it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from security_verifiers.envs.base import get_env
from security_verifiers.train.presets import GRPOSpec
from security_verifiers.train.trainers import NoSignalGuard, run_grpo
from tests.train.test_pipeline import run  # noqa: F401  (the module's tiny run: its SFT checkpoint is the start)


class _OneProcess:
    """What the guard asks of accelerate on one process: gathering a tensor returns it."""

    @staticmethod
    def gather(tensor: torch.Tensor) -> torch.Tensor:
        return tensor


def _step(model: torch.nn.Linear, optimizer: torch.optim.Optimizer, advantages: torch.Tensor,
          guard: NoSignalGuard | None) -> None:
    """One optimiser step of a policy-gradient-shaped loss (advantage times a function of the weights)."""
    optimizer.zero_grad(set_to_none=True)
    loss = -(advantages.mean() * model(torch.ones(1, 4)).sum())
    loss.backward()
    if guard is not None:
        guard.saw(advantages, _OneProcess())
        callback = guard.callback()
        callback.on_pre_optimizer_step(None, None, None, model=model)
        optimizer.step()
        callback.on_optimizer_step(None, None, None)
    else:
        optimizer.step()


@pytest.mark.parametrize("guarded", [False, True], ids=["unguarded", "guarded"])
def test_a_step_without_signal_moves_nothing_only_when_guarded(guarded: bool) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    guard = NoSignalGuard() if guarded else None
    _step(model, optimizer, torch.tensor([1.0, -1.0, 0.5]), guard)  # a step with signal: the weights move
    after_signal = [p.detach().clone() for p in model.parameters()]
    state_steps = [float(optimizer.state[p]["step"]) for p in model.parameters()]
    for _ in range(3):
        _step(model, optimizer, torch.zeros(3), guard)  # zero advantages: a zero gradient
    unchanged = all(torch.equal(a, p) for a, p in zip(after_signal, model.parameters(), strict=True))
    # Without the guard, Adam's momentum and the weight decay move every weight on steps with zero gradient.
    assert unchanged is guarded
    if guard is not None:
        assert (guard.steps, guard.skipped) == (4, 3)
        assert [float(optimizer.state[p]["step"]) for p in model.parameters()] == state_steps


def _weights(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def test_a_run_whose_rewards_are_all_zero_ends_with_its_start_weights(run: Path, tmp_path: Path) -> None:  # noqa: F811
    """One-token answers never parse: every reward is 0, every step is skipped, and the saved weights are the
    start's, bit for bit."""
    env = get_env("network-logs", {"window": 1})
    items = list(env.dataset("train", n=4, seed=0).items)
    start = run / "sft" / "checkpoint"
    spec = GRPOSpec(steps=2, learning_rate=0.01, prompts_per_step=2, num_generations=2, max_completion_length=1,
                    beta=0.0)
    log = tmp_path / "log.jsonl"
    final, reward = run_grpo(env, items, start, tmp_path / "grpo", spec, "grpo", seed=1, log_path=log, lora=None,
                             use_cpu=True, bf16=False)
    assert reward.stats.as_dict()["parse_failures"] == reward.stats.as_dict()["scored"] == 8
    rows: list[dict[str, Any]] = [json.loads(line) for line in log.read_text().splitlines()]
    steps = [r for r in rows if "reward" in r]
    assert [r["skipped_no_signal"] for r in steps] == [1, 1] and all(r["reward"] == 0 for r in steps)
    before, after = _weights(start), _weights(final)
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)
