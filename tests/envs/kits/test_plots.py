"""The shared plot pieces (envs/kits/plots.py) and the two reports that draw a patch funnel with them."""

from __future__ import annotations

from pathlib import Path

from security_verifiers.envs.code_repair.plots import code_repair_plots
from security_verifiers.envs.kits.plots import funnel_figure, save_figure


def test_a_funnel_labels_each_stage_with_its_count(tmp_path: Path) -> None:
    fig = funnel_figure([("sent", 10), ("applied", 7), ("fixed", 3)], "items")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["10", "7", "3"] and ax.get_ylabel() == "items"
    assert ax.get_xlabel() and ax.get_title() == "Patch funnel"
    assert save_figure(fig, tmp_path / "f.png").stat().st_size > 0


def test_an_empty_funnel_still_draws() -> None:
    assert funnel_figure([], "rollouts").axes[0].get_ylim()[1] > 0


def test_code_repairs_plots_are_written(tmp_path: Path) -> None:
    base = {"family": "sql_injection", "variant": "v", "cwe": "CWE-89", "split": "test", "valid": True,
            "reward": 1.0, "reference_lines": 3}
    outcomes = [{**base, "patch_present": True, "patch_applied": True, "exploit_blocked": True, "repaired": True},
                {**base, "cwe": "CWE-22", "reward": 0.0}]
    written = code_repair_plots(outcomes, tmp_path)
    assert [p.name for p in written] == ["repair_by_cwe.png", "patch_funnel.png"]
    assert all(p.stat().st_size > 0 for p in written)
