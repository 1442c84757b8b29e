"""Record what E1's scorer and metrics give every baseline on the public splits, as a regression fixture.

Run from the repository root: ``python tests/envs/network_logs/record_scores.py``. It writes
``fixtures/scores_before_kit.json.gz``, which ``test_identical_scores.py`` compares against item by item.
The committed fixture was recorded from the code as it stood before E1 moved onto the abstaining-classifier
kit (``core/abstaining``), so the test proves the move changed no reward, outcome or metric. Re-record it only
when E1's scoring deliberately changes (which also bumps ``NetworkLogs.version``).

Each baseline's reply texts are stored too, so the scorer is compared on the very replies the old code scored
(not only on whatever the baselines answer today), and the baselines' answers are compared separately.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "scores_before_kit.json.gz"
#: Configurations recorded: the default, and a profile where false alarms are the expensive mistake (it moves
#: the abstain band, so the baselines' actions and the costs differ from the default's).
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "alarm-averse": {"costs": {"missed": 1.0, "false_alarm": 10.0, "abstain": 0.5}, "decision_weight": 0.6,
                     "brier_weight": 0.4},
}
SPLITS = ("test", "ood")
BASELINES = ("reference", "heuristic", "gbdt", "always-malicious", "always-benign", "always-abstain")
#: Replies that are not answers, or not valid ones: the invalid path of the scorer and metrics.
INVALID_REPLIES = ("", "no JSON here", '{"label": "Maybe", "p_malicious": 0.5}',
                   '{"label": "Benign", "p_malicious": 2}')


def record() -> dict[str, Any]:
    from security_verifiers.core.types import Message, Transcript
    from security_verifiers.envs.network_logs import NetworkLogs

    runs: dict[str, Any] = {}
    for config_name, options in CONFIGS.items():
        env = NetworkLogs.from_options(options)
        for split in SPLITS:
            items = list(env.dataset(split).items)
            factories = env.baselines()
            for name in (*BASELINES, "invalid"):
                if name == "invalid":
                    replies = [INVALID_REPLIES[k % len(INVALID_REPLIES)] for k in range(len(items))]
                else:
                    policy = factories[name]()
                    policy.prepare(items)
                    replies = [policy.answer(item, env.prompt(item)) for item in items]
                scores = [env.score(item, Transcript(messages=[Message(role="assistant", content=reply)]))
                          for item, reply in zip(items, replies, strict=True)]
                outcomes = [s.outcome for s in scores]
                runs[f"{config_name}/{split}/{name}"] = {
                    "items": [i.id for i in items],
                    "replies": replies,
                    "scores": [s.model_dump(mode="json") for s in scores],
                    "metrics": env.metrics(outcomes, [i.id for i in items]),
                    "point_metrics": env.point_metrics(outcomes),
                }
    return {"env_version": NetworkLogs.version, "configs": CONFIGS, "runs": runs}


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(record(), sort_keys=True, separators=(",", ":")).encode()
    FIXTURE.write_bytes(gzip.compress(data, mtime=0))
    print(f"wrote {FIXTURE} ({len(data)} bytes, {FIXTURE.stat().st_size} compressed)")
