"""E3's program templates (``families/templates/<family>/<variant>/<file>.py``, see ``families/kit.py``) are real
Python, and each family fills exactly the placeholders of the files it names: a placeholder no value fills, a value
no placeholder takes, a template nothing uses or a call naming a file that is not there fails here, before any
program is built. The probes a family declares and the ``probe_<id>`` functions of its test module are one set."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest

from security_verifiers.envs.code_repair.families import MODULES, families
from security_verifiers.envs.code_repair.families.kit import TEMPLATE_DIR, Templates, placeholders

FAMILY_DIR = TEMPLATE_DIR.parent
TEMPLATE_FILES = sorted(path for path in TEMPLATE_DIR.glob("*/*/*.py"))


def _render_calls(module: str) -> dict[str, set[str]]:
    """The template each ``TEMPLATES.render`` call of a family module names, with the values it passes."""
    tree = ast.parse((FAMILY_DIR / f"{module}.py").read_text(encoding="utf-8"))
    calls: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "render"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "TEMPLATES"):
            (name,) = node.args
            assert isinstance(name, ast.Constant) and isinstance(name.value, str), f"{module}:{node.lineno}"
            keywords = {k.arg for k in node.keywords}
            assert None not in keywords, f"{module}:{node.lineno} passes **values: name each one"
            calls.setdefault(f"{module}/{name.value}", set()).update(k for k in keywords if k)
    return calls


CALLS = {name: values for module in MODULES for name, values in _render_calls(module).items()}


def test_there_are_templates() -> None:
    assert TEMPLATE_FILES and CALLS


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=[str(p.relative_to(TEMPLATE_DIR)) for p in TEMPLATE_FILES])
def test_every_template_parses_as_python(path: Path) -> None:
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_every_template_is_used_and_every_used_one_exists() -> None:
    on_disk = {str(path.relative_to(TEMPLATE_DIR)) for path in TEMPLATE_FILES}
    assert on_disk - set(CALLS) == set(), "template files no family renders"
    assert set(CALLS) - on_disk == set(), "templates a family renders that are not there"


def test_each_call_supplies_exactly_the_placeholders_of_its_template() -> None:
    wrong = {}
    for name, values in CALLS.items():
        wanted = placeholders((TEMPLATE_DIR / name).read_text(encoding="utf-8"))
        if wanted != values:
            wrong[name] = {"unfilled": sorted(wanted - values), "unused": sorted(values - wanted)}
    assert not wrong


def test_render_fills_every_placeholder_and_refuses_a_missing_or_unused_value() -> None:
    templates = Templates("security_verifiers.envs.code_repair.families.command_injection")
    name = "checksum/source.py"
    text = templates.render(name, pkg="acme_uploads")
    assert "from acme_uploads import ledger" in text and "T_" not in text
    with pytest.raises(KeyError, match="pkg"):
        templates.render(name)
    with pytest.raises(ValueError, match="org"):
        templates.render(name, pkg="acme_uploads", org="acme")


CASES = [(name, variant) for name, family in families().items() for variant in family.all_variants]


@pytest.mark.parametrize(("family", "variant"), CASES, ids=[f"{f}-{v}" for f, v in CASES])
def test_declared_probes_are_the_test_modules_probes(family: str, variant: str) -> None:
    for seed in range(3):
        program = families()[family].build(random.Random(seed), variant)
        defined = set(re.findall(r"^def probe_([a-z0-9_]+)\(", program.tests, re.M))
        assert defined == {probe.id for probe in program.probes}
