"""The E1 baselines on real rows: do they raise alarms on ordinary traffic of real networks?

``data/real/`` holds rows written by hand in the real datasets' layouts (CIC-IDS-2017's TrafficLabelling
CSV, IoT-23's conn.log.labeled, raw UNSW-NB15); the data card says where their values come from. They are
read by the same loaders as a real capture, answered by the baselines, and scored by the environment: the
headline figure is the share of real benign flows a baseline calls Malicious (its false-alarm rate).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.network_logs.loaders import FORMATS
from security_verifiers.envs.network_logs.reading import load_file

if TYPE_CHECKING:
    from security_verifiers.envs.network_logs.env import NetworkLogs

#: The environment's ``data/real`` (a path, not an import of the environment, which builds its card from here).
REAL_DIR = Path(__file__).parent / "data" / "real"
#: The real rows: dataset -> (reader, files), files in capture order.
REAL_FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "CIC-IDS-2017": ("cicids2017", ("cicids2017_friday.csv",)),
    "IoT-23": ("iot23", ("iot23_honeypots.conn.log.labeled", "iot23_mirai.conn.log.labeled")),
    "UNSW-NB15": ("unsw-nb15", ("unsw_nb15_raw.csv",)),
}
_LABEL_ACTION = {"Malicious": "positive", "Benign": "negative"}


def real_items() -> dict[str, list[Item]]:
    """The real rows of every dataset as items (split ``real``), through the ordinary loaders."""
    out: dict[str, list[Item]] = {}
    for dataset, (reader, files) in REAL_FILES.items():
        out[dataset] = [item for name in files for item in load_file(FORMATS[reader](REAL_DIR / name), "real")]
    return out


def baseline_rates(env: NetworkLogs, items: list[Item], policy_factory: Callable[[], Any]) -> dict[str, Any]:
    """One baseline on one dataset's rows: false-alarm and abstain rates on the benign rows, detection and
    abstain rates on the malicious ones, and the mean reward (the environment's scorer)."""
    policy = policy_factory()
    policy.prepare(items)
    counts = {label: {"positive": 0, "negative": 0, "abstain": 0, "n": 0} for label in _LABEL_ACTION}
    rewards = []
    for item in items:
        score = env.score(item, Transcript(messages=[Message(role="assistant", content=policy.answer(item, []))]))
        rewards.append(score.reward)
        row = counts[item.target["label"]]
        row["n"] += 1
        row[score.outcome["action"]] += 1
    benign, malicious = counts["Benign"], counts["Malicious"]

    def share(row: dict[str, int], action: str) -> float | None:
        return round(row[action] / row["n"], 4) if row["n"] else None

    return {"benign_n": benign["n"], "false_alarm_rate": share(benign, "positive"),
            "benign_abstain_rate": share(benign, "abstain"), "malicious_n": malicious["n"],
            "detection_rate": share(malicious, "positive"), "malicious_abstain_rate": share(malicious, "abstain"),
            "reward": round(sum(rewards) / len(rewards), 4)}


def sim_to_real(env: NetworkLogs, names: tuple[str, ...] = ("heuristic", "gbdt", "always-benign",
                                                                "always-abstain")) -> dict[str, dict[str, Any]]:
    """Every named baseline on every dataset's real rows, and on all of them together (key ``all``)."""
    factories = env.baselines()
    data = real_items()
    data["all"] = [item for items in list(data.values()) for item in items]
    return {dataset: {name: baseline_rates(env, items, factories[name]) for name in names}
            for dataset, items in data.items()}
