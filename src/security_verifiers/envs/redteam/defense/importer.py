"""``sv data import redteam-defense``: JailbreakBench's JBB-Behaviors as refusal-track items (:mod:`.refusal`), or
AgentDojo's suites as tool-use items (:mod:`.agentdojo`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.importing import (
    KEEP,
    Argument,
    Importer,
    ImportProgress,
    ImportRun,
    ImportSummary,
    problem_lines,
)


def _agentdojo(values: dict[str, Any], progress: ImportProgress) -> ImportRun:
    """AgentDojo's suites (the installed agentdojo package) as E6 items, each checked when made."""
    from security_verifiers.envs.redteam.defense.agentdojo.items import SUITES
    from security_verifiers.envs.redteam.defense.agentdojo.suites import build_items

    if values["path"] is not None:
        raise ConfigError("--format agentdojo takes no PATH: the suites come with the agentdojo package")
    items: list[Any] = []
    problems: list[str] = []
    counts: dict[str, int] = {}
    for suite in values["suite"] or SUITES:
        try:
            built, left_out = build_items(suite, split=values["split"], seed=values["seed"],
                                          techniques=values["technique"])
        except (ImportError, ValueError) as err:
            raise ConfigError(str(err)) from err
        items += built
        problems += left_out
        counts[suite] = len(built)
        progress.say(f"{suite}: {len(built)} item(s), {len(left_out)} pair(s) left out")
    return ImportRun(items, lambda: ImportSummary(len(items), len(problems),
                                                  problem_lines(problems[:20], len(problems), "AgentDojo pair(s)"),
                                                  counts))


def run(values: dict[str, Any], progress: ImportProgress) -> ImportRun:
    from security_verifiers.envs.redteam.defense.refusal import load_jbb

    if values["format"] == "agentdojo":
        return _agentdojo(values, progress)
    if values["path"] is None or values["suite"] or values["technique"]:
        raise ConfigError("--format jbb takes PATH, and no --suite or --technique")
    path = Path(values["path"])
    if not path.exists():
        raise ConfigError(f"{path}: no such file or directory")
    loaded, problems = load_jbb(path)
    items = [item.model_copy(update={"split": values["split"]}) for item in loaded]
    refuse = sum(item.target["decision"] == "refuse" for item in items)
    lines = [*problem_lines(problems[:KEEP], len(problems), "row(s)"),
             f"{len(items)} item(s) from {path}: {refuse} to refuse, {len(items) - refuse} to comply with; "
             f"{len(problems)} problem(s)"]
    return ImportRun(items, lambda: ImportSummary(len(items), len(problems), lines,
                                                  {"refuse": refuse, "comply": len(items) - refuse}))


IMPORTER = Importer(
    help="The refusal track's requests: JailbreakBench's JBB-Behaviors CSV files.",
    description="Each row of harmful-behaviors.csv becomes a request the model must refuse, each row of "
    "benign-behaviors.csv one it must answer (the Goal column is the request; Category, Behavior and Source are "
    "kept). Rows without a Goal, with the wrong number of fields, or repeating an earlier row are left out and "
    "reported; a file without a Goal column, or with columns JBB does not have, is refused.",
    arguments=(
        Argument(("path",), {"metavar": "PATH", "nargs": "?", "default": None,
                             "help": "jbb: the dataset's folder (holding the two files, or a data/ folder holding "
                             "them), or one of harmful-behaviors.csv and benign-behaviors.csv; agentdojo: none (the "
                             "suites come with the agentdojo package)."}),
        Argument(("--format",), {
            "required": True, "choices": ("jbb", "agentdojo"),
            "help": "jbb: JailbreakBench's JBB-Behaviors layout (Index, Goal, Target, Behavior, Category, Source); "
            "agentdojo: the installed agentdojo package's suites (pip install 'security-verifiers[agentdojo]'), one "
            "item per user task and per (user task, injection task) pair, the injection written by one of E6's "
            "techniques."}),
        Argument(("--suite",), {"action": "append", "choices": ("workspace", "travel", "banking", "slack"),
                                "default": None,
                                "help": "agentdojo: a suite to import (repeat for several; default: all four)."}),
        Argument(("--technique",), {"action": "append", "default": None, "metavar": "NAME",
                                    "help": "agentdojo: make one item per pair for each technique given "
                                    "(repeatable); default: one technique per pair, drawn from --seed."}),
        Argument(("--seed",), {"type": int, "default": 0,
                               "help": "agentdojo: the seed of the techniques' draws and texts."}),
    ),
    run=run,
)
