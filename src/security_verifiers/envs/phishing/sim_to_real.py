"""Sim-to-real: the baselines, trained or tuned on generated mail only, on hand-written mail in the layouts of
public corpora (``data/real/``, see its ``LABELS.md``).

The messages are read by the same loaders as ``sv data import phishing`` (so they are imported items: no mailbox,
no planted spans, only structural evidence scored), answered by each baseline and scored by the environment;
the figures are the environment's own metrics, per layout and over all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.phishing.loaders import ImportReport, import_messages

if TYPE_CHECKING:
    from security_verifiers.envs.phishing.env import Phishing

#: The environment's ``data/real`` (a path, not an import of the environment, which builds its card from here).
REAL_DIR = Path(__file__).parent / "data" / "real"
#: Layout -> (format, paths under data/real, the label of a one-class corpus).
REAL_SETS: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    "mbox (Nazario-like)": ("mbox", ("phishing.mbox",), None),
    "Maildir (Enron-like)": ("maildir", ("legit_maildir",), "Legitimate"),
    "eml directory": ("eml", ("eml",), None),
    "CSV (Kaggle-like)": ("csv", ("emails.csv",), None),
}
METRICS = ("reward_mean", "accuracy", "tpr", "fpr", "abstain_rate", "brier", "evidence_precision",
           "evidence_recall")


def real_items(root: Path = REAL_DIR) -> dict[str, list[Item]]:
    """The real-format messages of every layout as items (split ``real``), through the ordinary loaders."""
    out: dict[str, list[Item]] = {}
    for layout, (fmt, paths, label) in REAL_SETS.items():
        report = ImportReport()
        files = [root / p for p in paths]
        items = list(import_messages(fmt, files, list(paths), label=label, split="real", report=report))  # type: ignore[arg-type]
        if report.problems:
            raise ValueError(f"{layout}: {report.problems.total} problem(s) reading the committed real mail: "
                             f"{report.problems.shown[0]}")
        out[layout] = items
    return out


def evaluate(env: Phishing, items: Sequence[Item], name: str) -> dict[str, Any]:
    policy = env.baselines()[name]()
    prepare = getattr(policy, "prepare", None)
    if callable(prepare):
        prepare(list(items))
    answer = policy.answer  # type: ignore[attr-defined]
    outcomes = [env.score(i, Transcript(messages=[Message(role="assistant", content=answer(i, []))])).outcome
                for i in items]
    metrics = env.point_metrics(outcomes)
    return {"n": len(items), **{k: None if metrics[k] is None else round(float(metrics[k]), 4) for k in METRICS}}


def sim_to_real(env: Phishing, names: tuple[str, ...] = ("classical", "heuristic", "always-abstain")
                ) -> dict[str, dict[str, Any]]:
    """Every named baseline on every layout, and on all of them (``all``)."""
    data = real_items()
    data["all"] = [item for items in list(data.values()) for item in items]
    return {layout: {name: evaluate(env, items, name) for name in names} for layout, items in data.items()}
