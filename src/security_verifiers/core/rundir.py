"""The run directory: ``metadata.json`` (how the run was built) and ``results.jsonl`` (one line per rollout).

Records are appended and flushed as each rollout finishes, so a run killed at any point (even by
SIGKILL) keeps every finished rollout; at worst the last line is cut short, and the reader drops
such a line. Resuming compacts the file first (drops cut lines, errored rollouts that will be
retried, and duplicates), so every (item, sample) ends with exactly one line.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.types import RolloutRecord

METADATA_SCHEMA_VERSION = 1
_TRACKED_PACKAGES = ("security-verifiers", "pydantic", "numpy", "scipy", "scikit-learn", "openai", "matplotlib")
#: A run id is one plain directory name: it starts with a letter or digit (never ``.``, ``..`` or a hidden name).
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def sanitise(name: str) -> str:
    """A model or environment name as a single safe path component.

    >>> sanitise("baseline:heuristic"), sanitise("meta-llama/Llama-3.1-8B")
    ('baseline-heuristic', 'meta-llama_Llama-3.1-8B')
    """
    name = name.replace(":", "-").replace("/", "_")
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "unnamed"


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is a plain name, else a ConfigError: a run id becomes a directory under ``--out``, and
    one with a separator, ``..`` or an absolute path would write (or resume) a run outside it.

    >>> check_run_id("r1")
    'r1'
    >>> check_run_id("../x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    security_verifiers.core.errors.ConfigError: --run-id '../x' is not a plain name: ...
    """
    if not _RUN_ID.fullmatch(run_id):
        raise ConfigError(f"--run-id {run_id[:200]!r} is not a plain name: use 1-128 letters, digits, '.', '_' or "
                          "'-', starting with a letter or digit")
    return run_id


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def start_time() -> str:
    """A run's ``started_at``: to the microsecond, so two runs started in one second are still ordered."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def code_version() -> dict[str, Any]:
    """The package version and, when run from a git checkout, its commit and whether it was modified."""
    info: dict[str, Any] = {"package": _version("security-verifiers"), "git_sha": None, "git_dirty": None}
    root = Path(__file__).resolve().parents[3]
    if (root / ".git").exists():
        try:
            sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                 text=True, timeout=5, check=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=5, check=True).stdout.strip()
            info.update(git_sha=sha, git_dirty=bool(dirty))
        except (OSError, subprocess.SubprocessError):
            pass
    return info


def _version(package: str) -> str | None:
    try:
        return importlib_metadata.version(package)
    except importlib_metadata.PackageNotFoundError:
        return None


def environment_versions() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {p: _version(p) for p in _TRACKED_PACKAGES},
    }


@dataclass(frozen=True)
class ResultsFile:
    """What a ``results.jsonl`` holds: its records in file order, and the number of its final line when that
    line was cut short and dropped (``None`` when there was none).

    Resuming drops a cut line on purpose, but a report must say that one was there: the rollout it held is
    missing from every count and metric. ``offsets``: where each record's line starts in the file (bytes), when
    the file was read from disk, so a reader that kept slim records (:func:`slim`) can go back for the rest."""

    records: list[RolloutRecord]
    cut_line: int | None = None
    offsets: list[int] | None = None
    #: False when the records were read :func:`slim` (their conversations are still in the file, at ``offsets``).
    transcripts: bool = True


class MalformedResults(ValueError):
    """A line of ``results.jsonl`` before its last that is not a rollout record: not a cut write but damage, so
    the reader stops there rather than guess which rollouts the file holds."""

    def __init__(self, path: Path, lineno: int, problem: str) -> None:
        super().__init__(f"{path}:{lineno}: malformed result record: {problem}")
        self.path, self.lineno, self.problem = path, lineno, problem


def slim(record: RolloutRecord) -> RolloutRecord:
    """``record`` without its conversation: only the final answer is kept (what a summary's failure examples
    quote). Prompts and tool results are most of a record, and a summary of 100,000 rollouts reads only outcomes."""
    if record.transcript is None:
        return record
    final = [m for m in record.transcript.messages if m.role == "assistant"][-1:]
    transcript = record.transcript.model_copy(update={"messages": final, "world": None})
    return record.model_copy(update={"transcript": transcript})


def read_results_file(path: Path, *, transcripts: bool = True) -> ResultsFile:
    """Read ``results.jsonl`` line by line: a cut-short final line is dropped and its number kept, a malformed line
    elsewhere (bad JSON, not UTF-8, not a record) is a :class:`MalformedResults`. A missing file holds no records (a
    run killed before its first rollout). ``transcripts=False`` keeps each record :func:`slim`, so memory grows with
    the outcomes, not with the conversations."""
    if not path.exists():
        return ResultsFile([])
    records: list[RolloutRecord] = []
    offsets: list[int] = []
    with path.open("rb") as fh:
        offset = 0
        for lineno, raw in enumerate(fh, 1):
            start, offset = offset, offset + len(raw)
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if not line.strip():
                continue
            try:
                record = RolloutRecord.model_validate_json(line.decode("utf-8"))
            except (ValidationError, UnicodeDecodeError) as err:
                is_last = all(not rest.strip() for rest in fh)
                cut_text = not isinstance(err, UnicodeDecodeError) or err.reason == "unexpected end of data"
                if is_last and cut_text:  # a run killed mid-write: the final line is incomplete
                    return ResultsFile(records, cut_line=lineno, offsets=offsets, transcripts=transcripts)
                problem = err.errors()[0]["msg"] if isinstance(err, ValidationError) else "not UTF-8 text"
                raise MalformedResults(path, lineno, problem) from err
            records.append(record if transcripts else slim(record))
            offsets.append(start)
    return ResultsFile(records, offsets=offsets, transcripts=transcripts)


def read_records_at(path: Path, offsets: Iterable[int]) -> Iterator[RolloutRecord]:
    """The whole records whose lines start at ``offsets`` (from :attr:`ResultsFile.offsets`), one at a time."""
    with path.open("rb") as fh:
        for offset in offsets:
            fh.seek(offset)
            yield RolloutRecord.model_validate_json(fh.readline().rstrip(b"\n").decode("utf-8"))


def read_records(path: Path) -> list[RolloutRecord]:
    """The records of ``results.jsonl`` (see :func:`read_results_file`; a cut final line is dropped)."""
    return read_results_file(path).records


def copy_lines(lines: Iterable[tuple[Path, int]], dest: Path) -> None:
    """Write to ``dest``, in order, each record line that starts at (file, offset), byte for byte as it was written;
    the file is fsynced, as a run's results are when it ends."""
    handles: dict[Path, IO[bytes]] = {}
    try:
        with dest.open("wb") as out:
            for path, offset in lines:
                source = handles.get(path)
                if source is None:
                    source = handles[path] = path.open("rb")
                source.seek(offset)
                line = source.readline()
                out.write(line if line.endswith(b"\n") else line + b"\n")
            out.flush()
            os.fsync(out.fileno())
    finally:
        for handle in handles.values():
            handle.close()


