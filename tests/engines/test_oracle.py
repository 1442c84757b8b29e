"""The oracle: union and dedup across engines, caching, invalid text, missing engines.

Most tests inject fake engines that count their calls (fast, exact); one module-scoped real oracle checks
the engines together on small manifests.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

import pytest

from security_verifiers.core.errors import EngineUnavailable
from security_verifiers.engines import oracle as oracle_module
from security_verifiers.engines import semgrep as semgrep_engine
from security_verifiers.engines.configs import ConfigParseError
from security_verifiers.engines.findings import Finding, Severity, catalog
from security_verifiers.engines.oracle import Oracle, OracleResult, get_oracle, merge_findings

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
    - name: app
      image: nginx:1.27
      securityContext:
        privileged: true
"""
TF = 'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n  acl    = "public-read"\n}\n'


class FakeEngine:
    """Returns ``respond(platform, text)`` and counts calls."""

    def __init__(self, respond: Callable[[str, str], list[Finding]], name: str = "fake") -> None:
        self.respond = respond
        self.name = name
        self.calls = 0

    def version(self) -> str:
        return f"{self.name}-1"

    def scan(self, platform: str, text: str, context: tuple = ()) -> list[Finding]:
        self.calls += 1
        return self.respond(platform, text)


class FakeBatch:
    """A semgrep stand-in: counts processes (calls) and files."""

    def __init__(self, respond: Callable[[str, str], list[Finding]]) -> None:
        self.respond = respond
        self.calls = 0
        self.files = 0

    def version(self) -> str:
        return "semgrep-1"

    def scan_many(self, files: list[tuple[str, str]]) -> list[list[Finding]]:
        self.calls += 1
        self.files += len(files)
        return [self.respond(p, t) for p, t in files]


def f(rule: str, resource: str, engine: str, path: str | None = None, severity: Severity = Severity.LOW) -> Finding:
    return Finding(rule_id=rule, resource=resource, path=path, engines=(engine,), severity=severity, message=engine)


def fakes(rego: list[Finding] | None = None, checkov: list[Finding] | None = None,
          semgrep: list[Finding] | None = None) -> tuple[FakeEngine, FakeEngine, FakeBatch, Oracle]:
    r = FakeEngine(lambda p, t: list(rego or []), "rego")
    c = FakeEngine(lambda p, t: list(checkov or []), "checkov")
    s = FakeBatch(lambda p, t: list(semgrep or []))
    return r, c, s, Oracle(rego=r, checkov=c, semgrep=s)


# ------------------------------------------------------------------------------------------------- merging

# (case, engine findings, expected merged (rule, resource, path, engines))
MERGE_CASES = [
    # Rego and Checkov on the same rule and resource: one finding, both engines, Rego's path kept.
    ("rego+checkov", [f("k8s-privileged-container", "Pod/web", "checkov"),
                      f("k8s-privileged-container", "Pod/web", "rego", path="app")],
     [("k8s-privileged-container", "Pod/web", "app", ("rego", "checkov"))]),
    # Rego reports two containers of one Pod: one finding (detection is per resource), first path kept.
    ("two rego paths", [f("k8s-run-as-root", "Pod/web", "rego", path="z"),
                        f("k8s-run-as-root", "Pod/web", "rego", path="a")],
     [("k8s-run-as-root", "Pod/web", "a", ("rego",))]),
    # A Checkov-only path is kept when Rego has none.
    ("checkov path", [f("k8s-run-as-root", "Pod/web", "rego"), f("k8s-run-as-root", "Pod/web", "checkov", path="c")],
     [("k8s-run-as-root", "Pod/web", "c", ("rego", "checkov"))]),
    # Different resources stay apart; output sorted by rule, then resource.
    ("sorted", [f("k8s-run-as-root", "Pod/b", "rego"), f("k8s-host-pid", "Pod/a", "checkov"),
                f("k8s-run-as-root", "Pod/a", "semgrep")],
     [("k8s-host-pid", "Pod/a", None, ("checkov",)), ("k8s-run-as-root", "Pod/a", None, ("semgrep",)),
      ("k8s-run-as-root", "Pod/b", None, ("rego",))]),
    # All three engines on one key.
    ("three engines", [f("cfg-hardcoded-aws-key", "file", "semgrep"), f("cfg-hardcoded-aws-key", "file", "checkov"),
                       f("cfg-hardcoded-aws-key", "file", "rego")],
     [("cfg-hardcoded-aws-key", "file", None, ("rego", "checkov", "semgrep"))]),
]


