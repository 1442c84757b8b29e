"""Presets load, validate, and refuse what they do not know."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from security_verifiers.cli import main
from security_verifiers.core.errors import ConfigError
from security_verifiers.train.presets import PRESET_DIR, load_preset, preset_names


@pytest.mark.parametrize("name", ["tiny-cpu", "lora-gpu"])
def test_shipped_presets_load(name: str) -> None:
    preset = load_preset(name)
    assert preset.name == name and name in preset_names()


def test_the_gpu_preset_uses_lora_on_the_tiny_models_architecture() -> None:
    gpu, tiny = load_preset("lora-gpu"), load_preset("tiny-cpu")
    assert gpu.model.kind == "hf" and gpu.model.lora is not None and gpu.model.dtype == "bfloat16"
    assert tiny.model.kind == "tiny" and "Qwen3" in (gpu.model.source or "")


def _write(tmp_path: Path, change: dict) -> Path:
    raw = yaml.safe_load((PRESET_DIR / "tiny-cpu.yaml").read_text())
    for dotted, value in change.items():
        *parents, last = dotted.split(".")
        node = raw
        for key in parents:
            node = node[key]
        node[last] = value
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.mark.parametrize(("change", "message"), [
    ({"grpo.stepz": 3}, "grpo.stepz: Extra inputs are not permitted"),
    ({"model.tiny": None}, "a tiny model needs its `tiny` size spec"),
    ({"grpo.num_generations": 1}, "grpo.num_generations"),
    ({"surprise": True}, "surprise: Extra inputs are not permitted"),
])
def test_invalid_presets_are_clear_errors(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_preset(path=_write(tmp_path, change))


def test_preset_selection_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="unknown preset 'huge'; known: lora-gpu, tiny-cpu"):
        load_preset("huge")
    with pytest.raises(ConfigError, match="exactly one"):
        load_preset()
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    assert main(["train", "sft", "--env", "network-logs", "--config", str(bad), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "cannot read the preset" in err and "Traceback" not in err
    assert not any(tmp_path.glob("sft-*"))
    assert main(["train", "sft", "--env", "config-audit", "--preset", "tiny-cpu", "--env-option", "mode=tool",
                 "--out", str(tmp_path)]) == 2  # an option the environment refuses is named before anything runs
    err = capsys.readouterr().err
    assert "--env-option mode" in err and "Traceback" not in err and not any(tmp_path.glob("sft-*"))


def test_environment_overrides_change_only_runs_on_that_environment(tmp_path: Path) -> None:
    preset = load_preset(path=_write(tmp_path, {"env_overrides": {
        "config-audit": {"grpo": {"max_completion_length": 300}, "data": {"train_n": 16}}}}))
    e2, e1 = preset.for_env("config-audit"), preset.for_env("network-logs")
    assert e2.grpo.max_completion_length == 300 and e2.data.train_n == 16
    assert e2.grpo.steps == preset.grpo.steps and e2.sft == preset.sft and e2.env_overrides == {}
    assert e1 == preset


@pytest.mark.parametrize(("override", "message"), [
    ({"grpo": {"max_completion_length": 0}}, "env_overrides.config-audit: grpo.max_completion_length"),
    ({"grpo": {"stepz": 2}}, "env_overrides.config-audit: grpo.stepz: Extra inputs"),
])
def test_invalid_environment_overrides_are_clear_errors(tmp_path: Path, override: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_preset(path=_write(tmp_path, {"env_overrides": {"config-audit": override}}))


@pytest.mark.parametrize("name", ["tiny-cpu", "lora-gpu"])
@pytest.mark.parametrize("env_name", ["network-logs", "phishing", "config-audit", "code-repair", "redteam-attack",
                                      "redteam-defense"])
def test_shipped_presets_name_policies_each_environment_has(name: str, env_name: str) -> None:
    """A preset's SFT targets and distillation teacher, as a run on the environment sees them, exist there."""
    from security_verifiers.envs.base import get_env

    preset = load_preset(name).for_env(env_name)
    env = get_env(env_name, preset.env_options.get(env_name, {}))
    for policy in (preset.sft.targets, preset.distill.teacher):
        if policy.startswith("baseline:"):
            assert policy.removeprefix("baseline:") in env.baselines(), (name, env_name, policy)
