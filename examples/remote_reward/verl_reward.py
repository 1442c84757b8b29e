"""veRL custom reward function calling ``sv serve``.

In the veRL config::

    custom_reward_function:
      path: examples/remote_reward/verl_reward.py
      name: compute_score

with the dataset's ``reward_model.ground_truth`` set to the item id (``export_prompts.py``) and ``SV_REWARD_URL``
pointing at the server (default ``http://127.0.0.1:8000``). A scorer infrastructure failure raises instead of
returning a number: a made-up reward would be learned from.
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any


def score_remote(item_id: str, completion: str, url: str | None = None, timeout: float = 300.0) -> dict[str, Any]:
    """One rollout's verdict from the server: reward, components, outcome, parse status."""
    base = (url or os.environ.get("SV_REWARD_URL", "http://127.0.0.1:8000")).rstrip("/")
    body = json.dumps({"requests": [{"item_id": item_id, "completion": completion}]}).encode()
    request = urllib.request.Request(f"{base}/score", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        result: dict[str, Any] = json.loads(response.read())["results"][0]
    if result["error"] is not None:
        raise RuntimeError(f"the scorer failed on {item_id}: {result['error']['message']}")
    return result


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict[str, Any] | None = None,
                  **_: Any) -> dict[str, Any]:
    """veRL's reward-function signature: ``ground_truth`` is the item id; returns ``score`` and the components."""
    result = score_remote(ground_truth, solution_str)
    return {"score": result["reward"], **{f"sv/{k}": v for k, v in result["components"].items()}}
