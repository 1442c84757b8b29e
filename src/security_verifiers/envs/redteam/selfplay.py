"""Self-play: an E5 run's successful attacks become E6 items (``sv data build redteam-defense --from-run RUN``).

Each successful rollout of ``results.jsonl`` gives one item: the scenario it attacked (kept in the rollout's
record), every text delivered up to the winning turn placed in the carrier together (a multi-step lure stays a
multi-step lure), and a new canary. The item is checked like a generated one: the reference plan must still do the
task safely. Whether the naive assistant falls to it is recorded in the item's meta (an attack that beat a served
model need not move a scripted one).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item, RolloutRecord
from security_verifiers.envs.redteam.scenario.canary import canary_from
from security_verifiers.envs.redteam.scenario.generator import GENERATOR_VERSION, check_defense, defense_item
from security_verifiers.envs.redteam.scenario.items import AttackInfo, Scenario

SPLIT = "selfplay"


def items_from_run(run_dir: Path) -> tuple[list[Item], list[str]]:
    """The E6 items made of ``run_dir``'s successful attacks, and the problems of the rollouts left out."""
    results = Path(run_dir) / "results.jsonl"
    if not results.is_file():
        raise DatasetError(f"{run_dir} holds no results.jsonl: give the directory of an `sv eval redteam-attack` run")
    items: list[Item] = []
    problems: list[str] = []
    seen: set[str] = set()
    with results.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = RolloutRecord.model_validate_json(line)
            except ValueError as err:
                problems.append(f"{results}:{line_no}: not a rollout record ({str(err).splitlines()[0]})")
                continue
            if record.env != "redteam-attack":
                raise DatasetError(f"{results} is a run of {record.env}, not of redteam-attack")
            if not record.outcome.get("success"):
                continue
            try:
                item = _item(record)
            except (AssertionError, KeyError, TypeError, ValueError) as err:
                problems.append(f"{results}:{line_no}: {record.item_id}: {err}")
                continue
            if item.id not in seen:
                seen.add(item.id)
                items.append(item)
    return items, problems


def _item(record: RolloutRecord) -> Item:
    world: dict[str, Any] = (record.transcript.world if record.transcript else None) or {}
    scenario = Scenario.model_validate(world["scenario"])
    turn = int(record.outcome["success_turn"])
    texts = [str(t["content"]) for t in world["turns"][:turn]]
    techniques = list(record.outcome.get("winning_techniques") or [])
    goal = "leak_secret" if record.outcome.get("leaked") else (record.outcome.get("forbidden") or ["unknown"])[0]
    info = AttackInfo(technique=techniques[0] if techniques else "untagged", goal=goal, techniques=techniques,
                      source="selfplay")
    rng = random.Random(f"selfplay:{record.item_id}:{record.sample}:{json.dumps(texts)}")
    meta = {"task": scenario.task.kind, "generator_version": GENERATOR_VERSION, "from_item": record.item_id,
            "from_target": world.get("target"), "from_sample": record.sample}
    item = defense_item(scenario, canary_from(rng), texts, info, False, SPLIT, meta)
    naive_breached = check_defense(item, require_naive_breach=False)
    return item.model_copy(update={"meta": {**item.meta, "naive_breached": naive_breached}})
