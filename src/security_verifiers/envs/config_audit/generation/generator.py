"""Deterministic generator of E2 (config-audit) items: one Kubernetes manifest or Terraform file to audit.

Each item starts from a *secure base* (``templates_k8s`` / ``templates_tf``: realistic multi-resource
files that no engine flags) and applies *mutation operators* (``mutations``), each injecting one known
misconfiguration into one resource (with what that edit necessarily violates besides), until the item holds
0-4 injected (rule, resource) pairs. The item's target holds:

* ``findings``: what the oracle (Rego + mapped Checkov + semgrep) reports on the text, the truth the
  scorer uses;
* ``fixed``: the base, a correct fix;
* ``mutations``: the injected ``(rule_id, resource)`` pairs.

The :func:`self_check` ties them together: the oracle must report exactly the injected pairs, the base
must be valid and clean, and no resource may be lost between text and fix. :func:`generate` refuses to
return a dataset that fails it, so a change in an engine or a rule that silently changes the labels is
caught at generation time, not discovered in a reward curve.

Balance is planned, not sampled: every block of 20 items holds 10 Kubernetes and 10 Terraform items, 3 of
each clean (so the clean fraction is exactly 30% and platforms are balanced on every multiple of 20), and
its Terraform items are dealt to the three clouds in turn. Rules are spread by down-weighting the ones
already injected in the dataset. A longer dataset extends a shorter one (same seed). Only
``random.Random`` instances seeded from a SHA-256 of the split and seed are used, so the output is
byte-identical on every machine.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.progress import advance
from security_verifiers.core.types import Item
from security_verifiers.engines.configs import ConfigParseError, inventory
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.generation.mutations import candidates, mutate, operators
from security_verifiers.envs.config_audit.generation.templates_k8s import K8S_TEMPLATES
from security_verifiers.envs.config_audit.generation.templates_tf import TF_CLOUDS, TF_TEMPLATES
from security_verifiers.envs.config_audit.scoring import inventory_preserved

GENERATOR_VERSION = "2.1.0"
SPLITS = ("train", "dev", "test")
FILENAMES = {"kubernetes": "manifest.yaml", "terraform": "main.tf"}
CLOUDS = ("aws", "gcp", "azure")
#: Items per planning block, and clean items per platform in a block (3 of 10: 30% clean).
BLOCK = 20
CLEAN_PER_PLATFORM = 3
#: How many mutations a positive item gets.
MUTATION_COUNTS = (1, 2, 3, 4)
MUTATION_WEIGHTS = (0.35, 0.30, 0.20, 0.15)
#: Texts per oracle call: semgrep starts one process per call (~2 s), so large batches are cheap.
ORACLE_BATCH = 400


@dataclass(frozen=True)
class Draft:
    """An item before labelling: the text, its fix and what was injected."""

    split: str
    platform: str
    template: str
    cloud: str | None
    text: str
    fixed: str
    mutations: tuple[tuple[str, str], ...]

    @property
    def key(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        return (self.text, self.fixed, self.mutations)


def _seeded(split: str, seed: int) -> random.Random:
    """The split's own stream: a SHA-256 of split and seed, so splits never share items by accident."""
    digest = hashlib.sha256(f"{split}:{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class Slot:
    """What one planned item must be: its platform, whether it is clean, its cloud (Terraform only)."""

    platform: str
    clean: bool
    cloud: str | None


def _block_plan(rng: random.Random) -> list[Slot]:
    """The slots of one block of :data:`BLOCK` items, shuffled: half per platform, :data:`CLEAN_PER_PLATFORM`
    clean per platform, and Terraform clouds dealt round-robin from a shuffled order (balanced to one item)."""
    half = BLOCK // 2
    clouds = list(CLOUDS)
    rng.shuffle(clouds)
    slots = [Slot("kubernetes", i < CLEAN_PER_PLATFORM, None) for i in range(half)]
    slots += [Slot("terraform", i < CLEAN_PER_PLATFORM, clouds[i % len(clouds)]) for i in range(half)]
    rng.shuffle(slots)
    return slots


def _base(rng: random.Random, slot: Slot) -> Any:
    if slot.platform == "kubernetes":
        return K8S_TEMPLATES[rng.choice(sorted(K8S_TEMPLATES))](rng)
    cloud = slot.cloud or rng.choice(CLOUDS)
    template = rng.choice(sorted(t for t, c in TF_CLOUDS.items() if c == cloud))
    return TF_TEMPLATES[template](rng)


def draft(rng: random.Random, split: str, slot: Slot, usage: Counter[str] | None = None) -> Draft:
    """One unlabelled item: a fresh base, and unless the slot is clean a copy of it with 1-4 mutations
    (``usage``: per-platform counts of the rules injected so far, see :func:`mutations.mutate`)."""
    platform = slot.platform
    base = _base(rng, slot)
    fixed = base.render()
    mutations: list[dict[str, str]] = []
    text = fixed
    if not slot.clean:
        k = rng.choices(MUTATION_COUNTS, MUTATION_WEIGHTS)[0]
        broken = base.copy()
        mutations = mutate(broken, k, rng, usage)
        if not mutations:
            raise DatasetError(f"template {base.template} offers no mutation")  # a template bug
        text = broken.render()
    cloud = None if platform == "kubernetes" else base.cloud
    return Draft(split, platform, base.template, cloud, text, fixed,
                 tuple((m["rule_id"], m["resource"]) for m in mutations))


def plan(split: str, n: int, seed: int) -> list[Draft]:
    """The ``n`` unlabelled drafts of ``generate(split, n, seed)`` (no oracle: cheap, for tests and stats)."""
    if split not in SPLITS:
        raise DatasetError(f"unknown split {split!r} for config-audit; choose from {', '.join(SPLITS)}")
    if n < 0:
        raise DatasetError(f"n must be non-negative, got {n}")
    rng = _seeded(split, seed)
    drafts: list[Draft] = []
    seen: set[tuple[Any, ...]] = set()
    usage: dict[str, Counter[str]] = {p: Counter() for p in FILENAMES}
    while len(drafts) < n:
        for slot in _block_plan(random.Random(rng.getrandbits(64))):
            if len(drafts) == n:
                break
            while True:  # a duplicate (vanishingly rare) is redrawn in the same slot
                d = draft(random.Random(rng.getrandbits(64)), split, slot, usage[slot.platform])
                if d.key not in seen:
                    break
            seen.add(d.key)
            drafts.append(d)
    return drafts


# --------------------------------------------------------------------------------------------------
# Labelling with the oracle
# --------------------------------------------------------------------------------------------------
def _oracle(oracle: Any | None) -> Any:
    if oracle is not None:
        return oracle
    from security_verifiers.engines.oracle import get_oracle  # heavy: loads checkov, semgrep, regopy

    return get_oracle()


def scan_all(pairs: Sequence[tuple[str, str]], oracle: Any | None = None, what: str = "scanning files") -> list[Any]:
    """Oracle results for (platform, text) pairs, in batches of :data:`ORACLE_BATCH` (one semgrep run each)."""
    engine = _oracle(oracle)
    out: list[Any] = []
    for start in range(0, len(pairs), ORACLE_BATCH):
        out.extend(engine.scan_many(list(pairs[start:start + ORACLE_BATCH])))
        advance(len(out), len(pairs), what)
    return out


def finding_record(f: Finding) -> dict[str, Any]:
    """A finding as stored in ``target.findings`` (severity from the catalog, engines that agreed)."""
    return {"rule_id": f.rule_id, "resource": f.resource, "path": f.path, "severity": str(f.severity.value),
            "engines": list(f.engines)}


def findings_records(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    return sorted((finding_record(f) for f in findings), key=lambda r: (r["rule_id"], r["resource"]))


def _item(d: Draft, findings: list[dict[str, Any]]) -> Item:
    inp = {"platform": d.platform, "filename": FILENAMES[d.platform], "text": d.text}
    target = {"findings": findings, "fixed": d.fixed,
              "mutations": [{"rule_id": r, "resource": res} for r, res in d.mutations]}
    meta = {"generator_version": GENERATOR_VERSION, "template": d.template, "cloud": d.cloud,
            "n_mutations": len(d.mutations)}
    return Item(id=item_id("ca", {"input": inp, "target": target}), split=d.split, input=inp, target=target,
                meta=meta)


def label(drafts: Sequence[Draft], oracle: Any | None = None) -> list[Item]:
    """Items with ``target.findings`` filled by the oracle (texts and fixes are scanned in the same batches,
    so the self-check that follows is served from the oracle's cache)."""
    pairs = [(d.platform, t) for d in drafts for t in (d.text, d.fixed)]
    results = scan_all(pairs, oracle)
    return [_item(d, findings_records(results[2 * i].findings)) for i, d in enumerate(drafts)]


# --------------------------------------------------------------------------------------------------
# Self-check
# --------------------------------------------------------------------------------------------------
def _lost_resources(platform: str, text: str, fixed: str) -> list[str]:
    """Resources (and Kubernetes containers/images) of ``text`` missing from ``fixed``: a fix never deletes."""
    try:
        problem = inventory_preserved(inventory(platform, text), inventory(platform, fixed))
    except ConfigParseError as err:
        return [f"unparseable: {err}"]
    return [problem] if problem else []


def _check_one(item: Item, result: Any, fixed: Any) -> list[str]:
    where = f"{item.id} ({item.meta.get('template')})"
    problems: list[str] = []
    text, target = item.input["text"], item.target
    injected = {(m["rule_id"], m["resource"]) for m in target["mutations"]}
    if not result.valid:
        problems.append(f"{where}: text is not valid: {result.parse_error or result.validation_errors[:3]}")
    found = result.keys
    for rule_id, resource in sorted(injected - found):
        problems.append(f"{where}: injected {rule_id} on {resource} is not found by the oracle")
    for rule_id, resource in sorted(found - injected):
        problems.append(f"{where}: unexpected finding {rule_id} on {resource}")
    if target["findings"] != findings_records(result.findings):
        problems.append(f"{where}: target.findings differ from the oracle's findings")
    if not fixed.valid:
        problems.append(f"{where}: fixed text is not valid: {fixed.parse_error or fixed.validation_errors[:3]}")
    if fixed.findings:
        problems.append(f"{where}: fixed text has findings {sorted(fixed.keys)}")
    if not injected and text != target["fixed"]:
        problems.append(f"{where}: clean item whose text differs from its fix")
    if item.meta.get("n_mutations") != len(target["mutations"]):
        problems.append(f"{where}: meta.n_mutations is wrong")
    lost = _lost_resources(item.input["platform"], text, target["fixed"])
    if lost:
        problems.append(f"{where}: the fix loses {lost}")
    return problems


def self_check(items: Sequence[Item], oracle: Any | None = None) -> list[str]:
    """Problems with ``items`` (empty when all is well): every injected mutation is found, nothing else is,
    ``target.findings`` is the oracle's truth, the text and its fix are valid (strict Kubernetes schema via
    ``tools.validate``) and the fix is clean and keeps every resource."""
    pairs = [(i.input["platform"], t) for i in items for t in (i.input["text"], i.target["fixed"])]
    results = scan_all(pairs, oracle, "self-check")
    problems: list[str] = []
    for n, item in enumerate(items):
        problems.extend(_check_one(item, results[2 * n], results[2 * n + 1]))
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        problems.append("duplicate item ids")
    return problems


def _checked(items: list[Item], oracle: Any | None) -> list[Item]:
    problems = self_check(items, oracle)
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise DatasetError(f"config-audit self-check failed ({len(problems)} problems):\n  {shown}{more}")
    return items


def generate(split: str, n: int, seed: int, oracle: Any | None = None) -> list[Item]:
    """``n`` labelled items of ``split``, a pure function of its arguments, :data:`GENERATOR_VERSION` and the
    pinned engines. Raises :class:`DatasetError` if the self-check fails."""
    drafts = plan(split, n, seed)
    return _checked(label(drafts, oracle), oracle)


def operator_showcase(seed: int = 0, oracle: Any | None = None) -> list[Item]:
    """One item per (platform, rule): each operator applied alone to the first base (in a seeded order of
    templates) where it is meaningful, labelled with every pair it injects (its rule, ``also``, spillover). It
    proves that every operator is detected, precisely, by the oracle."""
    rng = random.Random(int.from_bytes(hashlib.sha256(f"showcase:{seed}".encode()).digest()[:8], "big"))
    drafts = []
    for platform in FILENAMES:
        templates = K8S_TEMPLATES if platform == "kubernetes" else TF_TEMPLATES
        for rule_id, op in operators(platform).items():
            names = sorted(templates)
            rng.shuffle(names)
            for attempt in range(10 * len(names)):
                base = templates[names[attempt % len(names)]](random.Random(rng.getrandbits(64)))
                if rule_id in candidates(base):
                    break
            else:
                raise DatasetError(f"no template offers a target for {platform}:{rule_id}")
            fixed = base.render()
            resource = rng.choice(op.targets(base))
            op.apply(base, resource, rng)
            cloud = None if platform == "kubernetes" else base.cloud
            drafts.append(Draft("showcase", platform, base.template, cloud, base.render(), fixed,
                                tuple(op.injected(base, resource))))
    return _checked(label(drafts, oracle), oracle)
