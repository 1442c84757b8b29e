"""`sv rules ENV`: an environment's rule catalog as data (JSON) or a table, with filters; an environment without
a catalog is a one-line error."""

from __future__ import annotations

import json

import pytest

from security_verifiers.cli import main
from security_verifiers.engines.findings import catalog

KEYS = ["id", "title", "severity", "platforms", "resource_types", "engines", "checkov", "reference", "remediation"]


def rules_json(capsys: pytest.CaptureFixture[str], *options: str) -> list[dict]:
    assert main(["rules", "config-audit", "--json", *options]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_is_the_whole_catalog_sorted_by_id(capsys: pytest.CaptureFixture[str]) -> None:
    rows = rules_json(capsys)
    assert [r["id"] for r in rows] == sorted(catalog())
    for row in rows:
        rule = catalog()[row["id"]]
        assert list(row) == KEYS
        assert (row["title"], row["severity"], row["checkov"]) == (rule.title, rule.severity.value, list(rule.checkov))
        # the implementing engine first; checkov after it when Checkov checks are mapped onto the rule
        assert row["engines"][0] == rule.engine
        assert ("checkov" in row["engines"]) == (rule.engine == "checkov" or bool(rule.checkov))
        assert len(row["engines"]) == len(set(row["engines"]))


@pytest.mark.parametrize(("options", "keep"), [
    (["--platform", "terraform"], lambda r: "terraform" in r["platforms"]),
    (["--severity", "critical"], lambda r: r["severity"] == "critical"),
    (["--severity", "high,critical", "--platform", "kubernetes"],
     lambda r: r["severity"] in ("high", "critical") and "kubernetes" in r["platforms"]),
])
def test_filters(options: list[str], keep, capsys: pytest.CaptureFixture[str]) -> None:
    everything = rules_json(capsys)
    kept = rules_json(capsys, *options)
    assert kept == [r for r in everything if keep(r)] and 0 < len(kept) < len(everything)


def test_table_lists_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "config-audit", "--severity", "critical"]) == 0
    out = capsys.readouterr().out
    assert "k8s-privileged-container" in out and "config-audit rules" in out
    assert "k8s-latest-image-tag" not in out  # not critical


@pytest.mark.parametrize(("argv", "message"), [
    (["rules", "network-logs"], "environment network-logs has no rule catalog (environments with one: config-audit)"),
    (["rules", "config-audit", "--severity", "urgent"], "--severity: unknown value(s) urgent"),
    (["rules", "config-audit", "--platform", "helm"], "--platform: unknown value(s) helm"),
    (["rules", "nope"], "unknown environment"),
])
def test_bad_input_is_a_one_line_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
