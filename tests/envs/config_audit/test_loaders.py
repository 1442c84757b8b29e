"""E2 loader: a user's directory of manifests and Terraform files becomes oracle-labelled items; files that
are not configs are skipped and reported; a broken config fails loudly, naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from security_verifiers.core.errors import DatasetError
from security_verifiers.envs.config_audit.loaders import load_directory, load_directory_report

INSECURE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  hostPID: true
  containers:
    - name: shell
      image: busybox
"""

SECURE_TF = """\
resource "aws_kms_key" "main" {
  description = "main key"
  enable_key_rotation = true
}
"""

INSECURE_TF = """\
resource "aws_ebs_volume" "data" {
  availability_zone = "eu-west-1a"
  size = 20
  encrypted = false
}
"""


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("user")
    (root / "k8s").mkdir()
    (root / "k8s" / "pod.yaml").write_text(INSECURE_POD)
    (root / "k8s" / "values.yml").write_text("replicaCount: 2\nimage:\n  tag: 1.0\n")  # Helm values: skipped
    (root / "k8s" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - pod.yaml\n")
    (root / "infra").mkdir()
    (root / "infra" / "kms.tf").write_text(SECURE_TF)
    (root / "infra" / "ebs.tf").write_text(INSECURE_TF)
    (root / "infra" / "variables.tf").write_text('variable "region" {\n  type = string\n}\n')
    (root / "infra" / ".terraform").mkdir()
    (root / "infra" / ".terraform" / "cached.tf").write_text(INSECURE_TF)
    (root / "README.md").write_text("not a config")
    return root


def test_loader_labels_every_config_with_the_oracle(user_dir: Path) -> None:
    report = load_directory_report(user_dir)
    sources = [i.meta["source"] for i in report.items]
    assert sources == ["infra/ebs.tf", "infra/kms.tf", "k8s/pod.yaml"]  # sorted, recursive
    by_source = {i.meta["source"]: i for i in report.items}
    for item in report.items:
        assert item.split == "local" and item.target["fixed"] is None and item.target["mutations"] == []
        assert item.input["filename"] == Path(item.meta["source"]).name
    assert [(f["rule_id"], f["resource"]) for f in by_source["infra/ebs.tf"].target["findings"]] == [
        ("tf-aws-ebs-unencrypted", "aws_ebs_volume.data")]
    assert by_source["infra/kms.tf"].target["findings"] == []
    pod_rules = {f["rule_id"] for f in by_source["k8s/pod.yaml"].target["findings"]}
    assert {"k8s-host-pid", "k8s-latest-image-tag", "k8s-run-as-root"} <= pod_rules
    assert {f["resource"] for f in by_source["k8s/pod.yaml"].target["findings"]} == {"Pod/debug"}
    skipped = dict(report.skipped)
    assert set(skipped) == {"k8s/values.yml", "k8s/kustomization.yaml", "infra/variables.tf",
                            "infra/.terraform/cached.tf"}
    assert "kind" in skipped["k8s/values.yml"] and "hidden" in skipped["infra/.terraform/cached.tf"]


def test_loader_is_deterministic(user_dir: Path) -> None:
    first = load_directory(user_dir, split="mine")
    assert [i.id for i in first] == [i.id for i in load_directory(user_dir, split="mine")]
    assert {i.split for i in first} == {"mine"} and len({i.id for i in first}) == len(first)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n", "YAML does not parse"),
    ("nameless.yaml", "apiVersion: v1\nkind: ConfigMap\ndata: {}\n", "not a valid Kubernetes manifest"),
    ("mixed.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nfoo: bar\n", "mixes"),
    ("broken.tf", 'resource "aws_s3_bucket" "b" {\n  bucket = \n', "HCL does not parse"),
])
def test_malformed_file_fails_loudly_with_its_path(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / "ok.tf").write_text(SECURE_TF)
    (tmp_path / name).write_text(text)
    with pytest.raises(DatasetError, match=message) as err:
        load_directory(tmp_path)
    assert name in str(err.value)


def test_not_a_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not a directory"):
        load_directory(tmp_path / "missing")
