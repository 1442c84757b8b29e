"""Completion budgets are measured against the teacher's answers in the run's tokenizer, and a run whose budget
would cut more than 5% of them is refused before any training, with the numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from security_verifiers.cli import main
from security_verifiers.core.errors import ConfigError
from security_verifiers.train.budget import check_budgets
from tests.train.test_pipeline import SMOKE

LENGTHS = [10] * 90 + [20] * 6 + [40] * 4  # 100 answers: 6% longer than 10, 4% longer than 20


def test_a_budget_that_keeps_95_percent_passes_and_the_lengths_are_summarised() -> None:
    summary = check_budgets(LENGTHS, {"eval.max_tokens": 20, "grpo.max_completion_length": 40}, where="w",
                            teacher="t")
    assert (summary.answers, summary.median, summary.p95, summary.max) == (100, 10, 20, 40)
    assert summary.cut == {"eval.max_tokens": pytest.approx(0.04), "grpo.max_completion_length": 0.0}


def test_a_budget_that_cuts_more_is_refused_with_the_numbers_and_what_fits() -> None:
    with pytest.raises(ConfigError) as err:
        check_budgets(LENGTHS, {"eval.max_tokens": 40, "grpo.max_completion_length": 10}, where="preset 'p' on e",
                      teacher="baseline:heuristic")
    message = str(err.value)
    assert "preset 'p' on e" in message and "grpo.max_completion_length = 10 tokens cuts 10%" in message
    assert "eval.max_tokens" not in message.split(".", 1)[0]  # only the budget that cuts too much is named
    assert "baseline:heuristic" in message and "at least 20" in message


def test_no_answers_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no teacher answers"):
        check_budgets([], {"eval.max_tokens": 8}, where="w", teacher="t")


def test_sv_train_refuses_a_budget_too_short_for_the_answers_before_training(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "short.yaml"
    config.write_text(yaml.safe_dump({**SMOKE, "grpo": {**SMOKE["grpo"], "max_completion_length": 4}}))
    code = main(["train", "grpo", "--env", "network-logs", "--config", str(config), "--out", str(tmp_path),
                 "--run-id", "short"])
    assert code == 2
    err = capsys.readouterr().err
    assert "grpo.max_completion_length = 4 tokens cuts 100%" in err and "eval.max_tokens" not in err
    assert not (tmp_path / "short" / "sft").exists()  # refused before SFT
