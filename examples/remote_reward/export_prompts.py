"""Write an environment's split as trainer-ready JSONL: one row per item, its chat prompt and its item id.

    python examples/remote_reward/export_prompts.py network-logs train prompts.jsonl --n 5000 --seed 0

Each row is ``{"prompt": [{"role", "content"}, ...], "item_id": "..."}``. Give the trainer ``item_id`` as the label
(OpenRLHF ``--label_key item_id``; veRL ``reward_model.ground_truth``; slime ``--label-key item_id``) and start
``sv serve ENV --split SPLIT`` with the same split (and ``--data-seed``) so that the server knows the ids.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from security_verifiers.envs.base import get_env


def export(env_name: str, split: str, out: Path, n: int | None = None, seed: int | None = None) -> int:
    env = get_env(env_name)
    items = env.dataset(split, n=n, seed=seed).items
    with out.open("w", encoding="utf-8") as handle:
        for item in items:
            prompt = [{"role": m.role, "content": m.content} for m in env.prompt(item)]
            handle.write(json.dumps({"prompt": prompt, "item_id": item.id}) + "\n")
    return len(items)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("env")
    parser.add_argument("split")
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, default=None, help="Items of a generated split (default: its size).")
    parser.add_argument("--seed", type=int, default=None, help="Seed of a generated split (default: 0).")
    args = parser.parse_args()
    print(f"wrote {export(args.env, args.split, args.out, args.n, args.seed)} prompts to {args.out}")
