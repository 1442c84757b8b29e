"""summary.json's one example message per error kind: the most frequent, on one line, cut when long."""

from security_verifiers.core.types import ErrorRecord, RolloutRecord
from security_verifiers.report.summary import MAX_EXAMPLE_CHARS, error_examples


def errored(i: int, kind: str, message: str) -> RolloutRecord:
    return RolloutRecord(env="network-logs", env_version="1", item_id=f"i{i}", split="test",
                         error=ErrorRecord(kind=kind, message=message))


def test_each_kind_gets_its_most_frequent_message() -> None:
    records = [errored(0, "provider", "rare"), errored(1, "provider", "often"), errored(2, "provider", "often"),
               errored(3, "timeout", "no reply within 5s")]
    assert error_examples(records) == {"provider": "often", "timeout": "no reply within 5s"}


def test_a_tie_keeps_the_first_message_written() -> None:
    assert error_examples([errored(0, "tool", "first"), errored(1, "tool", "second")]) == {"tool": "first"}


def test_a_multiline_message_becomes_one_line_and_a_long_one_is_cut() -> None:
    examples = error_examples([errored(0, "provider", "a\n  b"), errored(1, "scorer", "x" * 1000)])
    assert examples["provider"] == "a b"
    assert len(examples["scorer"]) == MAX_EXAMPLE_CHARS and examples["scorer"].endswith("…")


def test_no_errors_no_examples() -> None:
    assert error_examples([]) == {}