@pytest.mark.parametrize(("case", "findings", "expected"), MERGE_CASES, ids=[c[0] for c in MERGE_CASES])
def test_merge(case: str, findings: list[Finding], expected: list[tuple]) -> None:
    merged = merge_findings(findings)
    assert [(m.rule_id, m.resource, m.path, m.engines) for m in merged] == expected


def test_merge_takes_severity_from_catalog_and_rejects_unknown_rules() -> None:
    (merged,) = merge_findings([f("k8s-privileged-container", "Pod/web", "rego", severity=Severity.LOW)])
    assert merged.severity == catalog()["k8s-privileged-container"].severity == Severity.CRITICAL
    with pytest.raises(ValueError, match="unknown rule id"):
        merge_findings([f("no-such-rule", "Pod/web", "rego")])


def test_scan_unions_the_three_engines() -> None:
    *_, oracle = fakes(rego=[f("k8s-privileged-container", "Pod/web", "rego", path="app")],
                       checkov=[f("k8s-privileged-container", "Pod/web", "checkov"), f("k8s-host-pid", "Pod/web",
                                                                                       "checkov")],
                       semgrep=[f("cfg-hardcoded-aws-key", "Pod/web", "semgrep")])
    result = oracle.scan("kubernetes", POD)
    assert result.valid and result.parse_error is None
    assert [(x.rule_id, x.engines) for x in result.findings] == [
        ("cfg-hardcoded-aws-key", ("semgrep",)), ("k8s-host-pid", ("checkov",)),
        ("k8s-privileged-container", ("rego", "checkov"))]
    assert result.keys == {("cfg-hardcoded-aws-key", "Pod/web"), ("k8s-host-pid", "Pod/web"),
                           ("k8s-privileged-container", "Pod/web")}


def test_rego_findings_without_engine_are_labelled() -> None:
    bare = Finding(rule_id="k8s-host-pid", resource="Pod/web")
    *_, oracle = fakes(rego=[bare])
    assert oracle.scan("kubernetes", POD).findings[0].engines == ("rego",)


# ------------------------------------------------------------------------------------------------- caching


def test_second_scan_is_served_from_cache() -> None:
    rego, checkov, semgrep, oracle = fakes(rego=[f("k8s-host-pid", "Pod/web", "rego")])
    first = oracle.scan("kubernetes", POD)
    second = oracle.scan("kubernetes", POD)
    assert first == second
    assert (rego.calls, checkov.calls, semgrep.calls) == (1, 1, 1)
    assert oracle.cache_info()["hits"] == 1
    # The platform is part of the key.
    oracle.scan("terraform", TF)
    assert rego.calls == 2


def test_cached_result_cannot_be_mutated_by_a_caller() -> None:
    *_, oracle = fakes(rego=[f("k8s-host-pid", "Pod/web", "rego")])
    oracle.scan("kubernetes", POD).findings.clear()
    assert len(oracle.scan("kubernetes", POD).findings) == 1


def test_scan_many_batches_semgrep_once_and_dedups_within_the_batch() -> None:
    rego, checkov, semgrep, oracle = fakes()
    texts = [("kubernetes", POD), ("terraform", TF), ("kubernetes", POD), ("kubernetes", POD + "# v2\n")]
    results = oracle.scan_many(texts)
    assert len(results) == 4 and results[0] == results[2]
    assert semgrep.calls == 1 and semgrep.files == 3  # one process, three distinct texts
    assert rego.calls == checkov.calls == 3
    oracle.scan_many(texts)  # all cached: no engine runs, not even semgrep
    assert (rego.calls, semgrep.calls) == (3, 1)


