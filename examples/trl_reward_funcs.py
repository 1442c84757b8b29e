"""An environment's scorer as TRL ``reward_funcs`` in a GRPO run of your own (what ``sv train`` does inside).

    python examples/trl_reward_funcs.py MODEL_DIR

``EnvReward(env, items)`` scores each (item, completion) once with the environment's own scorer and serves one
reward function per component plus ``total``; the dataset must carry each row's ``item_id``. Weigh the total alone
(GRPO) with ``reward_weights(env, "grpo")``, or the components (GDPO-style) with ``"gdpo"``. A scorer
infrastructure failure gives ``None`` (TRL: NaN, no gradient), never a made-up 0.
"""

from __future__ import annotations

import sys

from trl import GRPOConfig, GRPOTrainer

from security_verifiers.adapters.trl import EnvReward, prompt_dataset, reward_weights
from security_verifiers.envs.base import get_env

if __name__ == "__main__":
    env = get_env("network-logs")
    items = env.dataset("train", n=256, seed=0).items
    reward = EnvReward(env, items)
    trainer = GRPOTrainer(
        model=sys.argv[1], reward_funcs=reward.functions(), train_dataset=prompt_dataset(env, items),
        args=GRPOConfig(output_dir="outputs/trl-example", reward_weights=reward_weights(env, "grpo"),
                        max_steps=10, per_device_train_batch_size=8, num_generations=4, max_completion_length=64))
    trainer.train()
    print(reward.stats.as_dict())
