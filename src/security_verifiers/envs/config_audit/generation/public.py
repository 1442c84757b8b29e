"""Build E2's committed public mini set (test), its manifest and its data card.

The files under ``envs/config_audit/data/`` are exactly what this module writes; the environment loads
them and checks their hashes against the manifest, and a test rebuilds them into a temporary directory
and compares, so a generator change, a policy change or an engine upgrade can never silently change the
public benchmark (the labels come from the oracle, and the data card records the engine versions).

    python -m security_verifiers.envs.config_audit.generation.public            # rewrite envs/config_audit/data/
    python -m security_verifiers.envs.config_audit.generation.public --out DIR  # somewhere else
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from security_verifiers.core.datasets import write_jsonl
from security_verifiers.core.types import Item
from security_verifiers.engines.findings import catalog
from security_verifiers.envs.config_audit.generation.generator import GENERATOR_VERSION, generate, self_check

DATA_DIR = Path(__file__).parents[1] / "data"  # the environment's data/, which it loads
PUBLIC_SEED = 2026
PUBLIC_SIZES = {"test": 150}


def build_public_sets(out_dir: Path) -> dict[str, Any]:
    """Write the public split, ``manifest.json`` and ``DATA_CARD.md`` into ``out_dir``; returns the manifest."""
    from security_verifiers.engines.oracle import get_oracle

    out_dir = Path(out_dir)
    splits: dict[str, Any] = {}
    sets: dict[str, list[Item]] = {}
    for split, n in PUBLIC_SIZES.items():
        items = generate(split, n, seed=PUBLIC_SEED)  # raises if the self-check fails
        name = f"{split}.jsonl"
        splits[split] = {"file": name, "hash": write_jsonl(items, out_dir / name), "n": n, "seed": PUBLIC_SEED}
        sets[split] = items
    manifest = {"generator_version": GENERATOR_VERSION, "splits": splits}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    checks = {split: self_check(items) for split, items in sets.items()}
    card = data_card(manifest, sets, checks, get_oracle().versions())
    (out_dir / "DATA_CARD.md").write_text(card, encoding="utf-8")
    return manifest


# --------------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------------
def stats(items: Sequence[Item]) -> dict[str, Any]:
    """Balance and label statistics of a set (what the data card reports)."""
    n = len(items)
    findings = [(i, f) for i in items for f in i.target["findings"]]
    return {
        "n": n,
        "platform": Counter(i.input["platform"] for i in items),
        "clean": sum(not i.target["mutations"] for i in items),
        "clean_by_platform": Counter(i.input["platform"] for i in items if not i.target["mutations"]),
        "n_mutations": Counter(i.meta["n_mutations"] for i in items),
        "template": Counter(i.meta["template"] for i in items),
        "cloud": Counter(i.meta["cloud"] or "-" for i in items),
        "findings": len(findings),
        "by_rule": Counter(f["rule_id"] for _, f in findings),
        "by_severity": Counter(f["severity"] for _, f in findings),
        "by_platform": Counter(i.input["platform"] for i, _ in findings),
        "by_cloud": Counter(i.meta["cloud"] or "kubernetes" for i, _ in findings),
        "by_engines": Counter("+".join(f["engines"]) for _, f in findings),
    }


def _table(title: str, counts: Counter[str], total: int, order: Sequence[str] | None = None) -> list[str]:
    keys = list(order) if order is not None else sorted(counts, key=lambda k: (-counts[k], str(k)))
    lines = [f"| {title} | count | share |", "|---|---:|---:|"]
    lines += [f"| {k} | {counts.get(k, 0)} | {counts.get(k, 0) / total:.1%} |" for k in keys] if total else []
    return lines


def _rule_table(counts: Counter[str]) -> list[str]:
    """The rules the generator can inject (the whole catalog is listed by ``sv rules config-audit``)."""
    from security_verifiers.envs.config_audit.generation.mutations import injectable_rules

    rules = catalog()
    injectable = injectable_rules("kubernetes") | injectable_rules("terraform")
    lines = [f"Rules the mutation operators inject: {len(injectable)} of the {len(rules)} catalog rules "
             f"({sum(1 for r in rules.values() if r.engine != 'checkov')} core rules, the rest backed by Checkov "
             "alone). The whole catalog: `sv rules config-audit`.", "",
             "| rule | engine | platforms | severity | findings |", "|---|---|---|---|---:|"]
    for rule_id in sorted(injectable):
        rule = rules[rule_id]
        platforms = ", ".join(rule.platforms)
        lines.append(f"| `{rule_id}` | {rule.engine} | {platforms} | {rule.severity.value} | "
                     f"{counts.get(rule_id, 0)} |")
    return lines


def data_card(manifest: dict[str, Any], sets: dict[str, list[Item]], checks: dict[str, list[str]],
              versions: dict[str, str]) -> str:
    """The data card: provenance, balance, label statistics, the self-check and the engine versions."""
    test = stats(sets["test"])
    n = test["n"]
    mutated = n - test["clean"]
    mean_mut = sum(k * v for k, v in test["n_mutations"].items()) / mutated if mutated else 0.0
    lines = [
        "# E2 config-audit: public mini set",
        "",
        "Synthetic Kubernetes manifests and Terraform files (AWS, GCP, Azure) to audit for policy violations.",
        "Each item is a realistic secure base file with 0-4 injected misconfigurations; the target holds the",
        "oracle's findings (our Rego library, Checkov with every check mapped onto the catalog, semgrep and the",
        "secret-values engine, all on the evaluated file), the secure base as a correct fix, and the injected",
        "`(rule_id, resource)` pairs. Generated by `security_verifiers.envs.config_audit.generation.generator`;",
        "rebuild with `python -m security_verifiers.envs.config_audit.generation.public` (byte-identical on every",
        "machine with the same pinned engines).",
        "",
        f"- Generator version: `{manifest['generator_version']}`",
    ]
    for split, entry in manifest["splits"].items():
        lines.append(f"- `{entry['file']}`: {entry['n']} items, `generate(\"{split}\", {entry['n']}, "
                     f"seed={entry['seed']})`, hash `{entry['hash']}`")
    lines += ["", "## Engines", "", "| engine | version |", "|---|---|"]
    lines += [f"| {k} | `{v}` |" for k, v in sorted(versions.items())]
    lines += [
        "",
        "## Self-check",
        "",
        "For every item the oracle must report exactly the injected mutations (no miss, no extra), the",
        "target's findings must equal the oracle's, the text and the fix must be valid (strict Kubernetes",
        "1.30 schema, no duplicate keys; Terraform that parses, evaluates and refers only to what it declares)",
        "and the fix must be clean under the whole catalog and keep every resource of the text.",
        "`generate` raises when any of this fails.",
        "",
    ]
    for split, problems in checks.items():
        verdict = "passed" if not problems else f"FAILED ({len(problems)} problems)"
        lines.append(f"- `{split}`: {verdict} on {len(sets[split])} items")
    lines += [
        "",
        "## Balance",
        "",
        f"Clean items (no mutation, no finding): {test['clean']} of {n} ({test['clean'] / n:.1%}); "
        f"mutations per mutated item: mean {mean_mut:.2f}.",
        "",
        *_table("platform", test["platform"], n, ("kubernetes", "terraform")),
        "",
        *_table("clean items by platform", test["clean_by_platform"], test["clean"], ("kubernetes", "terraform")),
        "",
        *_table("mutations per item", Counter({str(k): v for k, v in test["n_mutations"].items()}), n,
                [str(k) for k in range(5)]),
        "",
        *_table("cloud", test["cloud"], n, ("-", "aws", "gcp", "azure")),
        "",
        *_table("template", test["template"], n),
        "",
        "## Findings",
        "",
        f"{test['findings']} findings in all.",
        "",
        *_table("severity", test["by_severity"], test["findings"], ("critical", "high", "medium", "low")),
        "",
        *_table("platform", test["by_platform"], test["findings"], ("kubernetes", "terraform")),
        "",
        *_table("cloud", test["by_cloud"], test["findings"], ("kubernetes", "aws", "gcp", "azure")),
        "",
        *_table("engines that agree", test["by_engines"], test["findings"]),
        "",
        *_rule_table(test["by_rule"]),
        "",
        "## Limitations",
        "",
        "The files are generated from hand-written templates (nine Kubernetes scenarios, sixteen Terraform",
        "scenarios) and one operator per injected rule, so their style is more uniform than real repositories;",
        "the bases are clean under the whole catalog, so every finding is an injected one. Rules whose resources",
        "occur in few scenarios (an Ingress, a Cloud SQL instance) are rarer in a small set; every operator is",
        "exercised by the test suite (`operator_showcase`). Real files can be imported and labelled with",
        "`sv data import config-audit DIR`. Terraform is not checked against provider schemas (they need",
        "`terraform init`, online); the types of attributes are checked where the original file shows them.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build E2's public mini set, manifest and data card.")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="Output directory (default: the package's data/).")
    args = parser.parse_args(argv)
    manifest = build_public_sets(args.out)
    print(json.dumps(manifest, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
