"""The template environment passes the whole conformance suite untouched, rebuilds its public split byte for
byte, stays out of the registry unless a test lists it, and its README names the files it has."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.envs._template import TemplateEnvironment
from security_verifiers.envs._template.baselines import probability
from security_verifiers.envs._template.env import DATA_DIR
from security_verifiers.envs.base import registered, registry
from security_verifiers.envs.kits.public_sets import build_public_sets
from security_verifiers.harness.conformance import CHECKS, baseline_rewards

PACKAGE = Path(DATA_DIR).parent


@pytest.mark.parametrize("check", list(CHECKS))
def test_the_template_passes_every_conformance_check(check: str) -> None:
    CHECKS[check](TemplateEnvironment())


def test_the_public_split_rebuilds_byte_for_byte(tmp_path: Path) -> None:
    built = build_public_sets(env := TemplateEnvironment(), tmp_path, baseline_rewards(env))
    for name in ("test.jsonl", "manifest.json", "DATA_CARD.md"):
        assert (tmp_path / name).read_bytes() == (DATA_DIR / name).read_bytes(), name
    rewards = built.card.figures["test"]["rewards"]
    assert rewards["reference"] == 1.0 > rewards["heuristic"] > max(rewards[k] for k in rewards if "always" in k)


def test_the_template_is_listed_only_when_registered(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert "template" not in registry()
    with registered(TemplateEnvironment):
        assert main(["envs", "--json"]) == 0
        assert "template" in {e["name"] for e in json.loads(capsys.readouterr().out)}
        assert main(["data", "build", "template", "--public", "--out", str(tmp_path)]) == 0
        assert json.loads(capsys.readouterr().out)["manifest"]["splits"]["test"]["n"] == 100
        assert (tmp_path / "test.jsonl").read_bytes() == (DATA_DIR / "test.jsonl").read_bytes()
    assert main(["envs", "--json"]) == 0
    assert "template" not in {e["name"] for e in json.loads(capsys.readouterr().out)}


@pytest.mark.parametrize(
    ("line", "p"),
    [
        ("sshd on web-01: 3 failed logins for 1 user name from 10.0.0.5 in 9 s, then a successful login", 0.0),
        ("sshd on web-01: 40 failed logins for 1 user name from 10.0.0.5 in 900 s, no successful login", 0.3),
        ("sshd on web-01: 40 failed logins for 20 user names from 203.0.113.9 in 900 s, no successful login", 1.0),
        ("sshd on web-01: 9 failed logins for 1 user name from 10.0.0.5 in 9 s, then a successful login", 0.3),
        ("something else entirely", 0.5),  # a line it cannot read: no opinion
    ],
)
def test_the_heuristic_reads_the_line(line: str, p: float) -> None:
    assert probability(line) == p


def test_the_readme_names_every_file_of_the_template() -> None:
    readme = (PACKAGE / "README.md").read_text()
    named = set(re.findall(r"^\| `(\w+\.(?:py|md)|data/)` \|", readme, flags=re.M))  # the table of files
    present = {p.name for p in PACKAGE.iterdir() if p.suffix in (".py", ".md") and p.name != "__init__.py"}
    present |= {"data/"}
    assert named == present
    for heading in ("Usage", "Parameters", "Dataset", "Scoring", "Known issues", "Changelog"):
        assert f"\n## {heading}\n" in readme
