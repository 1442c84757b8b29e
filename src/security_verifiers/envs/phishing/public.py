"""E4's public splits (test and ood) and their data card.

The card's figures are computed here: balance by family and label, the planted indicators, the shortcut audit
(how well the best single header, sender domain or word decides the label, on the public split and on a larger
sample of another seed), every baseline's mean reward on each split (the environment's scorer), and sim-to-real
(the baselines on hand-written mail in public corpora's layouts, :mod:`.sim_to_real`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from security_verifiers.core.types import Item
from security_verifiers.envs.kits.public_sets import PUBLIC_SEED, DataCard, PublicSets
from security_verifiers.envs.phishing.audit import shortcut_audit
from security_verifiers.envs.phishing.generator import GENERATOR_VERSION, generate

#: A larger sample of each split (another seed) for the shortcut audit.
AUDIT_SIZE = 2000
AUDIT_SEED = PUBLIC_SEED + 1
CARD_BASELINES = ("reference", "classical", "heuristic", "always-abstain", "always-phishing", "always-legitimate",
                  "quote-everything", "fabricated-quotes", "every-indicator", "abstain-with-evidence",
                  "label-probability-mismatch")


def _rewards(items: list[Item]) -> dict[str, float]:
    from security_verifiers.envs.phishing.env import Phishing
    from security_verifiers.harness.conformance import mean_rewards

    return {name: round(value, 4) for name, value in mean_rewards(Phishing(), items, CARD_BASELINES).items()}


def figures(sets: dict[str, list[Item]]) -> dict[str, Any]:
    from security_verifiers.envs.phishing.env import Phishing
    from security_verifiers.envs.phishing.sim_to_real import sim_to_real

    out: dict[str, Any] = {}
    for split, items in sets.items():
        families = Counter((i.target["label"], i.target["family"]) for i in items)
        out[split] = {
            "n": len(items),
            "label": dict(sorted(Counter(i.target["label"] for i in items).items())),
            "family": {f"{label}/{family}": n for (label, family), n in sorted(families.items())},
            "planted": dict(sorted(Counter(p["indicator"] for i in items for p in i.target["planted"]
                                           if i.target["label"] == "Phishing").items())),
            "planted_on_legitimate": dict(sorted(Counter(p["indicator"] for i in items for p in i.target["planted"]
                                                         if i.target["label"] == "Legitimate").items())),
            "shortcut_audit": shortcut_audit(items),
            "shortcut_audit_sample": shortcut_audit(generate(split, AUDIT_SIZE, AUDIT_SEED)),
            "rewards": _rewards(items),
        }
    out["sim_to_real"] = sim_to_real(Phishing())
    return out


def _audit_lines(audit: dict[str, Any], where: str) -> list[str]:
    top = audit["top"]
    return [f"{where}: the best single feature decides the label with balanced accuracy "
            f"{audit['max_balanced_accuracy']:.3f} (0.5 is chance). Its ten best features:", "",
            "| feature | balanced accuracy | share of phishing with it | share of legitimate with it |",
            "|---|---:|---:|---:|",
            *(f"| `{r['feature']}` | {r['balanced_accuracy']:.3f} | {r['rate_phishing']:.3f} | "
              f"{r['rate_legitimate']:.3f} |" for r in top), ""]


def data_card(manifest: dict[str, Any], sets: dict[str, list[Item]]) -> DataCard:
    numbers = figures(sets)
    sections: list[tuple[str, list[str]]] = []
    for split in sets:
        f = numbers[split]
        labels = ", ".join(f"{n} {label}" for label, n in f["label"].items())
        body = [f"{f['n']} emails: {labels}.", "", "| label/family | items |", "|---|---:|",
                *(f"| `{k}` | {v} |" for k, v in f["family"].items()), "",
                "Planted indicators on phishing (what the evidence recall counts) and, on legitimate mail, the true "
                "indicators the generator planted there (evidence citing them is neither rewarded nor penalised):", "",
                "| indicator | on phishing | on legitimate |", "|---|---:|---:|",
                *(f"| `{k}` | {f['planted'].get(k, 0)} | {f['planted_on_legitimate'].get(k, 0)} |"
                  for k in sorted(set(f["planted"]) | set(f["planted_on_legitimate"]))), "",
                "Mean reward (the environment's scorer):", "", "| baseline | reward |", "|---|---:|",
                *(f"| `{k}` | {v:.4f} |" for k, v in f["rewards"].items()), "",
                *_audit_lines(f["shortcut_audit"], f"Shortcut audit of these {f['n']} items"),
                *_audit_lines(f["shortcut_audit_sample"], f"The same on {AUDIT_SIZE} items of seed {AUDIT_SEED}")]
        sections.append((f"Split `{split}`", body))
    real = numbers["sim_to_real"]
    names = list(next(iter(real.values())))
    sim = ["The baselines on the 36 hand-written messages of `data/real/` (18 phishing, 18 legitimate; see its",
           "`LABELS.md`), read by `sv data import phishing`'s loaders: imported mail, so no mailbox context, no",
           "planted spans, and only structural evidence scored. The classical model was trained on generated mail",
           "only.", "",
           "| layout | baseline | n | reward | accuracy | TPR | FPR | abstain | Brier | evidence precision | "
           "evidence recall |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for layout, by_name in real.items():
        for name in names:
            r = by_name[name]
            cells = [r[k] for k in ("reward_mean", "accuracy", "tpr", "fpr", "abstain_rate", "brier",
                                    "evidence_precision", "evidence_recall")]
            sim.append(f"| {layout} | `{name}` | {r['n']} | " + " | ".join("-" if c is None else f"{c:.3f}"
                                                                           for c in cells) + " |")
    sections.append(("Sim-to-real", sim))
    return DataCard(
        title="Phishing (E4): public mini set",
        about=["Raw RFC 5322 emails to fictional organisations from their staff, partners, services and impostors,",
               "generated by `security_verifiers.envs.phishing.generator` (organisations in `world.py`, phishing lures",
               "in `families.py`, legitimate mail in `legit.py`). Each item holds the message as it arrived and what",
               "the recipient's mail system knows of its organisation (what the model sees), and, hidden, the label,",
               "the family and the planted evidence: each indicator with a quote that the environment's own verifier",
               "confirmed when the item was generated. `ood` has organisations and lure families (OAuth consent,",
               "reply-chain hijack, IDN homographs) and legitimate kinds that no other split has."],
        sections=sections,
        limitations=["The mail is generated from hand-written templates with varied wording, names, amounts, encodings",
                     "and MIME layouts; a model that learns the templates would do better here than on real mail (the",
                     "sim-to-real section measures the gap on a small hand-written set). Language indicators are",
                     "confirmed only against planted spans, so a true urgency sentence the generator did not mark is",
                     "not credited. The brand and free-hosting lists behind the structural verifiers are fixed facts",
                     "of this version."],
        figures=numbers)


#: E4's public splits: 200 test items and 100 out-of-distribution items, described by :func:`data_card`.
PUBLIC_SETS = PublicSets(sizes={"test": 200, "ood": 100}, generator_version=GENERATOR_VERSION, card=data_card)
