"""Robustness across two runs (as `sv bench --robust` makes them): the clean items in one run, their rewrites in
another, paired by item; runs of another model or environment config are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import ConfigError
from security_verifiers.report.robustness import render_robustness, robustness


def _run(out: Path, model: str, split: str, limit: int, run_id: str, *extra: str) -> Path:
    assert main(["eval", "network-logs", "--model", model, "--split", split, "--limit", str(limit), "--out", str(out),
                 "--run-id", run_id, "--quiet", *extra]) == 0
    return out / "evals" / f"network-logs--{model.replace(':', '-')}" / run_id


def test_a_robust_run_pairs_with_a_clean_run_of_the_same_model(tmp_path: Path) -> None:
    clean = _run(tmp_path, "baseline:always-malicious", "test", 4, "clean")
    rewritten = _run(tmp_path, "baseline:always-malicious", "robust", 20, "robust")
    result = robustness(rewritten, n_boot=50, clean_run=clean)
    assert len(result["kinds"]) == 5 and all(row["items"] == 4 for row in result["kinds"].values())
    assert all(row["metrics"]["reward_mean"]["delta"] == 0.0 for row in result["kinds"].values())
    with pytest.raises(ConfigError, match="no rewritten items"):
        robustness(clean)
    table = render_robustness([{"policy": "baseline:always-malicious", "robustness": result}])
    assert "| baseline:always-malicious | field_order | 4 |" in table

    other_model = _run(tmp_path, "baseline:always-benign", "test", 4, "other")
    with pytest.raises(ConfigError, match="pairs one model's answers"):
        robustness(rewritten, n_boot=50, clean_run=other_model)
    other_config = _run(tmp_path, "baseline:always-malicious", "test", 4, "cfg", "--env-option", "window=5")
    with pytest.raises(ConfigError, match="different rewards: environment config"):
        robustness(rewritten, n_boot=50, clean_run=other_config)
