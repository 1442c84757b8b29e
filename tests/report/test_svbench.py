"""SVBENCH.md is what the code specifies now: any change of a version, a set, a commitment, a weight, an engine's
version or a recorded baseline score must regenerate it in the same change."""

from __future__ import annotations

from pathlib import Path

from security_verifiers.cli import main
from security_verifiers.report.svbench import render

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_spec_is_the_one_the_code_writes() -> None:
    committed = (ROOT / "SVBENCH.md").read_text(encoding="utf-8")
    assert committed == render(), "SVBENCH.md is out of date: run `sv spec` and commit it"


def test_spec_check_fails_on_a_stale_file(tmp_path: Path, capsys) -> None:
    stale = tmp_path / "SVBENCH.md"
    stale.write_text(render().replace("## phishing ", "## phishing 0.0.0 was "), encoding="utf-8")
    assert main(["spec", "--out", str(stale), "--check"]) == 1
    assert "differs from what the code specifies" in capsys.readouterr().err
    assert main(["spec", "--out", str(stale)]) == 0 and main(["spec", "--out", str(stale), "--check"]) == 0


def test_the_spec_names_every_environment_its_sets_and_its_reward() -> None:
    text = render()
    from security_verifiers.envs.base import registry

    for name, cls in registry().items():
        env = cls()
        assert f"## {name} {env.version}" in text
        for entry in env.public_sets().sizes:
            assert f"| {entry} |" in text
    assert text.count("**Reward.**") == len(registry()) and "| none |" not in text


def test_every_headline_metric_is_defined() -> None:
    from security_verifiers.envs.base import registry

    for name, cls in registry().items():
        assert sorted(cls.metric_definitions) == sorted(m for m, _ in cls.headline_metrics), name
        assert all(text.strip() and "|" not in text for text in cls.metric_definitions.values()), name
