"""The one answer grammar: final JSON object after any <think> block; never raises on bad text."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from security_verifiers.core.parsing import Parsed, ParseFailure, final_json_object, parse_answer, strip_thinking
from security_verifiers.core.types import ParseStatus


class Toy(BaseModel):
    label: str
    p: float


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"label": "a", "p": 0.1}', {"label": "a", "p": 0.1}),  # bare object
        ('```json\n{"label": "a", "p": 0.1}\n```', {"label": "a", "p": 0.1}),  # fenced
        ('first {"label": "a", "p": 0.1} then {"label": "b", "p": 0.2}', {"label": "b", "p": 0.2}),  # last wins
        ('<think>{"label": "x", "p": 1}</think>{"label": "b", "p": 0.2}', {"label": "b", "p": 0.2}),  # think ignored
        ('{"label": "a", "p": 0.1} trailing {broken', {"label": "a", "p": 0.1}),  # broken tail ignored
        ('{"outer": {"inner": 1}}', {"outer": {"inner": 1}}),  # nested object is one object
    ],
)
def test_final_json_object_reads_the_last_complete_object(text: str, expected: dict) -> None:
    assert final_json_object(text) == expected


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("", ParseStatus.EMPTY),  # nothing at all
        ("   \n ", ParseStatus.EMPTY),  # whitespace only
        ('<think>{"label": "a", "p": 0.1}</think>', ParseStatus.EMPTY),  # answer only inside thinking
        ('<think>unclosed {"label": "a", "p": 0.1}', ParseStatus.EMPTY),  # unclosed think hides the rest
        ("Malicious", ParseStatus.NO_JSON),  # prose answer
        ('{"label": "a", p: 0.1}', ParseStatus.INVALID_JSON),  # unquoted key
        ("[1, 2]", ParseStatus.NOT_OBJECT),  # array, not object
        ('"just a string"', ParseStatus.NOT_OBJECT),  # JSON string
    ],
)
def test_failures_are_typed(text: str, status: ParseStatus) -> None:
    result = final_json_object(text)
    assert isinstance(result, ParseFailure)
    assert result.status == status


def test_schema_violations_are_schema_failures() -> None:
    result = parse_answer('{"label": "a"}', Toy)
    assert isinstance(result, ParseFailure) and result.status == ParseStatus.SCHEMA
    assert "p" in result.message


def test_valid_answer_is_parsed() -> None:
    result = parse_answer('ok: {"label": "a", "p": 0.25}', Toy)
    assert isinstance(result, Parsed) and result.value == Toy(label="a", p=0.25)


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_fuzz_arbitrary_text_never_raises(text: str) -> None:
    result = parse_answer(text, Toy)
    assert isinstance(result, Parsed | ParseFailure)


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values, st.integers(min_value=0, max_value=40), st.text(max_size=10))
def test_fuzz_malformed_json_never_raises(value: object, cut: int, noise: str) -> None:
    text = json.dumps(value)
    mangled = text[: max(0, len(text) - cut)] + noise  # truncated and noisy JSON
    result = parse_answer(mangled, Toy)
    assert isinstance(result, Parsed | ParseFailure)
    if isinstance(result, ParseFailure):
        assert result.status in set(ParseStatus) - {ParseStatus.OK}


def test_deeply_nested_input_is_a_failure_not_a_crash() -> None:
    text = "{" * 100_000
    assert isinstance(parse_answer(text, Toy), ParseFailure)
    assert isinstance(parse_answer('{"a":' * 5000 + "1" + "}" * 5000, Toy), ParseFailure)


def _strip_thinking_by_regex(text: str) -> str:
    """The definition strip_thinking implements in one pass (these regexes are quadratic on many open tags)."""
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL | re.IGNORECASE)
    return re.sub(r"<think>.*\Z", "", text, flags=re.DOTALL | re.IGNORECASE)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["<think>", "</think>", "<THINK>", "</Think>", "x", "{", "\n", "<think", "é"]),
                max_size=30))
def test_strip_thinking_matches_its_regex_definition(parts: list[str]) -> None:
    text = "".join(parts)
    assert strip_thinking(text) == _strip_thinking_by_regex(text)


def test_many_unclosed_think_tags_are_an_ordinary_failure() -> None:
    # 200,000 characters of open tags: the regex definition needs ~26 s, the one-pass version milliseconds.
    result = parse_answer("<think>" * 28_000 + '{"label": "a", "p": 0.5}', Toy)
    assert isinstance(result, ParseFailure) and result.status == ParseStatus.EMPTY
