"""The local semgrep rules and the batched engine.

semgrep has a fixed cost per process, so every case below is scanned in ONE batch (a module-scoped
fixture); the tests then read their file's slice of the batch result.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from security_verifiers.core.errors import EngineUnavailable
from security_verifiers.engines import semgrep as semgrep_engine
from security_verifiers.engines.findings import catalog
from security_verifiers.engines.semgrep import RULES_DIR, SemgrepEngine

FIXTURES = Path(__file__).parent / "fixtures" / "semgrep"


def _fixture(name: str) -> tuple[str, str]:
    return ("terraform" if name.endswith(".tf") else "kubernetes", (FIXTURES / name).read_text())


def _tf(attribute_line: str) -> tuple[str, str]:
    """A one-resource Terraform file around one attribute line (the resource is aws_db_instance.x)."""
    return ("terraform", f'resource "aws_db_instance" "x" {{\n  engine = "postgres"\n  {attribute_line}\n}}\n')


# (case name, (platform, text), expected {(rule id, resource)})
CASES: list[tuple[str, tuple[str, str], set[tuple[str, str]]]] = [
    # PEM private key in a Secret's stringData, second document: attributed to Secret/tls, not the ConfigMap.
    ("private key in Secret", _fixture("fire_private_key.yaml"), {("cfg-hardcoded-private-key", "Secret/tls")}),
    # AKIA key id in a container env var.
    ("AKIA key in env", _fixture("fire_aws_key.yaml"), {("cfg-hardcoded-aws-key", "Deployment/uploader")}),
    # AKIA in the provider block (no resource there -> "file"), ASIA (temporary key) inside a resource.
    ("keys in provider and resource", _fixture("fire_provider_key.tf"),
     {("cfg-hardcoded-aws-key", "file"), ("cfg-hardcoded-aws-key", "aws_ssm_parameter.session")}),
    # password / administrator_login_password / master_password literals fire (one despite `# nosemgrep`,
    # one hidden behind an empty interpolation); var.x, "${var.x}" and "" do not.
    ("password literals", _fixture("fire_passwords.tf"),
     {("tf-hardcoded-password", "aws_db_instance.main"), ("tf-hardcoded-password", "azurerm_mssql_server.sql"),
      ("tf-hardcoded-password", "aws_rds_cluster.aurora")}),
    # A certificate (not a key), a key reference, a short AKIA word, `password:` in YAML (a Terraform-only rule).
    ("clean manifest", _fixture("pass_clean.yaml"), set()),
    # Passwords from a resource attribute, a public SSH key.
    ("clean terraform", _fixture("pass_clean.tf"), set()),
    # The four PEM headers of the rule fire; ...
    ("EC key header", _tf('user_data = "-----BEGIN EC PRIVATE KEY-----"'),
     {("cfg-hardcoded-private-key", "aws_db_instance.x")}),
    ("OPENSSH key header", _tf('user_data = "-----BEGIN OPENSSH PRIVATE KEY-----"'),
     {("cfg-hardcoded-private-key", "aws_db_instance.x")}),
    ("PKCS8 key header", _tf('user_data = "-----BEGIN PRIVATE KEY-----"'),
     {("cfg-hardcoded-private-key", "aws_db_instance.x")}),
    # ... a public key header does not.
    ("public key header", _tf('user_data = "-----BEGIN PUBLIC KEY-----"'), set()),
    # A key id glued inside a longer word is not a key id (word boundaries).
    ("AKIA inside a word", _tf('tags_all = "XAKIAIOSFODNN7EXAMPLEX"'), set()),
    # Only the four password attribute names count: db_password is not one of them.
    ("other attribute name", _tf('db_password = "literal"'), set()),
    # Two interpolations and nothing else: not a literal.
    ("only interpolations", _tf('password = "${var.a}${var.b}"'), set()),
    # A literal after an interpolation is still a literal.
    ("literal after interpolation", _tf('password = "${var.a}tail"'),
     {("tf-hardcoded-password", "aws_db_instance.x")}),
    # A `password =` line in a Kubernetes file: the rule is Terraform-only.
    ("password in yaml", ("kubernetes", 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n'
                                       '  cfg: |\n    password = "hunter2"\n'), set()),
    # The same text twice in one batch: each copy gets its own, identical result.
    ("duplicate of AKIA key in env", _fixture("fire_aws_key.yaml"), {("cfg-hardcoded-aws-key", "Deployment/uploader")}),
]


@pytest.fixture(scope="module")
def engine() -> SemgrepEngine:
    return SemgrepEngine()


@pytest.fixture(scope="module")
def batch(engine: SemgrepEngine) -> list[list]:
    """All cases, scanned by one semgrep process."""
    return engine.scan_many([item for _, item, _ in CASES])


@pytest.mark.parametrize("index", range(len(CASES)), ids=[name for name, _, _ in CASES])
def test_rule_fires_or_passes(batch: list[list], index: int) -> None:
    _, _, expected = CASES[index]
    assert {f.key for f in batch[index]} == expected


def test_native_and_legacy_modes_agree(batch: list[list]) -> None:
    # The engine runs semgrep-core natively (--experimental); the legacy Python CLI must report the same.
    legacy = SemgrepEngine(native=False).scan_many([item for _, item, _ in CASES])
    assert [[f.key for f in findings] for findings in legacy] == [[f.key for f in findings] for findings in batch]


def test_batch_keeps_order_and_length(batch: list[list]) -> None:
    # One result list per input, in input order (the fixture cases alternate platforms and outcomes).
    assert len(batch) == len(CASES)
    assert batch[0] and batch[0][0].resource == "Secret/tls"
    assert batch[4] == [] and batch[5] == []


def test_findings_carry_catalog_severity_and_engine(batch: list[list]) -> None:
    rules = catalog()
    for findings in batch:
        for finding in findings:
            assert finding.engines == ("semgrep",)
            assert finding.severity == rules[finding.rule_id].severity
            assert finding.message.startswith("line ")


def test_rule_ids_equal_catalog_semgrep_rules() -> None:
    # Every catalog rule with engine semgrep has exactly one local rule of the same id, and vice versa.
    ids = [r["id"] for path in RULES_DIR.glob("*.yaml") for r in yaml.safe_load(path.read_text())["rules"]]
    assert sorted(ids) == sorted(r.id for r in catalog().values() if r.engine == "semgrep")


def test_empty_batch_runs_nothing(engine: SemgrepEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "_run", lambda *a: pytest.fail("semgrep must not run for an empty batch"))
    assert engine.scan_many([]) == []


def test_version_comes_from_the_binary(engine: SemgrepEngine) -> None:
    assert engine.version() == "1.182.0"


def test_missing_binary_is_unavailable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # An explicit path that does not exist, and no semgrep in its own virtualenv, next to the interpreter or on PATH.
    with pytest.raises(EngineUnavailable, match="semgrep"):
        SemgrepEngine(binary=str(tmp_path / "semgrep"))
    monkeypatch.delenv("SV_SEMGREP", raising=False)
    monkeypatch.setenv("SV_SEMGREP_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(semgrep_engine.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert semgrep_engine.find_semgrep() is None
    with pytest.raises(EngineUnavailable, match="not found.*sv engines install"):
        SemgrepEngine()


def test_unknown_platform_is_rejected(engine: SemgrepEngine) -> None:
    with pytest.raises(ValueError, match="platform"):
        engine.scan_many([("helm", "x")])
