"""E1 baseline table: mean reward, mean cost and accuracy of every built-in baseline, per split.

Scores each baseline's answers with the environment's own scorer. By default it reads the committed
public sets (test and ood); with ``--seed`` it generates ``--n`` fresh items per split instead, which is
how the generator's difficulty is tuned without touching the public files.

    python benchmarks/e1_baselines_check.py
    python benchmarks/e1_baselines_check.py --seed 11 --n 2000
"""

from __future__ import annotations

import argparse
import sys
import time

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.envs.network_logs.generator import generate


def _items(env: NetworkLogs, split: str, n: int, seed: int | None) -> list[Item]:
    if seed is None:
        return list(env.dataset(split).items)
    return generate(split, n, seed)


def _row(env: NetworkLogs, name: str, items: list[Item]) -> tuple[str, float, float, float, float]:
    """(policy, reward_mean, cost_mean, accuracy, seconds); accuracy counts Abstain as wrong."""
    policy = env.baselines()[name]()
    t0 = time.perf_counter()
    policy.prepare(items)
    rewards, costs, correct = [], [], 0
    for item in items:
        text = policy.answer(item, env.prompt(item))
        score = env.score(item, Transcript(messages=[Message(role="assistant", content=text)]))
        rewards.append(score.reward)
        costs.append(score.outcome["cost"])
        correct += score.outcome["action"] == ("positive" if score.outcome["y"] else "negative")
    n = len(items)
    return name, sum(rewards) / n, sum(costs) / n, correct / n, time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=None, help="Generate items with this seed instead.")
    parser.add_argument("--n", type=int, default=2000, help="Items per split when generating.")
    args = parser.parse_args()
    env = NetworkLogs()
    for split in ("test", "ood"):
        items = _items(env, split, args.n, args.seed)
        malicious = sum(i.target["label"] == "Malicious" for i in items) / len(items)
        print(f"\n{split}: {len(items)} items, {malicious:.1%} malicious")
        print(f"{'policy':<18}{'reward_mean':>12}{'cost_mean':>11}{'accuracy':>10}{'seconds':>9}")
        for name in env.baselines():
            policy, reward, cost, accuracy, seconds = _row(env, name, items)
            print(f"{policy:<18}{reward:>12.4f}{cost:>11.4f}{accuracy:>10.4f}{seconds:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