def test_cache_is_bounded_lru() -> None:
    rego, _, _, _ = fakes()
    oracle = Oracle(rego=rego, checkov=FakeEngine(lambda p, t: []), semgrep=FakeBatch(lambda p, t: []), cache_size=2)
    a, b, c = (("kubernetes", POD + f"# {i}\n") for i in range(3))
    oracle.scan(*a)
    oracle.scan(*b)
    oracle.scan(*a)  # a is now the most recent
    oracle.scan(*c)  # evicts b
    assert oracle.cache_info()["size"] == 2
    calls, misses = rego.calls, oracle.cache_info()["misses"]
    oracle.scan(*a)
    assert rego.calls == calls and oracle.cache_info()["misses"] == misses
    oracle.scan(*b)  # evicted from the result cache: recomputed, but its per-file scan is still cached
    assert oracle.cache_info()["misses"] == misses + 1 and rego.calls == calls
    oracle.clear_cache()
    oracle.scan(*b)  # nothing cached any more: the engines run again
    assert rego.calls == calls + 1


def test_threads_share_one_oracle() -> None:
    rego, _, _, oracle = fakes(rego=[f("k8s-host-pid", "Pod/web", "rego")])
    texts = [("kubernetes", POD + f"# {i % 5}\n") for i in range(40)]
    out: list[OracleResult] = []
    lock = threading.Lock()

    def work(chunk: list[tuple[str, str]]) -> None:
        results = oracle.scan_many(chunk)
        with lock:
            out.extend(results)

    threads = [threading.Thread(target=work, args=(texts[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 40 and all(r.findings[0].rule_id == "k8s-host-pid" for r in out)
    assert oracle.cache_info()["size"] == 5


# ---------------------------------------------------------------------------------------------- validity

# (case, platform, text, valid, parse_error expected, findings expected)
VALIDITY_CASES = [
    # Broken YAML: invalid, parse error, no findings, no in-process engine run (semgrep, a separate process
    # started before validation, sees the text but its findings are dropped).
    ("broken yaml", "kubernetes", "kind: [", False, True, False),
    # No metadata.name: no resource identity.
    ("no name", "kubernetes", "apiVersion: v1\nkind: Pod\n", False, True, False),
    # Broken HCL.
    ("broken hcl", "terraform", 'resource "a" "b" {\n  x = \n}\n', False, True, False),
    # A resource without name label (hcl2 parses it, our identity model cannot).
    ("one label", "terraform", 'resource "aws_s3_bucket" {\n  bucket = "x"\n}\n', False, True, False),
    # Parses but fails the strict schema: invalid, findings still reported.
    ("schema error", "kubernetes", POD.replace("  containers:", "  bogus: 1\n  containers:"), False, False, True),
    # Valid.
    ("valid", "kubernetes", POD, True, False, True),
]


@pytest.mark.parametrize(("case", "platform", "text", "valid", "parse_error", "has_findings"), VALIDITY_CASES,
                         ids=[c[0] for c in VALIDITY_CASES])
def test_validity(case: str, platform: str, text: str, valid: bool, parse_error: bool, has_findings: bool) -> None:
    rego, checkov, semgrep, oracle = fakes(rego=[f("k8s-host-pid", "Pod/web", "rego")],
                                           semgrep=[f("cfg-hardcoded-aws-key", "file", "semgrep")])
    result = oracle.scan(platform, text)
    assert result.valid is valid
    assert (result.parse_error is not None) is parse_error
    assert bool(result.findings) is has_findings
    assert bool(result.validation_errors) is not valid
    if parse_error:
        assert rego.calls == checkov.calls == 0


def test_engine_parse_error_is_reported_not_raised() -> None:
    def strict(platform: str, text: str) -> list[Finding]:
        raise ConfigParseError("the Rego input cannot be built")

    oracle = Oracle(rego=FakeEngine(strict), checkov=FakeEngine(lambda p, t: []), semgrep=FakeBatch(lambda p, t: []))
    result = oracle.scan("kubernetes", POD)
    assert not result.valid and result.parse_error == "the Rego input cannot be built" and result.findings == []
    assert result.validation_errors == ["the Rego input cannot be built"]


def test_unknown_platform() -> None:
    *_, oracle = fakes()
    with pytest.raises(ValueError, match="platform"):
        oracle.scan("helm", "x")


# -------------------------------------------------------------------------------------------- engine loading


def test_missing_semgrep_binary_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semgrep_engine, "locate_semgrep", lambda: None)
    with pytest.raises(EngineUnavailable, match="sv engines install"):
        Oracle(rego=FakeEngine(lambda p, t: []), checkov=FakeEngine(lambda p, t: []))


def test_missing_rego_engine_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "security_verifiers.engines.rego", None)  # import fails
    with pytest.raises(EngineUnavailable, match="Rego"):
        Oracle(checkov=FakeEngine(lambda p, t: []), semgrep=FakeBatch(lambda p, t: []))


def test_broken_engine_raises_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    from security_verifiers.engines import checkov as checkov_engine

    def broken() -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(checkov_engine, "CheckovEngine", broken)
    with pytest.raises(EngineUnavailable, match="Checkov engine failed to load: OSError: disk gone"):
        Oracle(rego=FakeEngine(lambda p, t: []), semgrep=FakeBatch(lambda p, t: []))


# ------------------------------------------------------------------------------------------ the real engines


@pytest.fixture(scope="module")
def real() -> Oracle:
    return get_oracle()


@pytest.fixture(scope="module")
def real_results(real: Oracle) -> list[OracleResult]:
    secret = ('resource "aws_db_instance" "db" {\n  password = "hunter2"\n  publicly_accessible = true\n}\n')
    return real.scan_many([("kubernetes", POD), ("terraform", TF), ("terraform", secret), ("kubernetes", "kind: [")])


def test_real_oracle_dedups_rego_and_checkov(real_results: list[OracleResult]) -> None:
    pod, bucket, db, broken = real_results
    by_key = {x.key: x for x in pod.findings}
    privileged = by_key[("k8s-privileged-container", "Pod/web")]
    assert privileged.engines == ("rego", "checkov") and privileged.path is not None
    assert by_key[("k8s-missing-cpu-limit", "Pod/web")].engines == ("rego", "checkov")
    assert bucket.keys >= {("tf-aws-s3-public-acl", "aws_s3_bucket.b")}
    engines = {x.key: x.engines for x in db.findings}
    assert engines[("tf-hardcoded-password", "aws_db_instance.db")] == ("semgrep", "values")  # raw text and value agree
    assert engines[("tf-aws-rds-public", "aws_db_instance.db")] == ("rego", "checkov")
    assert not broken.valid and broken.parse_error and broken.findings == []


def test_get_oracle_is_a_singleton_with_versions(real: Oracle) -> None:
    assert get_oracle() is real
    versions = real.versions()
    assert versions["checkov"] == "3.3.30" and versions["semgrep"] == "1.182.0"
    assert versions["rego"] and versions["kubernetes_schema"]


def test_real_cache_hit_runs_no_engine(real: Oracle, real_results: list[OracleResult],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object) -> None:
        raise AssertionError("an engine ran on a cached text")

    monkeypatch.setattr(real.checkov, "scan", forbidden)
    monkeypatch.setattr(real.semgrep, "scan_many", forbidden)
    assert real.scan("kubernetes", POD) == real_results[0]


def test_module_exports() -> None:
    assert oracle_module.EngineUnavailable is EngineUnavailable and issubclass(EngineUnavailable, RuntimeError)
