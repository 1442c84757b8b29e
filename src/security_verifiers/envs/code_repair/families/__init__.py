"""The task families of E3: one module per weakness, each with several program variants in several domains.

A family is a :class:`Family`: its CWE, its variants (the out-of-distribution split holds the ``ood_variants``,
never seen in train, dev or test) and ``build(rng, variant)``, which writes one :class:`Program` from the random
stream: the vulnerable modules, the reference fix, the hidden test module with its probes and fixtures, and
where the weakness is. Names, data and details vary with ``rng`` so that no two items of a variant read alike.

Adding a family: write a module here with a ``FAMILY`` (``VARIANTS.family(...)``, its variants registered one line
each by :class:`Variants`) and list it in :data:`MODULES`, and its programs as template
files under ``templates/<family>/<variant>/`` (``kit.Templates``: real Python with ``T_name_T`` placeholders); its
test in ``tests/envs/code_repair/test_families.py`` runs the generator's self-check on every variant, and
``test_templates.py`` checks its templates parse and get exactly the values they name.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from security_verifiers.envs.code_repair.program import Program

#: What writes one program of a variant from the random stream.
Builder = Callable[[random.Random], Program]


@dataclass(frozen=True)
class Family:
    name: str
    cwe: str
    title: str
    variants: tuple[str, ...]
    ood_variants: tuple[str, ...]
    build: Callable[[random.Random, str], Program]

    @property
    def all_variants(self) -> tuple[str, ...]:
        return self.variants + self.ood_variants


class Variants:
    """A family's variants, each registered by the one line above its builder: ``@VARIANTS.add()``, or
    ``@VARIANTS.add(ood=True)`` for one the out-of-distribution split holds. A variant is named for its builder
    less the leading underscore (``_log_search`` is ``log_search``), and the variants keep the order their builders
    are defined in, which is the order the generator draws them by."""

    def __init__(self) -> None:
        self._builders: dict[str, Builder] = {}
        self._ood: set[str] = set()

    def add(self, *, ood: bool = False) -> Callable[[Builder], Builder]:
        def register(builder: Builder) -> Builder:
            name = builder.__name__.lstrip("_")
            if name in self._builders:
                raise ValueError(f"variant {name!r} registered twice")
            self._builders[name] = builder
            if ood:
                self._ood.add(name)
            return builder

        return register

    def build(self, rng: random.Random, variant: str) -> Program:
        return self._builders[variant](rng)

    def family(self, *, name: str, cwe: str, title: str) -> Family:
        """The family of these variants (every one registered by now: call it below the last builder)."""
        return Family(name=name, cwe=cwe, title=title,
                      variants=tuple(v for v in self._builders if v not in self._ood),
                      ood_variants=tuple(v for v in self._builders if v in self._ood), build=self.build)


#: The family modules, in the order they are listed.
MODULES = (
    "command_injection",
    "sql_injection",
    "path_traversal",
    "archive_extraction",
    "unsafe_deserialization",
    "ssrf",
    "open_redirect",
    "missing_authorization",
    "hardcoded_credentials",
    "weak_password_hash",
    "predictable_token",
    "timing_unsafe_comparison",
    "code_injection",
    "xss",
    "xxe",
    "redos",
)


@cache
def families() -> dict[str, Family]:
    """Every family by name."""
    out: dict[str, Family] = {}
    for module in MODULES:
        family: Family = importlib.import_module(f"{__name__}.{module}").FAMILY
        if family.name in out:
            raise ValueError(f"family {family.name!r} defined twice")
        out[family.name] = family
    return out
