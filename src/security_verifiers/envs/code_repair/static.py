"""The static analysers of E3, pinned (their findings are part of the reward): bandit, run in process, and our
local semgrep rules (``semgrep_rules/``) for weaknesses bandit does not know, run in batches.

bandit reads files, so the task's modules are written to a private temporary directory first; a scan of a task
takes a few milliseconds once bandit's plugins are loaded (about 0.3 s, once per process). semgrep is a separate
process whose start-up (0.2-0.5 s) dwarfs a scan, so a whole batch of tasks goes through one process. Findings are
keyed by the task's own relative paths; a semgrep finding's ``test_id`` is its rule id and its ``cwe`` the rule's.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import EngineUnavailable


@dataclass(frozen=True)
class StaticFinding:
    test_id: str
    file: str
    line: int
    severity: str  # LOW | MEDIUM | HIGH
    confidence: str
    cwe: str | None


def bandit_version() -> str:
    return version("bandit")


@cache
def _bandit() -> tuple[Any, Any]:
    """bandit's config and manager module, loaded once (its plugins take about 0.3 s)."""
    logging.getLogger("bandit").setLevel(logging.ERROR)
    logging.getLogger("stevedore").setLevel(logging.CRITICAL)  # bandit's optional SARIF formatter is not installed
    with warnings.catch_warnings():  # stevedore's deprecation notice about bandit's plugin loading, not ours
        warnings.simplefilter("ignore")
        try:
            from bandit.core import config as bandit_config
            from bandit.core import manager as bandit_manager
        except ImportError as error:  # a missing analyser is an error, never a clean scan
            raise EngineUnavailable(f"bandit is not installed ({error}); install the project (pip install -e .)") \
                from error
        return bandit_config.BanditConfig(), bandit_manager


def scan(files: Mapping[str, str]) -> list[StaticFinding]:
    """bandit's findings on ``files`` (relative path -> source). A file bandit cannot parse yields none: the
    sandbox's import of it will fail anyway, and that is judged there. Remembered for the last few hundred
    programs: every rollout of an item scans its original again."""
    return list(_scan(tuple(sorted(files.items()))))


@lru_cache(maxsize=512)
def _scan(files: tuple[tuple[str, str], ...]) -> tuple[StaticFinding, ...]:
    return tuple(_bandit_scan(dict(files)))


def _bandit_scan(files: Mapping[str, str]) -> list[StaticFinding]:
    config, bandit_manager = _bandit()
    with tempfile.TemporaryDirectory(prefix="sv-bandit-") as tmp:
        root = Path(tmp)
        paths = {}
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            paths[str(path)] = relative
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            manager = bandit_manager.BanditManager(config, "file", quiet=True)
        manager.discover_files(list(paths), recursive=False)
        manager.run_tests()
        issues = manager.get_issue_list()
    out = []
    for issue in issues:
        cwe = getattr(issue, "cwe", None)
        cwe_id = f"CWE-{cwe.id}" if cwe is not None and getattr(cwe, "id", 0) else None
        out.append(StaticFinding(test_id=issue.test_id, file=paths.get(issue.fname, issue.fname),
                                 line=int(issue.lineno), severity=str(issue.severity),
                                 confidence=str(issue.confidence), cwe=cwe_id))
    return sorted(out, key=lambda f: (f.file, f.line, f.test_id))


def flagged(findings: list[StaticFinding], ids: list[str]) -> list[StaticFinding]:
    """The findings of the analyser tests in ``ids``."""
    wanted = set(ids)
    return [f for f in findings if f.test_id in wanted]


def new_high(before: list[StaticFinding], after: list[StaticFinding]) -> list[str]:
    """High-severity test ids that ``after`` reports more often than ``before`` (what a patch introduced)."""
    def counts(findings: list[StaticFinding]) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in findings:
            if f.severity == "HIGH":
                out[f.test_id] = out.get(f.test_id, 0) + 1
        return out

    old, new = counts(before), counts(after)
    return sorted(test for test, n in new.items() if n > old.get(test, 0))


# -- semgrep: our local rules for what bandit does not know ---------------------------------------------------------
SEMGREP_RULES = Path(__file__).parent / "semgrep_rules"
_SEMGREP_SEVERITY = {"ERROR": "HIGH", "WARNING": "MEDIUM", "INFO": "LOW"}


@cache
def _semgrep() -> tuple[str, str]:
    """The semgrep binary and its version, the pinned one (checked once per process); a missing semgrep or another
    version is an error (EngineUnavailable, naming `sv engines install`)."""
    from security_verifiers.engines.semgrep import checked_semgrep

    return checked_semgrep()


def semgrep_version() -> str:
    return _semgrep()[1]


