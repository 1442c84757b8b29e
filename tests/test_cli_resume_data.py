"""`sv eval --resume` of a run over a `--data` file: the file is named by its absolute path and recognised by its
content hash, so a run started with a relative path resumes from any directory, and a changed file is refused."""

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.rundir import read_records
from tests.helpers import e1_data_file

RUN = Path("evals") / "network-logs--baseline-heuristic" / "r1"


def _killed_run(tmp_path: Path, monkeypatch) -> Path:
    """A run started in ``tmp_path`` with ``--data items.jsonl`` (relative), cut after two rollouts as by a kill."""
    e1_data_file(tmp_path / "items.jsonl", 9)
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--data", "items.jsonl", "--out", "out",
                 "--run-id", "r1", "--quiet"]) == 0
    run_dir = tmp_path / "out" / RUN
    results = run_dir / "results.jsonl"
    results.write_text("".join(r.model_dump_json() + "\n" for r in read_records(results)[:2]))
    return run_dir


def _metadata(run_dir: Path) -> dict:
    return json.loads((run_dir / "metadata.json").read_text())


@pytest.mark.parametrize("resume_from", ["the same directory", "another directory"])
def test_a_run_started_with_a_relative_data_path_resumes(resume_from: str, tmp_path: Path, monkeypatch) -> None:
    run_dir = _killed_run(tmp_path, monkeypatch)
    assert _metadata(run_dir)["dataset"]["source"] == str(tmp_path.resolve() / "items.jsonl")
    if resume_from == "another directory":
        monkeypatch.chdir(tmp_path.parent)
    assert main(["eval", "--resume", "--run-id", "r1", "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert len({r.item_id for r in read_records(run_dir / "results.jsonl")}) == 9
    assert _metadata(run_dir)["status"] == "finished"


def test_the_relative_path_may_be_given_again(tmp_path: Path, monkeypatch) -> None:
    run_dir = _killed_run(tmp_path, monkeypatch)
    assert main(["eval", "--resume", "--run-id", "r1", "--out", "out", "--data", "items.jsonl", "--quiet"]) == 0
    assert len(read_records(run_dir / "results.jsonl")) == 9


def test_a_run_that_stored_the_relative_path_resumes_by_its_data_hash(tmp_path: Path, monkeypatch) -> None:
    run_dir = _killed_run(tmp_path, monkeypatch)
    metadata = _metadata(run_dir)
    metadata["dataset"]["source"] = "items.jsonl"  # as runs written before the path was resolved hold it
    (run_dir / "metadata.json").write_text(json.dumps(metadata))
    monkeypatch.chdir(tmp_path.parent)
    assert main(["eval", "--resume", "--run-id", "r1", "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert len(read_records(run_dir / "results.jsonl")) == 9


def test_a_changed_data_file_is_refused_with_its_hashes(tmp_path: Path, monkeypatch, capsys) -> None:
    run_dir = _killed_run(tmp_path, monkeypatch)
    before = _metadata(run_dir)["dataset"]["hash"]
    e1_data_file(tmp_path / "items.jsonl", 9, mixed=False)  # the same path, other labels
    capsys.readouterr()
    assert main(["eval", "--resume", "--run-id", "r1", "--out", "out", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "cannot resume r1: its dataset" in err and before in err and "start a new run" in err, err
    assert len(read_records(run_dir / "results.jsonl")) == 2  # nothing was played
