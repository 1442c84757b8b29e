"""The registry of mutation operators (one per catalog rule and platform) and how an item picks them.

:func:`mutate` applies up to ``k`` operators of distinct rules to a base, each to one resource chosen
among the resources where it is meaningful. Rules are drawn with weights inversely proportional to how
often they are applicable at all (an Ingress exists in few scenarios, a container in all of them), so a
dataset exercises every rule instead of the few that apply everywhere; within one dataset, rules already
injected often are down-weighted further (see :func:`mutate`). The weights are computed from
the templates with fixed seeds, hence are constants of the code, identical on every machine.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from functools import cache

from security_verifiers.engines.findings import catalog
from security_verifiers.envs.config_audit.generation.mutation_kit import Base, Operator
from security_verifiers.envs.config_audit.generation.mutations_k8s import kubernetes_operators
from security_verifiers.envs.config_audit.generation.mutations_tf import terraform_operators
from security_verifiers.envs.config_audit.generation.templates_k8s import K8S_TEMPLATES
from security_verifiers.envs.config_audit.generation.templates_tf import TF_TEMPLATES

#: Bases per template used to estimate how often each operator applies.
_APPLICABILITY_SAMPLES = 6


@cache
def operators(platform: str) -> dict[str, Operator]:
    """Rule id -> operator for ``platform`` (built once; operators are stateless)."""
    if platform == "kubernetes":
        ops = kubernetes_operators()
    elif platform == "terraform":
        ops = terraform_operators()
    else:
        raise ValueError(f"unknown platform {platform!r}")
    out = {op.rule_id: op for op in ops}
    if len(out) != len(ops):
        raise ValueError(f"two {platform} operators share a rule id")
    unknown = {rule for op in ops for rule in op.rules} - set(catalog())
    if unknown:
        raise ValueError(f"operators for rules missing from the catalog: {sorted(unknown)}")
    return out


def missing_operators() -> list[str]:
    """``platform:rule`` for every core rule (implemented by our own engines) that has no operator on a platform
    where its engine implements it (should be none). Rules that Checkov alone implements, and the platforms a
    core rule reaches only through mapped Checkov checks, need no operator: the generator covers a chosen part of
    them (:func:`injectable_rules`)."""
    return [f"{p}:{rule.id}" for rule in catalog().values() if rule.engine != "checkov"
            for p in rule.native_platforms if rule.id not in operators(p)]


def injectable_rules(platform: str) -> set[str]:
    """Every rule some operator of ``platform`` injects (its own rule and the rules its edit also violates)."""
    return {rule for op in operators(platform).values() for rule in op.rules}


def seeded(text: str) -> random.Random:
    """A ``random.Random`` seeded from a SHA-256 of ``text`` (never Python's hash, never the global stream)."""
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


@cache
def applicability(platform: str) -> dict[str, float]:
    """Fraction of seeded bases of ``platform`` on which each operator has at least one target."""
    templates = K8S_TEMPLATES if platform == "kubernetes" else TF_TEMPLATES
    bases = [templates[name](seeded(f"applicability:{name}:{i}"))
             for name in sorted(templates) for i in range(_APPLICABILITY_SAMPLES)]
    return {rule: sum(bool(op.targets(b)) for b in bases) / len(bases) for rule, op in operators(platform).items()}


def rule_weight(platform: str, rule_id: str) -> float:
    """Selection weight: rare opportunities are taken more often (floor at 5% applicability)."""
    return 1.0 / max(applicability(platform)[rule_id], 0.05)


def candidates(base: Base, exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """Rule id -> resources of ``base`` the rule's operator can break (only rules with a target)."""
    out = {}
    for rule_id, op in operators(base.platform).items():
        if rule_id in exclude:
            continue
        targets = op.targets(base)
        if targets:
            out[rule_id] = targets
    return out


def mutate(base: Base, k: int, rng: random.Random, usage: Counter[str] | None = None) -> list[dict[str, str]]:
    """Break ``base`` in place with operators of distinct rules until ``k`` (rule, resource) pairs are injected;
    returns the injected ``{"rule_id", "resource"}`` sorted (fewer than ``k`` only if the base offers no more).

    ``k`` counts pairs, not operators: an operator whose edit also violates other rules (``Operator.also``, and
    ``Operator.spillover`` on other resources) brings those pairs too, so it is tried on a copy first and taken
    only if its new pairs fit in what is left of ``k`` (then applied to ``base`` with the same random stream).
    ``usage`` counts how often each rule was injected so far in the dataset being built (updated here):
    a rule's weight is divided by ``(1 + usage)**2``, which spreads a dataset over all rules instead of
    letting the rules that apply everywhere crowd out the rest; it is multiplied by the number of rules the
    operator injects on its resource, because such an operator fits in fewer items (those with room left)."""
    injected: set[tuple[str, str]] = set()
    used: set[str] = set()
    too_big: set[str] = set()  # rules whose pairs did not fit in what was left of k
    counts: Counter[str] = usage if usage is not None else Counter()
    while len(injected) < k:
        options = candidates(base, used | too_big)
        if not options:
            break
        rules = sorted(options)
        weights = [rule_weight(base.platform, r) * len(operators(base.platform)[r].rules) / (1 + counts[r]) ** 2
                   for r in rules]
        rule_id = rng.choices(rules, weights)[0]
        resource = rng.choice(options[rule_id])
        operator = operators(base.platform)[rule_id]
        stream = rng.getrandbits(64)
        trial = base.copy()
        operator.apply(trial, resource, random.Random(stream))
        pairs = set(operator.injected(trial, resource))
        if len(injected | pairs) > k:
            too_big.add(rule_id)
            continue
        operator.apply(base, resource, random.Random(stream))
        injected |= pairs
        used.update(rule for rule, _ in pairs)
        counts[rule_id] += 1
    return [{"rule_id": rule, "resource": where} for rule, where in sorted(injected)]
