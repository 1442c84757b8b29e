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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an object nested in a malformed fragment is still found (the reader resumes inside the fragment)
        ('{"reason": "x" {"label": "a", "p": 0.1}', {"label": "a", "p": 0.1}),
        ('{"note": "see {"label": "a", "p": 0.1}', {"label": "a", "p": 0.1}),
        # a long answer is read whole, whatever the decode window
        ('{"label": "' + "a" * 5000 + '", "p": 0.5}', {"label": "a" * 5000, "p": 0.5}),
        ('{"k": "' + "{" * 3000 + '"} {"label": "a", "p": 0.1}', {"label": "a", "p": 0.1}),
        # braces that can never start an object are skipped
        ('{{{ {x} {"label": "a", "p": 0.1} }}}', {"label": "a", "p": 0.1}),
    ],
)
def test_objects_in_broken_text(text: str, expected: dict) -> None:
    assert final_json_object(text) == expected


#: Replies built to make a naive scanner quadratic (each reached 10 s or more at 200,000 characters before).
ADVERSARIAL = {
    "open brace per line": lambda n: "{\n" * (n // 2),
    "keys without values": lambda n: '{"' * (n // 2),
    "key, colon, again": lambda n: '{"k":' * (n // 5),
    "unterminated string of braces": lambda n: '{"k":"' + "{" * n,
    "string then garbage": lambda n: ('{"a":"' + "b" * 50 + '" x ') * (n // 60),
    "long valid prefixes": lambda n: ('{"a":[' + "1," * 40 + "x") * (n // 90),
    "deep nesting": lambda n: '{"a":' * (n // 5) + "1" + "}" * (n // 5),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_reply_scanning_is_linear(name: str) -> None:
    """Work is counted, not timed: the characters handed to the decoder per character of reply stay bounded as
    the reply grows from 25,000 to 200,000 characters (a quadratic scan grows that ratio with the size)."""
    from security_verifiers.core.parsing import ScanStats, scan_json_objects

    ratios = []
    for size in (25_000, 50_000, 100_000, 200_000):
        body = ADVERSARIAL[name](size)
        stats = ScanStats()
        try:
            scan_json_objects(body, stats)
        except Exception as err:  # noqa: BLE001 - deep nesting ends the scan: what it read so far still counts
            assert type(err).__name__ == "_TooDeep"
        ratios.append(stats.chars / len(body))
        assert stats.attempts <= len(body)
    assert max(ratios) <= 8.0, ratios
    assert isinstance(final_json_object(ADVERSARIAL[name](200_000)), ParseFailure)
