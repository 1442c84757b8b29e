"""E5's public splits (test and ood) and their data card: the scenarios' balance by target level, task and
carrier, and every baseline's mean reward and success rate (the environment's own scorer)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from security_verifiers.core.types import Item
from security_verifiers.envs.kits.public_sets import (
    BaselineRewards,
    CardInputs,
    DataCard,
    PublicSets,
    count_table,
    reward_table,
)
from security_verifiers.envs.redteam.scenario.generator import GENERATOR_VERSION
from security_verifiers.envs.redteam.scenario.targets import WEAK_TO

CARD_BASELINES = ("reference", "composer", "templates", "noop", "keyword-salad", "empty", "huge", "claim-success",
                  "repeat-invented")


def figures(sets: dict[str, list[Item]], rewards: BaselineRewards) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split, items in sets.items():
        out[split] = {
            "n": len(items),
            "level": dict(sorted(Counter(i.input["target"] for i in items).items())),
            "task": dict(sorted(Counter(i.input["scenario"]["task"]["kind"] for i in items).items())),
            "carrier": dict(sorted(Counter(i.input["scenario"]["carrier"] for i in items).items())),
            "rewards": {k: round(v, 4) for k, v in rewards(items, CARD_BASELINES).items()},
        }
    return out


def data_card(inputs: CardInputs) -> DataCard:
    numbers = figures(inputs.sets, inputs.rewards)
    sections: list[tuple[str, list[str]]] = [("Target levels", [
        "Each level is a scripted assistant that does its task and weighs what it reads: the techniques shown,",
        "obfuscation, how much the text knows of the world, whether the request fits the task, earlier refusals.",
        "A seeded draw (scenario, turn, text) decides, so a level is graded: no single template is certain.", "",
        "| level | weakest to (composed with the world's context in its reference attack) |", "|---|---|",
        *(f"| `{level}` | `{technique}` |" for level, technique in WEAK_TO.items())])]
    for split in inputs.sets:
        f = numbers[split]
        sections.append((f"Split `{split}`", [
            f"{f['n']} scenarios.", "", *count_table("level", f["level"]), *count_table("task", f["task"]),
            *count_table("carrier", f["carrier"]),
            "Mean reward (the environment's scorer):", "", *reward_table(f["rewards"])]))
    return DataCard(
        title="Red-team attack (E5): public mini set",
        about=["Office scenarios from the scenario engine shared with E6 (`security_verifiers.envs.redteam.scenario`),",
               "each with an empty carrier (where the attacker's text goes: the user's message, an e-mail, a document,",
               "a web page or a tool result) and a scripted target level, cycling over the five levels. The target's",
               "secret is drawn for each run, never stored here. Each item holds, hidden, an attack checked to beat",
               "its level (the reference baseline's). `ood` has other sectors' worlds."],
        sections=sections,
        limitations=["The scripted targets read instructions with a keyword parser (`intents.py`) and weigh a few",
                     "features of the text: an attack that works on them shows the technique, not that it would move",
                     "a given model. Attack a model with `--env-option target_model=NAME target_base_url=URL`."],
        figures=numbers)


#: E5's public splits: 100 test scenarios and 50 out-of-distribution ones.
PUBLIC_SETS = PublicSets(sizes={"test": 100, "ood": 50}, generator_version=GENERATOR_VERSION, card=data_card)
