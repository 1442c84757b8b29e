"""E3's public splits (test and ood) and their data card.

The card's figures are computed here from the items: balance by CWE, family variant and domain; program sizes;
functional and exploit probe counts; the honest baselines' mean reward (the environment's own scorer, every
program run in the sandbox); and a shortcut audit: how well one surface feature (a module the program imports)
predicts the CWE, against always guessing the commonest CWE.
"""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from statistics import median
from typing import Any

from security_verifiers.core.types import Item
from security_verifiers.envs.code_repair.generator import GENERATOR_VERSION
from security_verifiers.envs.kits.public_sets import (
    BaselineRewards,
    CardInputs,
    DataCard,
    PublicSets,
    count_table,
    reward_table,
)

#: The baselines whose mean reward the card states (the hacks' are in ``sv bench``).
CARD_BASELINES = ("reference", "fixer", "noop")


def imports(files: dict[str, str]) -> set[str]:
    """Top-level module names a program imports (its surface a shortcut could key on)."""
    out: set[str] = set()
    for text in files.values():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                out.add(node.module.split(".")[0])
    return out


def shortcut_audit(items: list[Item], min_items: int = 5) -> dict[str, Any]:
    """For each imported module in at least ``min_items`` programs, the share of them that have its commonest CWE;
    and the accuracy of the best one-module rule (programs importing it get its commonest CWE, the others the
    commonest CWE overall) against the commonest CWE alone."""
    cwes = [i.target["cwe"] for i in items]
    overall = Counter(cwes).most_common(1)[0]
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    for item, cwe in zip(items, cwes, strict=True):
        for module in imports(item.input["files"]):
            by_module[module][cwe] += 1
    rows = {}
    best = (overall[1] / len(items), None)
    for module, counts in sorted(by_module.items()):
        n = sum(counts.values())
        if n < min_items:
            continue
        top_cwe, top = counts.most_common(1)[0]
        rows[module] = {"items": n, "top_cwe": top_cwe, "top_share": round(top / n, 3)}
        rest = [c for item, c in zip(items, cwes, strict=True) if module not in imports(item.input["files"])]
        rest_top = Counter(rest).most_common(1)[0][1] if rest else 0
        accuracy = (top + rest_top) / len(items)
        if accuracy > best[0]:
            best = (accuracy, module)
    return {"majority_accuracy": round(overall[1] / len(items), 3), "best_rule_accuracy": round(best[0], 3),
            "best_rule_module": best[1], "modules": rows}


def figures(sets: dict[str, list[Item]], rewards: BaselineRewards) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split, items in sets.items():
        lines = [i.meta["lines"] for i in items]
        out[split] = {
            "n": len(items),
            "cwe": dict(sorted(Counter(i.target["cwe"] for i in items).items())),
            "variant": dict(sorted(Counter(f"{i.target['family']}/{i.target['variant']}" for i in items).items())),
            "domain": dict(sorted(Counter(i.meta["domain"] for i in items).items())),
            "modules_per_program": {str(k): v for k, v in
                                    sorted(Counter(len(i.input["files"]) for i in items).items())},
            "lines": {"min": min(lines), "median": median(lines), "max": max(lines)},
            "functional_probes": sum(1 for i in items for p in i.target["probes"] if p["kind"] == "functional"),
            "exploit_probes": sum(1 for i in items for p in i.target["probes"] if p["kind"] == "exploit"),
            "static_known": sum(1 for i in items if i.target["static_ids"]),
            "shortcut_audit": shortcut_audit(items),
            "rewards": {name: round(value, 4) for name, value in rewards(items, CARD_BASELINES).items()},
        }
    return out


def data_card(inputs: CardInputs) -> DataCard:
    numbers = figures(inputs.sets, inputs.rewards)
    sections: list[tuple[str, list[str]]] = []
    for split, f in numbers.items():
        audit = f["shortcut_audit"]
        modules = ", ".join(f"{n} with {k} module{'s' if int(k) > 1 else ''}"
                            for k, n in f["modules_per_program"].items())
        body = [f"{f['n']} programs ({modules}), {f['lines']['min']}-{f['lines']['max']} lines (median "
                f"{f['lines']['median']}), {f['functional_probes']} functional and {f['exploit_probes']} exploit "
                f"probes; an analyser (bandit, or one of our semgrep rules) knows the weakness in {f['static_known']} "
                "of them.", "",
                *count_table("CWE", f["cwe"]), *count_table("family/variant", f["variant"]),
                *count_table("domain", f["domain"]),
                "Mean reward (the environment's scorer; every patch run in the sandbox):", "",
                *reward_table(f["rewards"]), "",
                f"Shortcut audit: always naming the commonest CWE is right on {audit['majority_accuracy']:.1%} of "
                f"the programs; the best rule reading one imported module (`{audit['best_rule_module']}`) on "
                f"{audit['best_rule_accuracy']:.1%}. Modules imported by at least 5 programs, with the share of "
                "them that have the module's commonest CWE:", "",
                "| module | programs | commonest CWE | share |", "|---|---:|---|---:|",
                *(f"| `{m}` | {r['items']} | {r['top_cwe']} | {r['top_share']:.2f} |"
                  for m, r in audit["modules"].items())]
        sections.append((f"Split `{split}`", body))
    return DataCard(
        title="Code repair (E3): public mini set",
        about=["Small Python programs (one to three modules) with one injected weakness each, generated by",
               "`security_verifiers.envs.code_repair.generator` from the families in `families/`. Each item holds",
               "the program and its intended behaviour (what the model sees) and, hidden, the reference fix, the",
               "test module whose functional and exploit probes judge a patch in the sandbox, and where the weakness",
               "is. Every program passed the generator's self-check: the vulnerable version works and is exploited,",
               "the reference fix works and blocks every exploit. `ood` holds program variants no other split has."],
        sections=sections,
        limitations=["The programs are generated from hand-written templates per family: varied in names, data and",
                     "details, but a model that learns the templates would do better here than on real code. The",
                     "exploit probes test the weakness the family injected, not every weakness a program may have.",
                     "bandit knows only some of the weaknesses; for the others the static part is only 'no new",
                     "high-severity finding'."],
        reproducible="byte-identical on every machine; the baselines' rewards come from sandboxed runs",
        figures=numbers)


#: E3's public splits: 100 test items and 50 out-of-distribution items, described by :func:`data_card`.
PUBLIC_SETS = PublicSets(sizes={"test": 100, "ood": 50}, generator_version=GENERATOR_VERSION, card=data_card)
