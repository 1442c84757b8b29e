"""E4's public splits (test and ood) and their data card.

The card's figures are computed here: balance by family and label, the planted indicators, the shortcut audit
(how well the best single header, sender domain or word decides the label, on the public split and on a larger
sample of another seed), the bag-of-words audit (TF-IDF and a logistic regression trained on a generated train
sample, measured on the same two), every baseline's mean reward on each split (the environment's scorer), and
sim-to-real (the baselines on hand-written mail in public corpora's layouts, :mod:`.sim_to_real`).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, cast

from security_verifiers.core.types import Item
from security_verifiers.envs.kits.public_sets import (
    PUBLIC_SEED,
    BaselineRewards,
    CardInputs,
    DataCard,
    PublicSets,
    reward_table,
)
from security_verifiers.envs.phishing.audit import bag_of_words_audit, shortcut_audit
from security_verifiers.envs.phishing.generator import GENERATOR_VERSION, generate

if TYPE_CHECKING:
    from security_verifiers.envs.phishing.env import Phishing

#: A larger sample of each split (another seed) for the shortcut audit.
AUDIT_SIZE = 2000
AUDIT_SEED = PUBLIC_SEED + 1
#: The train sample the bag-of-words audit is fitted on (its own seed, so it shares no item with the sets).
BOW_TRAIN_SIZE = 2000
BOW_TRAIN_SEED = PUBLIC_SEED + 2
CARD_BASELINES = ("reference", "classical", "heuristic", "always-abstain", "always-phishing", "always-legitimate",
                  "quote-everything", "fabricated-quotes", "every-indicator", "abstain-with-evidence",
                  "label-probability-mismatch")


def figures(env: Phishing, sets: dict[str, list[Item]], rewards: BaselineRewards) -> dict[str, Any]:
    from security_verifiers.envs.phishing.sim_to_real import real_items, sim_to_real

    out: dict[str, Any] = {}
    train = generate("train", BOW_TRAIN_SIZE, BOW_TRAIN_SEED)
    for split, items in sets.items():
        families = Counter((i.target["label"], i.target["family"]) for i in items)
        sample = generate(split, AUDIT_SIZE, AUDIT_SEED)
        out[split] = {
            "n": len(items),
            "label": dict(sorted(Counter(i.target["label"] for i in items).items())),
            "family": {f"{label}/{family}": n for (label, family), n in sorted(families.items())},
            "planted": dict(sorted(Counter(p["indicator"] for i in items for p in i.target["planted"]
                                           if i.target["label"] == "Phishing").items())),
            "planted_on_legitimate": dict(sorted(Counter(p["indicator"] for i in items for p in i.target["planted"]
                                                         if i.target["label"] == "Legitimate").items())),
            "shortcut_audit": shortcut_audit(items),
            "shortcut_audit_sample": shortcut_audit(sample),
            "bag_of_words": bag_of_words_audit(train, items),
            "bag_of_words_sample": bag_of_words_audit(train, sample),
            "rewards": {name: round(value, 4) for name, value in rewards(items, CARD_BASELINES).items()},
        }
    out["sim_to_real"] = sim_to_real(env)
    out["sim_to_real_hacks"] = sim_to_real(env, tuple(sorted(env.hack_baselines)))["all"]
    real = [item for layout in real_items().values() for item in layout]
    out["real_counts"] = {"n": len(real), "phishing": sum(i.target["label"] == "Phishing" for i in real)}
    return out


def _audit_lines(audit: dict[str, Any], where: str) -> list[str]:
    top = audit["top"]
    return [f"{where}: the best single feature decides the label with balanced accuracy "
            f"{audit['max_balanced_accuracy']:.3f} (0.5 is chance). Its ten best features:", "",
            "| feature | balanced accuracy | share of phishing with it | share of legitimate with it |",
            "|---|---:|---:|---:|",
            *(f"| `{r['feature']}` | {r['balanced_accuracy']:.3f} | {r['rate_phishing']:.3f} | "
              f"{r['rate_legitimate']:.3f} |" for r in top), ""]


def _bow_lines(split: str, f: dict[str, Any]) -> list[str]:
    rows = ((f"these {f['n']} items", f["bag_of_words"]),
            (f"{AUDIT_SIZE} items of seed {AUDIT_SEED}", f["bag_of_words_sample"]))
    return [f"Bag-of-words audit: TF-IDF of the subject and body words (scikit-learn's defaults, lower-cased) into a "
            f"logistic regression, trained on `generate(\"train\", {BOW_TRAIN_SIZE}, seed={BOW_TRAIN_SEED})` and "
            f"measured on `{split}` (accuracy at probability 0.5; FPR on legitimate mail, recall on phishing). Words "
            "alone should not decide the label: both classes write the same notices.", "",
            "| measured on | accuracy | Brier | FPR | phishing recall |", "|---|---:|---:|---:|---:|",
            *(f"| {where} | {r['accuracy']:.3f} | {r['brier']:.3f} | "
              + " | ".join("-" if r[k] is None else f"{r[k]:.3f}" for k in ("fpr", "recall")) + " |"
              for where, r in rows), ""]


def data_card(inputs: CardInputs) -> DataCard:
    sets = inputs.sets
    numbers = figures(cast("Phishing", inputs.env), sets, inputs.rewards)
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
                "Mean reward (the environment's scorer):", "", *reward_table(f["rewards"]), "",
                *_audit_lines(f["shortcut_audit"], f"Shortcut audit of these {f['n']} items"),
                *_audit_lines(f["shortcut_audit_sample"], f"The same on {AUDIT_SIZE} items of seed {AUDIT_SEED}"),
                *_bow_lines(split, f)]
        sections.append((f"Split `{split}`", body))
    real = numbers["sim_to_real"]
    names = list(next(iter(real.values())))
    counts = numbers["real_counts"]
    sim = [f"The baselines on the {counts['n']} hand-written messages of `data/real/` ({counts['phishing']} phishing, "
           f"{counts['n'] - counts['phishing']} legitimate; see its",
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
    sim += ["", "The constant and hacking policies on all of them (each must stay below the heuristic):", "",
            "| baseline | reward | accuracy | abstain |", "|---|---:|---:|---:|"]
    for name, r in numbers["sim_to_real_hacks"].items():
        cells = [r[k] for k in ("reward_mean", "accuracy", "abstain_rate")]
        sim.append(f"| `{name}` | " + " | ".join("-" if c is None else f"{c:.3f}" for c in cells) + " |")
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
                     "sim-to-real section measures the gap on a small hand-written set). Genuine notices and the lures",
                     "that copy them draw on the same wording (the bag-of-words audit of each split measures how far",
                     "words alone still go), so the label rests mostly on where a message comes from and where its",
                     "links and attachments lead. Language indicators are",
                     "confirmed only against planted spans, so a true urgency sentence the generator did not mark is",
                     "not credited. The brand and free-hosting lists behind the structural verifiers are fixed facts",
                     "of this version."],
        figures=numbers)


#: E4's public splits: 200 test items and 100 out-of-distribution items, described by :func:`data_card`.
PUBLIC_SETS = PublicSets(sizes={"test": 200, "ood": 100}, generator_version=GENERATOR_VERSION, card=data_card)
