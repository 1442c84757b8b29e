"""The scan store (engines/scan_store.py): scanner findings kept on disk for every process, never stale, never a
failure, and the same results with it, without it, cold or warm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from security_verifiers.engines.findings import Finding, Severity
from security_verifiers.engines.oracle import Oracle, cache_key
from security_verifiers.engines.scan_store import ScanStore

VERSIONS = {"rego": "r1", "checkov": "c1", "secret_values": "v1"}
POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: a\n"
       "      image: nginx:1.25\n")


class Counting:
    """A scanner that returns one finding per text and counts its calls (or fails when told to)."""

    def __init__(self, rule: str, fail: bool = False) -> None:
        self.rule, self.fail, self.calls = rule, fail, 0

    def version(self) -> str:
        return "fake"

    def scan(self, platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("engine down")
        return [Finding(rule_id=self.rule, resource="Pod/web", path="spec", engines=("checkov",),
                        severity=Severity.HIGH, message=f"{len(text)} bytes")]


class NoSemgrep:
    def version(self) -> str:
        return "none"

    def scan_many(self, files: list[tuple[str, str]]) -> list[list[Finding]]:
        return [[] for _ in files]


def oracle(store: ScanStore, fail: bool = False) -> tuple[Oracle, Counting]:
    checkov = Counting("k8s-privileged-container", fail=fail)
    return Oracle(rego=Counting("k8s-missing-cpu-limit"), checkov=checkov, semgrep=NoSemgrep(),
                  values=Counting("k8s-secret-in-env"), store=store), checkov


def test_a_second_process_reads_what_the_first_scanned(tmp_path: Path) -> None:
    first, ran = oracle(ScanStore(VERSIONS, root=tmp_path))
    found = first.scanner_findings("kubernetes", POD)
    second, again = oracle(ScanStore(VERSIONS, root=tmp_path))  # a fresh oracle: nothing in memory
    assert second.scanner_findings("kubernetes", POD) == found and (ran.calls, again.calls) == (1, 0)


def test_other_versions_or_another_text_scan_again(tmp_path: Path) -> None:
    oracle(ScanStore(VERSIONS, root=tmp_path))[0].scanner_findings("kubernetes", POD)
    newer, ran = oracle(ScanStore({**VERSIONS, "checkov": "c2"}, root=tmp_path))
    newer.scanner_findings("kubernetes", POD)
    newer.scanner_findings("kubernetes", POD + "# another text\n")
    assert ran.calls == 2 and len(list(tmp_path.glob("*.sqlite"))) == 2


def test_a_failed_scan_is_never_stored(tmp_path: Path) -> None:
    broken, _ = oracle(ScanStore(VERSIONS, root=tmp_path), fail=True)
    with pytest.raises(RuntimeError):
        broken.scanner_findings("kubernetes", POD)
    store = ScanStore(VERSIONS, root=tmp_path)
    assert store.get(cache_key("kubernetes", POD)) is None


def test_a_store_that_cannot_be_opened_only_costs_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    scanner, ran = oracle(ScanStore(VERSIONS, root=blocked / "scans"))
    assert scanner.scanner_findings("kubernetes", POD) and ran.calls == 1
    assert "cannot be used" in capsys.readouterr().err


def test_processes_share_the_store(tmp_path: Path) -> None:
    """A child process (another interpreter) writes; this one reads, with no engine run."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
            "from pathlib import Path\n"
            "from test_scan_store import oracle, VERSIONS, POD\n"
            "from security_verifiers.engines.scan_store import ScanStore\n"
            f"oracle(ScanStore(VERSIONS, root=Path({str(tmp_path)!r})))[0].scanner_findings('kubernetes', POD)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    reader, ran = oracle(ScanStore(VERSIONS, root=tmp_path))
    assert reader.scanner_findings("kubernetes", POD) and ran.calls == 0


def test_the_real_oracle_gives_the_same_results_cold_warm_and_without_the_store(tmp_path: Path) -> None:
    """Public-set originals through the real engines: a store changes no result."""
    from security_verifiers.envs.config_audit.env import ConfigAudit, scan_request

    items = ConfigAudit().dataset("test").items[:6]
    requests = [scan_request(i) for i in items]
    plain = Oracle().scan_many(requests)
    real = Oracle()
    versions = {"rego": real.rego.version(), "checkov": real.checkov.version(),
                "secret_values": real.values.version()}
    cold = Oracle(store=ScanStore(versions, root=tmp_path)).scan_many(requests)
    warm_oracle = Oracle(store=ScanStore(versions, root=tmp_path))
    warm = warm_oracle.scan_many(requests)
    assert plain == cold == warm
    # the dataset's labels are the oracle's findings (what the scorer checks before it scores an item)
    assert [{f.key for f in r.findings} for r in warm] == \
        [{(f["rule_id"], f["resource"]) for f in i.target["findings"]} for i in items]


def test_a_run_whose_scans_are_stored_never_imports_checkov(tmp_path: Path) -> None:
    """Checkov is imported at the first scan the store does not hold (~2 s a process): a second process that finds
    every scan stored gives the same findings without importing it, and its versions are the same."""
    code = """
import json, sys
from security_verifiers.engines.oracle import get_oracle
from security_verifiers.envs.config_audit.env import ConfigAudit, scan_request
items = ConfigAudit().dataset("test").items[:3]
oracle = get_oracle()
found = [[f.model_dump(mode="json") for f in oracle.scanner_findings(*scan_request(i))] for i in items]
print(json.dumps({"found": found, "versions": oracle.versions(),
                  "imported": "checkov.terraform.runner" in sys.modules}))
"""
    env = {**os.environ, "SV_CACHE_DIR": str(tmp_path), "SV_SCAN_STORE": "on"}
    runs = [subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
            for _ in range(2)]
    first, second = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert first["imported"] is True  # nothing stored yet: Checkov ran
    assert second["imported"] is False
    assert second["found"] == first["found"] and second["versions"] == first["versions"]


def test_an_engine_that_fails_to_load_at_its_first_scan_fails_the_batch_not_a_text() -> None:
    """A lazy engine's failure to import is the scorer's (EngineUnavailable through scan_many), never a text's
    engine error, which on a patched file would be scored as the model's fault."""
    from security_verifiers.core.errors import EngineUnavailable

    class Unloadable:
        def version(self) -> str:
            return "x"

        def scan(self, platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
            raise EngineUnavailable("the Checkov engine failed to load: ImportError")

    class NoFindings(Unloadable):
        def scan(self, platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
            return []

    class NoSemgrep:
        def version(self) -> str:
            return "x"

        def scan_many(self, files: list[tuple[str, str]]) -> list[list[Finding]]:
            return [[] for _ in files]

    oracle = Oracle(rego=NoFindings(), checkov=Unloadable(), semgrep=NoSemgrep(), values=NoFindings())
    with pytest.raises(EngineUnavailable, match="failed to load"):
        oracle.scan_many([("kubernetes", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n")])
