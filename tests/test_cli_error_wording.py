"""`sv eval` flag errors in our own words: one line naming the flag, the value and what it takes (the valid keys of
an environment's options, the choices, the bounds), never pydantic's wording ("Extra inputs are not permitted",
"Input should be …", errors.pydantic.dev)."""

from __future__ import annotations

import pytest

from security_verifiers.cli import main

NL_KEYS = "valid keys: costs, decision_weight, brier_weight, window, prompt_style"
PYDANTIC_WORDS = ("pydantic", "Input should", "Extra inputs", "Field required", "String should")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        # an unknown key: the environment's keys, from its config class
        (["--env-option", "foo=1"], f"--env-option: unknown key 'foo' for network-logs; {NL_KEYS}"),
        # an unknown key of a nested option: that option's keys
        (["--env-option", 'costs={"foo": 1}'],
         "--env-option costs: unknown key 'foo'; valid keys: missed, false_alarm, abstain"),
        # a value that is not JSON is read as text, which the field does not take
        (["--env-option", "window={bad"],
         "--env-option window: expected a whole number, got the text '{bad' (not JSON)"),
        (["--env-option", "window=1.5"], "--env-option window: expected a whole number, got 1.5"),
        (["--env-option", "window=-1"], "--env-option window: must be at least 0, got -1"),
        (["--env-option", "costs=[1]"], "--env-option costs: expected a JSON object, got [1]"),
        (["--env-option", 'costs={"missed": "x"}'], "--env-option costs.missed: expected a number, got the text 'x'"),
        (["--env-option", "prompt_style=tiny"],
         "--env-option prompt_style: must be 'full' or 'compact', got the text 'tiny'"),
        # a validator's own words are kept, without pydantic's "Value error, " in front
        (["--env-option", "decision_weight=0.9"],
         "--env-option: decision_weight + brier_weight must equal 1 so the reward stays in [0, 1]"),
        # flags derived from the endpoint, sampling and run configs
        (["--temperature", "5"], "--temperature: must be at most 2.0, got 5.0"),
        (["--top-p", "0"], "--top-p: must be above 0.0, got 0.0"),
        (["--api-key-env", "1x"], "--api-key-env: must match ^[A-Za-z_][A-Za-z0-9_]*$, got the text '1x'"),
        (["--max-reply-bytes", "0"], "--max-reply-bytes: must be above 0, got 0"),
    ],
)
def test_flag_errors_are_one_line_in_our_words(flags: list[str], expected: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "network-logs", "--model", "baseline:heuristic", "--n", "1", "--quiet", *flags])
    err = capsys.readouterr().err
    assert code != 0
    assert err.count("\n") == 1, err
    assert err == f"sv: error: {expected}\n"
    assert not any(words in err for words in PYDANTIC_WORDS), err


def test_every_problem_is_on_the_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "network-logs", "--model", "baseline:heuristic", "--quiet", "--env-option", "foo=1",
                 "--env-option", "window=x"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1
    assert "unknown key 'foo'" in err and "--env-option window: expected a whole number" in err
