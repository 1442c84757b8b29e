"""``sv train ablation``: variants over seeds from one SFT start per seed, equal budget, resumable, summarised."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from security_verifiers.cli import main
from security_verifiers.core.errors import ConfigError
from security_verifiers.train.ablation import _t_interval, parse_variants, summarise
from tests.train.test_pipeline import SMOKE

PRESET = {**SMOKE, "grpo": {**SMOKE["grpo"], "steps": 1}}


def _argv(config: Path, out: Path) -> list[str]:
    return ["train", "ablation", "--env", "network-logs", "--config", str(config), "--variants", "grpo,gdpo",
            "--seeds", "2", "--out", str(out)]


@pytest.fixture(scope="module")
def ablation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ablation")
    config = tmp / "smoke.yaml"
    config.write_text(yaml.safe_dump(PRESET))
    assert main(_argv(config, tmp / "a")) == 0
    return tmp / "a"


def test_every_variant_and_seed_ran_from_its_seeds_sft_start(ablation: Path) -> None:
    runs = sorted(p.name for p in (ablation / "runs").iterdir())
    assert runs == ["gdpo-s0", "gdpo-s1", "grpo-s0", "grpo-s1", "sft-s0", "sft-s1"]
    for variant in ("grpo", "gdpo"):
        for seed in (0, 1):
            manifest = json.loads((ablation / "runs" / f"{variant}-s{seed}" / "manifest.json").read_text())
            start = json.loads((ablation / "runs" / f"sft-s{seed}" / "manifest.json").read_text())
            assert manifest["sft_from"]["model"] == start["final_model"]
            assert manifest["seed"] == seed and manifest["status"] == "finished"
            before = ablation / "runs" / f"{variant}-s{seed}" / "eval" / "before" / "results.jsonl"
            assert before.read_bytes() == (ablation / "runs" / f"sft-s{seed}" / "eval" / "after" /
                                           "results.jsonl").read_bytes()


def test_the_summary_has_each_variant_the_pairs_and_budget_parity(ablation: Path) -> None:
    result = json.loads((ablation / "ablation.json").read_text())
    assert list(result["variants"]) == ["sft", "grpo", "gdpo"]
    cell = result["variants"]["grpo"]["metrics"]["reward_mean"]
    runs = [json.loads((ablation / "runs" / f"grpo-s{s}" / "summary.json").read_text()) for s in (0, 1)]
    assert cell["values"] == [r["metrics"]["reward_mean"]["b"] for r in runs]
    assert cell["ci"][0] <= cell["mean"] <= cell["ci"][1]
    pair = result["pairs"]["gdpo - grpo"]["reward_mean"]
    gdpo = [json.loads((ablation / "runs" / f"gdpo-s{s}" / "summary.json").read_text()) for s in (0, 1)]
    assert pair["mean"] == pytest.approx(sum(g["metrics"]["reward_mean"]["b"] - r["metrics"]["reward_mean"]["b"]
                                             for g, r in zip(gdpo, runs, strict=True)) / 2)
    assert result["budget"]["parity"] is True and len(result["budget"]["runs"]) == 4
    assert {r["completions_scored"] for r in result["budget"]["runs"]} == {1 * 2 * 2}
    assert "collapsed_groups" in result["variants"]["gdpo"]["stability"]
    text = (ablation / "ablation.md").read_text()
    assert "| gdpo - grpo |" in text and "Parity across RL runs" in text and "**True**" in text
    for png in ("heldout.png", "curves.png"):
        assert (ablation / png).read_bytes()[:4] == b"\x89PNG"


def test_a_rerun_keeps_finished_runs_and_redoes_an_interrupted_one(ablation: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "a"
    shutil.copytree(ablation, copy)
    manifest = copy / "runs" / "gdpo-s1" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "status": "running"}))
    kept = (copy / "runs" / "grpo-s0" / "manifest.json").read_text()
    config = tmp_path / "smoke.yaml"
    config.write_text(yaml.safe_dump(PRESET))
    assert main(_argv(config, copy)) == 0
    out = capsys.readouterr().out
    assert "grpo-s0: finished earlier, kept" in out and "gdpo-s1: interrupted earlier, removed and redone" in out
    assert (copy / "runs" / "grpo-s0" / "manifest.json").read_text() == kept
    assert json.loads(manifest.read_text())["status"] == "finished"


def test_another_plan_in_the_same_directory_is_refused(ablation: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "other.yaml"
    config.write_text(yaml.safe_dump({**PRESET, "grpo": {**PRESET["grpo"], "steps": 2}}))
    assert main(_argv(config, ablation)) == 2
    assert "holds an ablation with other settings (preset)" in capsys.readouterr().err


def test_an_rl_run_refuses_an_sft_start_of_other_settings(ablation: Path, tmp_path: Path) -> None:
    from security_verifiers.train.pipeline import train
    from security_verifiers.train.presets import TrainPreset

    other = TrainPreset.model_validate({**PRESET, "sft": {**PRESET["sft"], "epochs": 2}})
    with pytest.raises(ConfigError, match="preset.sft: differs"):
        train("grpo", "network-logs", other, seed=0, out=tmp_path, run_id="x", sft_run=ablation / "runs" / "sft-s0")
    with pytest.raises(ConfigError, match="seed: 0 != 1"):
        train("grpo", "network-logs", TrainPreset.model_validate(PRESET), seed=1, out=tmp_path, run_id="y",
              sft_run=ablation / "runs" / "sft-s0")


def test_summarise_rebuilds_the_same_tables_from_disk(ablation: Path) -> None:
    before = (ablation / "ablation.json").read_text()
    summarise(ablation)
    assert (ablation / "ablation.json").read_text() == before


def test_variants_and_intervals() -> None:
    assert parse_variants("grpo, distill") == ["grpo", "distill"]
    for bad in ("", "grpo,ppo", "grpo,grpo"):
        with pytest.raises(ConfigError):
            parse_variants(bad)
    mean, sd, ci = _t_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and sd == 1.0 and ci is not None
    assert ci[1] - 2.0 == pytest.approx(4.302653 / 3**0.5, rel=1e-5)  # t(0.975, 2) · sd / √n
    assert _t_interval([0.5]) == (0.5, 0.0, None)


@pytest.mark.parametrize("argv, message", [
    (["--seed", "1"], "no --seed or --run-id"),
    (["--variants", "ppo"], "unknown ppo"),
    (["--seeds", "0"], "at least 1"),
])
def test_bad_ablation_arguments_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    argv: list[str], message: str) -> None:
    config = tmp_path / "smoke.yaml"
    config.write_text(yaml.safe_dump(PRESET))
    base = ["train", "ablation", "--env", "network-logs", "--config", str(config), "--out", str(tmp_path / "o")]
    assert main([*base, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_variants_belong_to_ablation_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "grpo", "--env", "network-logs", "--preset", "tiny-cpu", "--seeds", "3"]) == 2
    assert "belong to sv train ablation" in capsys.readouterr().err
