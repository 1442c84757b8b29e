"""A tiny end-to-end ``sv train`` (SFT then GRPO, a few steps) writes a complete, reproducible run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from security_verifiers.cli import main

SMOKE = {
    "name": "smoke", "description": "a few steps of each stage",
    "env_options": {"network-logs": {"window": 1}},
    "model": {"kind": "tiny", "tiny": {"vocab_size": 400, "hidden_size": 16, "layers": 1, "heads": 2, "kv_heads": 1,
                                       "intermediate_size": 32, "max_positions": 2048}},
    "data": {"train_split": "train", "train_n": 12, "heldout_split": "test", "heldout_n": 6, "data_seed": 0},
    "sft": {"targets": "baseline:reference", "epochs": 1, "learning_rate": 0.003, "batch_size": 4, "max_length": 2048},
    "grpo": {"steps": 2, "learning_rate": 0.001, "prompts_per_step": 2, "num_generations": 2,
             "max_completion_length": 16, "temperature": 1.0, "beta": 0.0},
    "eval": {"max_tokens": 16, "batch_size": 8},
    "threads": 1,
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("train")
    config = tmp / "smoke.yaml"
    config.write_text(yaml.safe_dump(SMOKE))
    assert main(["train", "gdpo", "--env", "network-logs", "--config", str(config), "--seed", "3",
                 "--out", str(tmp), "--run-id", "r"]) == 0
    return tmp / "r"


def test_the_run_directory_is_complete(run: Path) -> None:
    for name in ("manifest.json", "log.jsonl", "curves.png", "summary.json", "init", "sft/checkpoint",
                 "grpo/checkpoint", "teacher/results.jsonl", "eval/before/report.md", "eval/after/report.md"):
        assert (run / name).exists(), name
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["variant"] == "gdpo" and manifest["seed"] == 3
    assert manifest["env"]["config"]["window"] == 1 and manifest["preset"]["name"] == "smoke"
    assert manifest["data"]["train"]["n"] == 12 and manifest["data"]["heldout"]["hash"].startswith("sha256:")
    assert len(manifest["model"]["weights_sha256"]) == 64 and manifest["device"]["kind"] == "cpu"
    assert manifest["rl_reward_counts"]["scored"] == 2 * 2 * 2  # steps × prompts × generations


def test_every_rl_step_logs_each_component_and_the_masked_errors(run: Path) -> None:
    rows = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert {r["stage"] for r in rows} == {"sft", "grpo:gdpo"}
    steps = [r for r in rows if r["stage"] == "grpo:gdpo" and "reward" in r]
    assert [r["step"] for r in steps] == [1, 2]
    for row in steps:
        for key in ("rewards/decision/mean", "rewards/decision/std", "rewards/calibration/mean",
                    "rewards/total/mean", "frac_reward_zero_std", "completions/mean_length", "loss"):
            assert key in row, key
        assert row["masked_scorer_errors"] == 0 and row["scored"] == 4 and 0 <= row["parse_failure_rate"] <= 1


def test_summary_pairs_before_and_after_and_hf_eval_reproduces_after(run: Path, tmp_path: Path) -> None:
    summary = json.loads((run / "summary.json").read_text())
    assert summary["items"]["shared"] == 6 and summary["a"]["model"].endswith("sft/checkpoint")
    row = summary["metrics"]["reward_mean"]
    assert row["delta"] == pytest.approx(row["b"] - row["a"])
    learned = summary["learned"]  # the floor on the same items, and what the after run answered
    assert learned["items"] == 6 and learned["floor"]["policy"].startswith("always-")
    assert learned["after_vs_floor"]["reward_mean"] == pytest.approx(row["b"])
    assert learned["after"]["n"] == 6 and learned["after"]["contradictions"] is not None
    argv = ["eval", "network-logs", "--model", f"hf:{run / 'grpo' / 'checkpoint'}", "--n", "6", "--max-tokens", "16",
            "--temperature", "0", "--env-option", "window=1", "--out", str(tmp_path), "--run-id", "x", "--quiet"]
    assert main(argv) == 0
    again = json.loads(next((tmp_path / "evals").glob("*/x/summary.json")).read_text())
    after = json.loads((run / "eval" / "after" / "summary.json").read_text())
    assert again["metrics"] == after["metrics"]


def test_the_lora_path_runs_on_a_tiny_model_of_the_gpu_architecture(run: Path, tmp_path: Path) -> None:
    """lora-gpu's code path (an hf checkpoint, LoRA adapters, merged at the end) on CPU with the tiny model."""
    config = {**SMOKE, "model": {"kind": "hf", "source": str(run / "init"),
                                 "lora": {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}},
              "grpo": {**SMOKE["grpo"], "steps": 1}}
    path = tmp_path / "lora.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["train", "grpo", "--env", "network-logs", "--config", str(path), "--out", str(tmp_path),
                 "--run-id", "l"]) == 0
    manifest = json.loads((tmp_path / "l" / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["preset"]["model"]["lora"]["r"] == 4
    final = tmp_path / "l" / "grpo" / "checkpoint"
    assert not (final / "adapter_config.json").exists()  # adapters merged: hf:PATH loads the result alone
    assert manifest["final_model"]["weights_sha256"] != manifest["model"]["weights_sha256"]


#: Smoke runs of the other environments: a short teacher where a long one would make the run slow (the budgets must fit
#: its answers), the reference attacker where its tool calls are short. The multi-turn ones train over whole episodes.
SMOKE_RUNS = {
    "phishing": ({}, "baseline:always-abstain", 64),
    "config-audit-single-turn": ({}, "baseline:empty", 64),
    "redteam-attack": ({}, "baseline:reference", 256),
    "redteam-defense": ({}, "baseline:refuse-all", 64),
    "code-repair": ({"mode": "tools"}, "baseline:noop", 64),
    "config-audit": ({"mode": "tools"}, "baseline:empty", 64),
}


@pytest.mark.parametrize("case", list(SMOKE_RUNS))
def test_every_environment_trains_and_multi_turn_ones_over_whole_episodes(case: str, tmp_path: Path) -> None:
    options, teacher, budget = SMOKE_RUNS[case]
    env_name = case.removesuffix("-single-turn")
    config = {**SMOKE, "env_options": {env_name: options},
              "model": {**SMOKE["model"], "tiny": {**SMOKE["model"]["tiny"], "max_positions": 8192}},
              "data": {**SMOKE["data"], "train_n": 4, "heldout_n": 2, "heldout_split": "dev"},
              "sft": {**SMOKE["sft"], "targets": teacher, "max_length": 8192},
              "grpo": {**SMOKE["grpo"], "steps": 1, "max_completion_length": budget, "max_episode_tokens": 6000},
              "eval": {"max_tokens": budget, "batch_size": 4}}
    path = tmp_path / "mt.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["train", "grpo", "--env", env_name, "--config", str(path), "--out", str(tmp_path),
                 "--run-id", "m"]) == 0
    run = tmp_path / "m"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["env"]["name"] == env_name
    counts = manifest["rl_reward_counts"]  # one step: 2 prompts x 2 episodes, each scored once (or failed)
    # (two episodes of an item that came out the same are scored once)
    assert 1 <= counts["scored"] <= 4 and counts["failed_episodes"] == 0, manifest["rl_scorer_error_examples"]
    rows = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [r["stage"] for r in rows if r["stage"].startswith("grpo")][:1] == ["grpo:grpo"]
    for label in ("before", "after"):
        records = [json.loads(line) for line in (run / "eval" / label / "results.jsonl").read_text().splitlines()]
        assert len(records) == 2 and all(r["error"] is None for r in records)
        assert all(r["transcript"]["messages"][0]["role"] == "system" for r in records)


