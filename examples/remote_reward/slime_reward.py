"""slime custom reward model calling ``sv serve``: ``--custom-rm-path examples.remote_reward.slime_reward.reward``.

The sample's label is the item id (``export_prompts.py``; ``--label-key item_id``) and ``SV_REWARD_URL`` points at
the server (default ``http://127.0.0.1:8000``). A scorer infrastructure failure raises rather than inventing a
reward.
"""

from __future__ import annotations

import os
from typing import Any

import aiohttp


async def score_remote(item_id: str, completion: str, url: str | None = None) -> float:
    base = (url or os.environ.get("SV_REWARD_URL", "http://127.0.0.1:8000")).rstrip("/")
    async with aiohttp.ClientSession() as session, session.post(
            f"{base}/score", json={"requests": [{"item_id": item_id, "completion": completion}]}) as response:
        response.raise_for_status()
        result = (await response.json())["results"][0]
    if result["error"] is not None:
        raise RuntimeError(f"the scorer failed on {item_id}: {result['error']['message']}")
    return float(result["reward"])


async def reward(args: Any, sample: Any, **_: Any) -> float:
    """slime's signature: the sample's ``response`` is the completion and its ``label`` the item id."""
    return await score_remote(sample.label, sample.response)
