"""Example failures: which rollouts a report shows, chosen from the records alone."""

import pytest

from security_verifiers.core.types import ParseStatus
from security_verifiers.report.failures import ANSWER_CHARS, MAX_EXAMPLES, failure_examples
from tests.report.test_summary import ENV, RIGHT, WRONG, errored, scored

FIELDS = ENV.example_fields


def ids(records) -> list[str]:
    return [e.item_id for e in failure_examples(records, FIELDS)]


def test_the_lowest_reward_comes_first_and_the_best_never() -> None:
    # Rewards: RIGHT 0.997 (the best: not a failure), abstaining 0.857, WRONG 0.108.
    records = [scored(0, "Malicious", RIGHT), scored(1, "Malicious", '{"label": "Abstain", "p_malicious": 0.4}'),
               scored(2, "Malicious", WRONG)]
    examples = failure_examples(records, FIELDS)
    assert [e.item_id for e in examples] == ["nl-2", "nl-1"]
    assert examples[0].outcome == {"family": "x", "difficulty": "easy", "y": 1, "action": "negative", "p": 0.2,
                                   "cost": 10.0}
    assert examples[0].answer == WRONG and examples[0].parse_status == "ok"


def test_unparsed_answers_first_but_at_most_two_while_others_failed() -> None:
    unparsed = [scored(i, "Malicious", f"no idea {i}") for i in range(4)]  # reward 0, four different texts
    wrong = [scored(10 + i, "Malicious", WRONG.replace("0.2", f"0.2{i}")) for i in range(4)]
    examples = failure_examples(unparsed + wrong, FIELDS)
    assert [e.parse_status for e in examples] == ["no_json", "no_json", "ok", "ok", "ok"]
    # With no parsed failure to show, unparsed answers fill the list.
    assert [e.parse_status for e in failure_examples(unparsed, FIELDS)] == ["no_json"] * 4


def test_one_example_per_mistake_with_the_others_counted() -> None:
    # Six items answered the same wrong way, one a different wrong way: two examples, the first counting five more.
    records = [*(scored(i, "Malicious", WRONG) for i in range(6)), scored(9, "Malicious", "?"),
               scored(8, "Benign", RIGHT)]  # a false alarm, the run's best reward: not a failure
    examples = failure_examples(records, FIELDS)
    assert [(e.item_id, e.alike) for e in examples] == [("nl-9", 0), ("nl-0", 5)]


@pytest.mark.parametrize("records", [
    [scored(i, "Malicious", RIGHT) for i in range(3)],  # every rollout earned the same reward: nothing to show
    [errored(0, "provider"), errored(1, "timeout")],  # infrastructure errors are not the model's failures
    [],
])
def test_no_failures(records) -> None:
    assert failure_examples(records, FIELDS) == []


def test_errored_rollouts_are_never_examples_and_the_list_is_capped() -> None:
    records = [errored(100, "provider")] + [scored(i, "Malicious", WRONG.replace("0.2", f"0.{i + 1}"))
                                            for i in range(8)] + [scored(50, "Benign", RIGHT)]
    examples = failure_examples(records, FIELDS)
    assert len(examples) == MAX_EXAMPLES and "nl-100" not in [e.item_id for e in examples]


def test_a_long_answer_is_cut_and_its_length_kept() -> None:
    text = "x" * (ANSWER_CHARS + 50)
    (example,) = failure_examples([scored(0, "Malicious", text), scored(1, "Malicious", RIGHT)], FIELDS)
    assert example.answer == text[:ANSWER_CHARS] and example.answer_chars == ANSWER_CHARS + 50
    assert example.parse_status == ParseStatus.NO_JSON


def test_a_long_outcome_list_is_summarised_with_counts() -> None:
    # claim-everything's outcome holds thousands of false-positive rules; the summary keeps a line of them.
    record = scored(0, "Malicious", WRONG)
    record = record.model_copy(update={"outcome": {**record.outcome, "family": ["r1"] * 3000 + ["r2"] * 5}})
    (example,) = failure_examples([record, scored(1, "Malicious", RIGHT)], ["family"])
    assert example.outcome == {"family": "3005 values: r1 ×3000, r2 ×5"}