def latest_by_key(records: list[RolloutRecord]) -> list[RolloutRecord]:
    """One record per (item, sample): the last one written wins."""
    by_key: dict[tuple[str, int], RolloutRecord] = {}
    for record in records:
        by_key[(record.item_id, record.sample)] = record
    return list(by_key.values())


def latest_positions(results: ResultsFile) -> list[int]:
    """The positions in ``results.records`` of :func:`latest_by_key`'s records, in its order."""
    by_key: dict[tuple[str, int], int] = {}
    for position, record in enumerate(results.records):
        by_key[(record.item_id, record.sample)] = position
    return list(by_key.values())


def write_json_atomic(path: Path, value: Any) -> None:
    """Write JSON through a temporary file and a rename, so a kill never leaves a half-written file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class RunDir:
    """Paths and writers of one run: ``<root>/evals/<env>--<model>/<run_id>/``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results_path = path / "results.jsonl"
        self.metadata_path = path / "metadata.json"
        self._fh: IO[str] | None = None

    @classmethod
    def for_run(cls, root: Path, env: str, model: str, run_id: str) -> RunDir:
        """The directory of run ``run_id``; a run id that is not a plain name is a ConfigError (see
        :func:`check_run_id`), so no command writes or resumes a run outside ``root``."""
        check_run_id(run_id)
        return cls(root / "evals" / f"{sanitise(env)}--{sanitise(model)}" / run_id)

    @staticmethod
    def runs(root: Path, env: str, model: str) -> list[RunDir]:
        """Every run of ``env`` with ``model`` under ``root`` (a directory holding ``metadata.json``), by name;
        which is the latest is for their metadata to say (a run id need not sort by time)."""
        parent = root / "evals" / f"{sanitise(env)}--{sanitise(model)}"
        return [RunDir(p) for p in sorted(parent.glob("*")) if (p / "metadata.json").is_file()] \
            if parent.is_dir() else []

    def read_metadata(self) -> dict[str, Any]:
        return json.loads(self.metadata_path.read_text(encoding="utf-8"))

    def write_metadata(self, metadata: dict[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.metadata_path, metadata)

    def compact_for_resume(self) -> list[RolloutRecord]:
        """Keep the finished rollouts (one per key), drop errored and cut-short ones; returns what is kept, without
        the conversations (:func:`slim`: a resume needs their keys and counts). The kept lines are copied as they
        were written, so a resume of 100,000 rollouts does not hold them whole.

        A malformed line before the last is a ConfigError naming it, and the file is left as it is: which
        rollouts it held is for the user to decide, not for a resume to guess."""
        results = self.read_results_for_resume()
        kept = [p for p in latest_positions(results) if results.records[p].ok]
        tmp = self.results_path.with_suffix(".jsonl.tmp")
        offsets = results.offsets or []  # none when there is no file yet: nothing is kept
        copy_lines([(self.results_path, offsets[p]) for p in kept], tmp)
        os.replace(tmp, self.results_path)
        return [results.records[p] for p in kept]

    def read_for_resume(self) -> list[RolloutRecord]:
        """The records of ``results.jsonl`` without their conversations (see :meth:`read_results_for_resume`)."""
        return self.read_results_for_resume().records

    def read_results_for_resume(self) -> ResultsFile:
        """``results.jsonl`` read slim, or a one-line ConfigError saying which line is damaged and how to go on (a cut
        final line is dropped, as a resume always has)."""
        try:
            return read_results_file(self.results_path, transcripts=False)
        except MalformedResults as err:
            raise ConfigError(f"--resume: {err.path}:{err.lineno} is not a rollout record ({err.problem}); delete or "
                              "fix that line (its rollout is then played again) and resume again, or start a new "
                              "run") from err
        except OSError as err:
            raise ConfigError(f"--resume: cannot read {self.results_path} ({err.strerror or err})") from err

    def open_results(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        self._fh = self.results_path.open("a", encoding="utf-8")

    def append(self, record: RolloutRecord) -> None:
        """Append one record and flush it to the OS, so it survives the process being killed."""
        assert self._fh is not None, "open_results() first"
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None
