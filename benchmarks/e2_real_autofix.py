"""How the autofix baseline and two inventory hacks fare on real Kubernetes manifests.

    python benchmarks/e2_real_autofix.py DIR [DIR ...] [--data ITEMS.jsonl] [--json OUT]

Every directory goes through ``sv data import config-audit`` (the same loader); ``--data`` reads items already
imported. On the Kubernetes items the script scores, with the environment's own scorer:

* ``autofix``: the honest rule-based patcher. Printed: items with findings, the share of them that get a patch,
  the share of patches that are valid (apply, parse, validate, keep the inventory) and the fix rate
  (severity-weighted share of findings fixed, over items with findings).
* ``empty-containers``: every workload's ``containers`` list emptied and its containers moved to
  ``initContainers`` (what the policies read less of);
* ``repoint-images``: every container image re-pointed to another registry (an image the scanners know
  nothing about). Both hacks should earn no fix: the inventory must reject them.

Use any directory of real manifests you assemble from public sources (kubernetes/examples, kubernetes-goat, ...);
nothing of them belongs in this repository. Not a test: figures to compare before and after a change.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.base import get_env
from security_verifiers.envs.config_audit.autofix import autofix
from security_verifiers.envs.config_audit.baselines import _answer, context_of, scanner_findings
from security_verifiers.envs.config_audit.loaders import load_directory
from security_verifiers.envs.kits.patching import unified_diff

#: Where each workload kind keeps its pod spec: the hacks' own table (not the code's under test, so that a kind
#: the code misses is still hacked, as a model would).
HACK_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",), "PodTemplate": ("template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    **{kind: ("spec", "template", "spec") for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
                                                        "ReplicationController", "Job")}}


def _pod_spec(doc: Any) -> dict[str, Any] | None:
    node = doc
    for key in HACK_PATHS.get(str(doc.get("kind")) if isinstance(doc, dict) else "", ("-",)):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _rewrite(text: str, edit: Callable[[dict[str, Any]], bool]) -> str:
    """``text`` re-dumped with ``edit`` applied to every pod spec ('' when no spec changed)."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    changed = False
    for doc in docs:
        spec = _pod_spec(doc)
        if spec is not None:
            changed |= edit(spec)
    return yaml.safe_dump_all(docs, sort_keys=False) if changed else ""


def _empty_containers(spec: dict[str, Any]) -> bool:
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        return False
    spec["initContainers"] = [*(spec.get("initContainers") or []), *containers]
    spec["containers"] = []
    return True


def _repoint_images(spec: dict[str, Any]) -> bool:
    changed = False
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict) and isinstance(container.get("image"), str):
                tail = container["image"].rsplit("/", 1)[-1]
                container["image"] = f"mirror.example.net/hardened/{tail}"
                changed = True
    return changed


def _autofix_answer(item: Item) -> str:
    platform, text = item.input["platform"], item.input["text"]
    found = scanner_findings(platform, text, context_of(item))
    fixed = autofix(platform, text, found).text
    return _answer([f.key for f in found], unified_diff(text, fixed, item.input["filename"]))


def _hack_answer(edit: Callable[[dict[str, Any]], bool]) -> Callable[[Item], str]:
    def answer(item: Item) -> str:
        text = item.input["text"]
        found = scanner_findings(item.input["platform"], text, context_of(item))
        hacked = _rewrite(text, edit)
        return _answer([f.key for f in found], unified_diff(text, hacked, item.input["filename"]) if hacked else "")
    return answer


POLICIES: dict[str, Callable[[Item], str]] = {"autofix": _autofix_answer,
                                              "empty-containers": _hack_answer(_empty_containers),
                                              "repoint-images": _hack_answer(_repoint_images)}


def figures(items: list[Item], answer: Callable[[Item], str]) -> dict[str, Any]:
    """Items with findings, share of them patched, patch validity, fix rate and reward, from the env's scorer."""
    env = get_env("config-audit")
    transcripts = [Transcript(messages=[Message(role="assistant", content=answer(item))]) for item in items]
    outcomes, errors = [], 0
    for start in range(0, len(items), 64):
        for score in env.score_many(items[start:start + 64], transcripts[start:start + 64]):
            if isinstance(score, Exception):
                errors += 1
            else:
                outcomes.append(score.outcome)
    positive = [o for o in outcomes if not o["clean"]]
    patched = [o for o in positive if o.get("patch_present")]
    valid = [o for o in patched if o.get("patch_inventory_ok")]
    weight = sum(o["oracle_weight"] for o in positive)
    reasons: dict[str, int] = {}
    for o in patched:
        if not o.get("patch_inventory_ok"):
            reason = str(o.get("patch_error") or "?").split(":", 1)[0]
            reasons[reason] = reasons.get(reason, 0) + 1
    return {"items": len(outcomes), "scorer_errors": errors, "with_findings": len(positive),
            "share_patched": round(len(patched) / len(positive), 3) if positive else None,
            "patch_valid_rate": round(len(valid) / len(patched), 3) if patched else None,
            "fix_rate": round(sum(o.get("patch_fixed_w", 0.0) for o in positive) / weight, 3) if weight else None,
            "items_with_fix": sum(1 for o in positive if o.get("patch_n_fixed", 0) > 0),
            "reward_mean": round(sum(o["reward"] for o in outcomes) / len(outcomes), 4) if outcomes else None,
            "invalid_reasons": reasons}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="*", type=Path, help="Directories of real manifests to import.")
    parser.add_argument("--data", type=Path, action="append", default=[], help="Items already imported (JSONL).")
    parser.add_argument("--policy", action="append", choices=sorted(POLICIES), help="Only these policies.")
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    args = parser.parse_args()
    items: list[Item] = [item for d in args.dirs for item in load_directory(d)]
    for path in args.data:
        items += [Item.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]
    items = [i for i in items if i.input["platform"] == "kubernetes"]
    if not items:
        raise SystemExit("no Kubernetes item to score")
    report = {name: figures(items, POLICIES[name]) for name in args.policy or POLICIES}
    for name, row in report.items():
        print(f"{name:17s} {json.dumps(row)}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
