"""The static analyser of E3: bandit, pinned (its findings are part of the reward), run in process.

bandit reads files, so the task's modules are written to a private temporary directory first; a scan of a task
takes a few milliseconds once bandit's plugins are loaded (about 0.3 s, once per process). Findings are keyed by
the task's own relative paths.
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
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
    sandbox's import of it will fail anyway, and that is judged there."""
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
