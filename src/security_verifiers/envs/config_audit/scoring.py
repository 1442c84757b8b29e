"""The parts of the config-audit reward, as pure functions of the oracle's findings and the answer.

Detection is scored on deduplicated (rule id, resource) pairs weighted by the *oracle's* severity:
a true positive weighs its finding's severity, a false positive the catalog severity of the rule it
claims (an id outside the catalog weighs as a critical one, so inventing rules never pays). A patch
scores the severity-weighted fraction of original findings it fixes minus the weight of the findings
it introduces, and only if it applies, parses, validates and preserves the resource inventory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from security_verifiers.engines.findings import Finding, Severity, catalog

#: Weight of a claimed rule id that is not in the catalog.
UNKNOWN_RULE_WEIGHT = Severity.CRITICAL.weight


def rule_weight(rule_id: str) -> float:
    rule = catalog().get(rule_id)
    return rule.severity.weight if rule is not None else UNKNOWN_RULE_WEIGHT


@dataclass(frozen=True)
class Detection:
    tp: int
    fp: int
    fn: int
    tp_w: float
    fp_w: float
    fn_w: float
    score: float  # the detection part of the reward, in [0, 1]
    true_positives: tuple[tuple[str, str], ...]
    false_positives: tuple[tuple[str, str], ...]
    missed: tuple[tuple[str, str], ...]


def score_detection(claimed: Iterable[tuple[str, str]], oracle: Iterable[Finding]) -> Detection:
    """Severity-weighted F1 of the claimed (rule, resource) pairs against the oracle's findings.

    On a clean item (no oracle finding) the empty claim scores 1 and any claim scores 0.

    >>> from security_verifiers.engines.findings import Finding, Severity
    >>> truth = [Finding(rule_id="k8s-host-pid", resource="Pod/a", severity=Severity.HIGH)]
    >>> score_detection([("k8s-host-pid", "Pod/a"), ("k8s-host-pid", "Pod/a")], truth).score
    1.0
    >>> score_detection([], []).score, score_detection([("k8s-host-pid", "Pod/a")], []).score
    (1.0, 0.0)
    """
    truth = {f.key: f.severity.weight for f in oracle}
    claims = set(claimed)
    tps = sorted(c for c in claims if c in truth)
    fps = sorted(c for c in claims if c not in truth)
    missed = sorted(k for k in truth if k not in claims)
    tp_w = sum(truth[c] for c in tps)
    fp_w = sum(rule_weight(c[0]) for c in fps)
    fn_w = sum(truth[k] for k in missed)
    if not truth:
        score = 1.0 if not claims else 0.0
    else:
        score = 2 * tp_w / (2 * tp_w + fp_w + fn_w)
    return Detection(tp=len(tps), fp=len(fps), fn=len(missed), tp_w=tp_w, fp_w=fp_w, fn_w=fn_w, score=score,
                     true_positives=tuple(tps), false_positives=tuple(fps), missed=tuple(missed))


@dataclass(frozen=True)
class PatchOutcome:
    present: bool
    applied: bool = False
    valid: bool = False
    inventory_ok: bool = False
    fixed_w: float = 0.0
    original_w: float = 0.0
    new_w: float = 0.0
    n_fixed: int = 0
    n_new: int = 0
    n_undetermined: int = 0  # findings kept open because the patch made a value the files cannot determine
    error: str | None = None
    score: float = 0.0  # the patch part of the reward, in [0, 1]


def score_fix(original: Iterable[Finding], patched: Iterable[Finding]) -> tuple[float, float, float, int, int, float]:
    """(fixed_w, original_w, new_w, n_fixed, n_new, score) of a patch that applied and kept the inventory.

    ``score = (fixed_w - new_w) / original_w`` clipped to [0, 1]: each new finding costs what fixing one
    of the same severity earns. With no original finding, a patch that adds none scores 1.
    """
    before = {f.key: f.severity.weight for f in original}
    after = {f.key: f.severity.weight for f in patched}
    fixed = [k for k in before if k not in after]
    new = [k for k in after if k not in before]
    fixed_w = sum(before[k] for k in fixed)
    new_w = sum(after[k] for k in new)
    original_w = sum(before.values())
    if original_w:
        score = min(1.0, max(0.0, (fixed_w - new_w) / original_w))
    else:
        score = 1.0 if not new else 0.0
    return fixed_w, original_w, new_w, len(fixed), len(new), score


Inventory = dict[str, Any]


def inventory_preserved(before: Inventory, after: Inventory) -> str | None:
    """``None`` when every original object survives (see :func:`~security_verifiers.engines.configs.inventory`);
    otherwise the reason. Added objects (a NetworkPolicy, a companion Terraform resource) are allowed.

    A Kubernetes object must keep its init and main containers (names and image repositories; tags and digests
    may change) and its namespace: an object in another namespace is another object. The one move allowed is
    out of ``default`` (the fix of ``k8s-default-namespace``) into a namespace the file knows: one that the
    original uses or that either file declares with a ``Namespace`` object."""
    old, new = before["objects"], after["objects"]
    known = {str(n) for inv in (before, after) for n in inv.get("declared_namespaces") or ()}
    known |= {str(e["namespace"]) for entries in old.values() for e in entries if isinstance(e, dict)}
    for resource, entries in old.items():
        if resource not in new:
            return f"{resource} was removed or renamed"
        remaining = [e for e in new[resource] if isinstance(e, dict)]
        for entry in (e for e in entries if isinstance(e, dict)):
            match = _same_object(entry, remaining, known)
            if isinstance(match, str):
                return f"{resource}: {match}"
            remaining.remove(match)
    return None


def _same_object(entry: dict[str, Any], candidates: list[dict[str, Any]], known: set[str]) -> dict[str, Any] | str:
    """The candidate that is ``entry``'s object after the patch, or why there is none."""
    same_place = [c for c in candidates if c["namespace"] == entry["namespace"]]
    for c in same_place:
        if c["init"] == entry["init"] and c["containers"] == entry["containers"]:
            return c
    if entry["namespace"] == "default":
        for c in candidates:
            if c["namespace"] in known and c["init"] == entry["init"] and c["containers"] == entry["containers"]:
                return c
    if same_place:
        return f"its containers or images changed ({_describe(entry)} -> {_describe(same_place[0])})"
    moved = candidates[0]["namespace"] if candidates else None
    if moved is not None:
        return (f"moved from namespace {entry['namespace']} to {moved}" +
                ("" if moved in known else " (a namespace the file neither uses nor declares)"))
    return f"was removed from namespace {entry['namespace']}"


def _describe(entry: dict[str, Any]) -> str:
    def names(key: str) -> str:
        return ", ".join(f"{n}={image}" for n, image in entry[key]) or "none"

    return f"init containers: {names('init')}; containers: {names('containers')}"