def semgrep_scan_many(file_sets: Sequence[Mapping[str, str]]) -> list[list[StaticFinding]]:
    """Our semgrep rules' findings on each set of files (relative path -> source), from ONE semgrep process
    (its start-up costs more than scanning a batch). A file semgrep did not scan is an error, never a clean one."""
    import json
    import subprocess

    from security_verifiers.engines.semgrep import OFFLINE_ENV

    if not file_sets:
        return []
    binary, _ = _semgrep()
    with tempfile.TemporaryDirectory(prefix="sv-e3-semgrep-") as tmp:
        targets: dict[str, tuple[int, str]] = {}
        for index, files in enumerate(file_sets):
            for relative, text in files.items():
                path = Path(tmp, f"s{index:05d}", relative)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                targets[path.relative_to(tmp).as_posix()] = (index, relative)
        command = [binary, "scan", "--experimental", "--metrics=off", "--disable-version-check", "--disable-nosem",
                   "--no-git-ignore", "--max-target-bytes=0", "--config", str(SEMGREP_RULES), "--json", "--quiet",
                   *sorted(targets)]
        proc = subprocess.run(command, cwd=tmp, capture_output=True, text=True, env={**os.environ, **OFFLINE_ENV},
                              timeout=600, check=False)
    try:
        output = json.loads(proc.stdout) if proc.stdout.strip() else {}
    except ValueError:
        output = {}
    if proc.returncode != 0 or not output:
        raise RuntimeError(f"semgrep failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")
    scanned = set((output.get("paths") or {}).get("scanned", []))
    if set(targets) - scanned:
        raise RuntimeError(f"semgrep did not scan {len(set(targets) - scanned)} file(s)")
    out: list[set[StaticFinding]] = [set() for _ in file_sets]
    for result in output.get("results", []):
        index, relative = targets[str(result["path"])]
        extra = result.get("extra") or {}
        out[index].add(StaticFinding(test_id=str(result["check_id"]).rsplit(".", 1)[-1], file=relative,
                                     line=int(result["start"]["line"]),
                                     severity=_SEMGREP_SEVERITY.get(str(extra.get("severity")), "MEDIUM"),
                                     confidence="HIGH", cwe=(extra.get("metadata") or {}).get("cwe")))
    return [sorted(found, key=lambda f: (f.file, f.line, f.test_id)) for found in out]


def semgrep_signal(findings: list[StaticFinding], cwe_ok: Callable[[str], bool], file: str, start: int, end: int,
                   slack: int = 2) -> list[str]:
    """The semgrep rules of the task's CWE (``cwe_ok``) that flag the original within ``slack`` lines of the
    weakness: with the bandit tests the family names, the task's static signal."""
    return sorted({f.test_id for f in findings if not f.test_id.startswith("B") and f.cwe and cwe_ok(f.cwe)
                   and f.file == file and start - slack <= f.line <= end + slack})


def signal_remaining(before: list[StaticFinding], after: list[StaticFinding], static_ids: list[str],
                     semgrep_rules: Sequence[str] = ()) -> list[str]:
    """The signal tests still there after a patch: a bandit test (``B...``) anywhere (the self-check proves the
    reference fix leaves none), or one of our semgrep rules that flags as many places as before (a rule that also
    flags safe code elsewhere in the program is gone once it flags fewer places)."""
    remaining: set[str] = set()
    for test in {*static_ids, *semgrep_rules}:
        if test.startswith("B"):
            if flagged(after, [test]):
                remaining.add(test)
        elif len(flagged(after, [test])) >= len(flagged(before, [test])):
            remaining.add(test)
    return sorted(remaining)


# -- what honest detection without a model names (the baselines' and the fixer's answer) -------------------
_RANK = {"HIGH": 3, "MEDIUM": 2, "LOW": 1}


def answer(cwe: str, file: str, line: int | None, patch: str = "") -> str:
    """An answer as the environment reads it (:class:`.items.Answer`'s JSON)."""
    return json.dumps({"cwe": cwe, "file": file, "line": line, "patch": patch})


def gravest(findings: list[StaticFinding]) -> StaticFinding | None:
    """bandit's gravest finding: severity, then confidence, then the first in the files."""
    ranked = sorted(findings, key=lambda f: (-_RANK.get(f.severity, 0), -_RANK.get(f.confidence, 0), f.file, f.line))
    return ranked[0] if ranked else None


def detection(files: dict[str, str]) -> tuple[str, str, int | None]:
    """What honest detection without a model names: the CWE, file and line of bandit's gravest finding, or the
    first file with no CWE when bandit finds nothing."""
    top = gravest(scan(files))
    if top is None or top.cwe is None:
        return "", next(iter(files)), None
    return top.cwe, top.file, top.line
