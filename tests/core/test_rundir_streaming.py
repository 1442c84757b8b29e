"""Reading a run's results without holding its conversations: slim records, their offsets, lines copied as written."""

from __future__ import annotations

import json
from pathlib import Path

from security_verifiers.core.rundir import (
    RunDir,
    copy_lines,
    latest_positions,
    read_records_at,
    read_results_file,
)
from security_verifiers.core.types import ErrorRecord, Message, RolloutRecord, Transcript


def _record(item: str, reply: str, *, error: bool = False) -> RolloutRecord:
    transcript = Transcript(messages=[Message(role="system", content="S" * 500), Message(role="user", content="U"),
                                      Message(role="assistant", content=reply)], world={"big": "W" * 500})
    if error:
        return RolloutRecord(env="e", env_version="1", item_id=item, split="test", transcript=transcript,
                             error=ErrorRecord(kind="provider", message="503"))
    return RolloutRecord(env="e", env_version="1", item_id=item, split="test", transcript=transcript, reward=0.5,
                         outcome={"y": 1})


def _write(path: Path, records: list[RolloutRecord], spaced: int | None = None) -> None:
    lines = []
    for i, r in enumerate(records):
        text = r.model_dump_json()
        if i == spaced:  # written by another tool: the same record, other spacing
            text = json.dumps(json.loads(text), indent=None, separators=(", ", ": "))
        lines.append(text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_slim_records_keep_everything_but_the_conversation(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    records = [_record("a", "first"), _record("b", "x"), _record("a", "again")]
    _write(path, records)
    slim = read_results_file(path, transcripts=False)
    assert not slim.transcripts and slim.offsets is not None and len(slim.records) == 3
    for light, whole in zip(slim.records, records, strict=True):
        assert [m.content for m in light.transcript.messages] == [whole.transcript.final_text]
        assert light.transcript.world is None
        assert light.model_dump(exclude={"transcript"}) == whole.model_dump(exclude={"transcript"})
    assert latest_positions(slim) == [2, 1]  # the last record of "a", in the place "a" first appeared
    again = list(read_records_at(path, [slim.offsets[p] for p in latest_positions(slim)]))
    assert again == [records[2], records[1]]  # the whole records, conversations included


def test_resume_copies_the_kept_lines_as_they_were_written(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    records = [_record("a", "1"), _record("b", "2", error=True), _record("c", "3")]
    _write(run.results_path, records, spaced=2)
    spaced_line = run.results_path.read_bytes().split(b"\n")[2]
    with run.results_path.open("ab") as fh:
        fh.write(b'{"env": "e", "item_i')  # a run killed mid-write
    kept = run.compact_for_resume()
    assert [r.item_id for r in kept] == ["a", "c"]  # the errored rollout is dropped, to be played again
    assert run.results_path.read_bytes().split(b"\n") == [records[0].model_dump_json().encode(), spaced_line, b""]


def test_copy_lines_joins_files_in_the_order_given(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    _write(one, [_record("a", "1"), _record("b", "2")])
    _write(two, [_record("c", "3")])
    first, second = read_results_file(one).offsets, read_results_file(two).offsets
    assert first is not None and second is not None
    copy_lines([(two, second[0]), (one, first[1]), (one, first[0])], tmp_path / "out.jsonl")
    assert [r.item_id for r in read_results_file(tmp_path / "out.jsonl").records] == ["c", "b", "a"]
