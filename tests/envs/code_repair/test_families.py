"""Every family's generator self-check: for each variant and a few seeds, the vulnerable program works and is
exploited, the reference fix works and blocks every exploit, and bandit sees the weakness where it can.

The probes run in a random order on every run, so running each program twice also catches a probe that depends
on what another left behind."""

from __future__ import annotations

import random

import pytest

from security_verifiers.envs.code_repair.families import families
from security_verifiers.envs.code_repair.program import MAX_LINES, MIN_LINES
from security_verifiers.envs.code_repair.selfcheck import self_check

SEEDS = (0, 1, 2)
CASES = [(name, variant) for name, family in families().items() for variant in family.all_variants]


@pytest.mark.parametrize(("family", "variant"), CASES, ids=[f"{f}-{v}" for f, v in CASES])
def test_self_check(family: str, variant: str) -> None:
    build = families()[family].build
    programs = [build(random.Random(seed), variant) for seed in SEEDS for _ in range(2)]
    for program, result in zip(programs, self_check(programs), strict=True):
        assert result.ok, (program.variant, result.problems)
        assert program.family == family and program.variant == variant
        assert program.cwe == families()[family].cwe
        assert MIN_LINES <= program.lines() <= MAX_LINES


@pytest.mark.parametrize(("family", "variant"), CASES, ids=[f"{f}-{v}" for f, v in CASES])
def test_deterministic_and_varied(family: str, variant: str) -> None:
    build = families()[family].build
    assert build(random.Random(5), variant) == build(random.Random(5), variant)
    assert len({build(random.Random(seed), variant).model_dump_json() for seed in range(6)}) >= 3


def test_at_least_one_ood_variant_per_family() -> None:
    for family in families().values():
        assert family.ood_variants and family.variants
        assert not set(family.variants) & set(family.ood_variants)