def test_sft_drop_fields_takes_keys_out_of_each_target_and_refuses_episodes() -> None:
    from security_verifiers.core.errors import ConfigError
    from security_verifiers.core.types import Message
    from security_verifiers.envs.base import get_env
    from security_verifiers.train.pipeline import _targets
    from security_verifiers.train.presets import load_preset

    preset = load_preset("tiny-cpu")
    preset = preset.model_copy(update={"sft": preset.sft.model_copy(update={"drop_fields": ["evidence"]})})
    answer = json.dumps({"label": "Phishing", "p_phishing": 0.93, "evidence": [{"quote": "q", "indicator": "i"}]})
    episodes = [("a", [Message(role="system", content="s"), Message(role="user", content="u"),
                       Message(role="assistant", content=answer)], 0.9),
                ("b", [Message(role="user", content="u"), Message(role="assistant", content="{}")], 0.2)]
    kept = _targets("sft", get_env("phishing"), preset, episodes)
    assert [(i, [m.content for m in ms], r) for i, ms, r in kept] == [
        ("a", ["s", "u", '{"label": "Phishing", "p_phishing": 0.93}'], 0.9), ("b", ["u", "{}"], 0.2)]
    # distill's threshold reads the teacher's reward of its whole answer, before the fields go
    distilled = _targets("distill", get_env("phishing"), preset, episodes)
    assert [i for i, _, _ in distilled] == ["a"]
    with pytest.raises(ConfigError, match="b's target is not a JSON object"):
        _targets("sft", get_env("phishing"), preset, [("b", [Message(role="assistant", content="Phishing")], 0.0)])
    with pytest.raises(ConfigError, match="redteam-attack plays whole episodes"):
        _targets("sft", get_env("redteam-attack"), preset, episodes)


def test_sft_drop_fields_on_a_multi_turn_environment_is_refused_before_the_teacher_plays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = {**SMOKE, "sft": {**SMOKE["sft"], "drop_fields": ["evidence"]}}
    path = tmp_path / "drop.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["train", "sft", "--env", "redteam-attack", "--config", str(path), "--out", str(tmp_path),
                 "--run-id", "d"]) == 2
    assert "sft.drop_fields: redteam-attack plays whole episodes" in capsys.readouterr().err
    assert not (tmp_path / "d" / "teacher").exists()
