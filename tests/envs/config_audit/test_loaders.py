"""E2 loader: a user's directory of manifests and Terraform files becomes oracle-labelled items; files that
are not configs are skipped with the reason; a config that cannot be read is a problem with its line and a
hint (and fails ``load_directory``, the strict form, naming the file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from security_verifiers.core.errors import DatasetError
from security_verifiers.engines.configs import parse_kubernetes
from security_verifiers.engines.oracle import get_oracle
from security_verifiers.envs.config_audit.generation.generator import findings_records
from security_verifiers.envs.config_audit.loaders import LoadedDirectory, load_directory, load_directory_report

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
    oracle = get_oracle()
    for item in report.items:  # the label is the oracle's verdict on the text
        assert item.target["findings"] == findings_records(
            oracle.scan(item.input["platform"], item.input["text"]).findings)
    assert ("tf-aws-ebs-unencrypted", "aws_ebs_volume.data") in {
        (f["rule_id"], f["resource"]) for f in by_source["infra/ebs.tf"].target["findings"]}
    assert {f["resource"] for f in by_source["infra/kms.tf"].target["findings"]} <= {"aws_kms_key.main"}  # its own
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


# -- a real repository's mix: what becomes an item, what is skipped, what is a problem ---------------------------
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:latest
"""
KUBECTL_LIST = """\
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Pod
    metadata:
      name: a
    spec:
      hostPID: true
      containers:
        - name: c
          image: busybox
  - apiVersion: v1
    kind: Service
    metadata:
      name: svc
    spec:
      ports:
        - port: 80
metadata:
  resourceVersion: ""
"""
MODULE_MAIN = 'resource "aws_ebs_volume" "data" {\n  availability_zone = var.zone\n  encrypted = local.enc\n}\n'
MODULE_VARIABLES = 'variable "zone" {\n  default = "eu-west-1a"\n}\n'
MODULE_LOCALS = 'locals {\n  enc = false\n}\n'

REPO_FILES = {
    # items
    "k8s/deploy.yaml": DEPLOYMENT,
    "k8s/list.yaml": KUBECTL_LIST,
    "infra/main.tf": MODULE_MAIN,
    "infra/variables.tf": MODULE_VARIABLES,
    "infra/locals.tf": MODULE_LOCALS,
    "infra/outputs.tf": 'output "id" {\n  value = aws_ebs_volume.data.id\n}\n',
    "infra/vpc/main.tf": 'resource "aws_vpc" "main" {\n  cidr_block = "10.0.0.0/16"\n}\n',
    # skipped
    "chart/templates/unquoted.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
    "chart/templates/quoted.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Release.Name }}-x"\n',
    "chart/values.yaml": "replicaCount: 2\nimage:\n  tag: 1.0\n",
    "k8s/kustomization.yaml": "resources:\n  - deploy.yaml\n",
    "k8s/component.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
    "kind.yaml": "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: control-plane\n",
    "kubeadm.yaml": "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n",
    "kubelet.yaml": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n",
    "kubeconfig.yaml": "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n",
    "docker-compose.yml": "services:\n  web:\n    image: nginx\n",
    ".github/workflows/ci.yml": "on: push\njobs: {}\n",
    "empty.yaml": "# nothing yet\n",
    # problems
    "broken/tabs.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n\tcontainers: []\n",
    "broken/colon.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: c\nspec:\n  command: echo a: b\n",
    "broken/nameless.yaml": "apiVersion: v1\nkind: ConfigMap\ndata: {}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n"
                            "  generateName: job-\n",
    "broken/mixed.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nfoo: bar\n",
    "broken/broken.tf": 'resource "aws_s3_bucket" "b" {\n  bucket = \n}\n',
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    for rel, text in REPO_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "broken" / "latin1.yaml").write_bytes("apiVersion: v1\nkind: Pod\n# caf\xe9\n".encode("latin-1"))
    (root / "notes.md").write_text("not a config")
    return root


@pytest.fixture(scope="module")
def repo_report(repo: Path) -> LoadedDirectory:
    return load_directory_report(repo)


def test_every_config_is_an_item_and_nothing_else(repo_report: LoadedDirectory) -> None:
    assert [i.meta["source"] for i in repo_report.items] == [
        "infra/main.tf", "infra/vpc/main.tf", "k8s/deploy.yaml", "k8s/list.yaml"]
    assert repo_report.ignored == 1  # notes.md


@pytest.mark.parametrize(("rel", "reason"), [
    ("chart/templates/unquoted.yaml", "template: render first (helm template)"),
    ("chart/templates/quoted.yaml", "template: render first (helm template)"),  # parses, still a template
    ("chart/values.yaml", "not a Kubernetes manifest"),
    ("docker-compose.yml", "not a Kubernetes manifest"),
    (".github/workflows/ci.yml", "under a hidden directory"),
    ("k8s/kustomization.yaml", "tooling (kustomize)"),  # kustomize needs no apiVersion: known by its name
    ("k8s/component.yaml", "tooling (kustomize)"),
    ("kind.yaml", "tooling (kind cluster config)"),
    ("kubeadm.yaml", "tooling (kubeadm)"),
    ("kubelet.yaml", "tooling (component config kubelet.config.k8s.io)"),
    ("kubeconfig.yaml", "tooling (kubeconfig)"),
    ("empty.yaml", "empty"),
    ("infra/variables.tf", "no resource or data block (only variable)"),
    ("infra/locals.tf", "no resource or data block (only locals)"),
    ("infra/outputs.tf", "no resource or data block (only output)"),
])
def test_files_that_are_not_configs_are_skipped_with_the_reason(repo_report: LoadedDirectory, rel: str,
                                                                 reason: str) -> None:
    assert reason in dict(repo_report.skipped)[rel]


@pytest.mark.parametrize(("rel", "line", "reason"), [
    ("broken/tabs.yaml", 6, "indented with a tab"),
    ("broken/colon.yaml", 6, "quote a value that contains ': '"),
    ("broken/nameless.yaml", 1, "the ConfigMap document has no metadata.name"),
    ("broken/mixed.yaml", 5, "mixes Kubernetes objects with 1 other document"),
    ("broken/broken.tf", 2, "HCL does not parse"),
    ("broken/latin1.yaml", None, "cannot be read as UTF-8"),
])
def test_configs_that_cannot_be_read_are_problems_with_line_and_hint(repo_report: LoadedDirectory, rel: str,
                                                                     line: int | None, reason: str) -> None:
    problems = {p.file: p for p in repo_report.problems}
    assert len(problems) == 6
    assert problems[rel].line == line and reason in problems[rel].reason


def test_kubectl_list_becomes_the_documents_of_its_items(repo_report: LoadedDirectory) -> None:
    item = next(i for i in repo_report.items if i.meta["source"] == "k8s/list.yaml")
    assert [o.resource for o in parse_kubernetes(item.input["text"])] == ["Pod/a", "Service/svc"]
    assert item.meta["expanded_list"] is True and "kind: List" not in item.input["text"]
    assert ("k8s-host-pid", "Pod/a") in {(f["rule_id"], f["resource"]) for f in item.target["findings"]}


def test_terraform_items_carry_their_modules_variables_and_locals(repo_report: LoadedDirectory) -> None:
    by_source = {i.meta["source"]: i for i in repo_report.items}
    assert by_source["infra/main.tf"].input["context"] == [
        {"filename": "infra/locals.tf", "text": MODULE_LOCALS},
        {"filename": "infra/variables.tf", "text": MODULE_VARIABLES},
    ]  # sorted; outputs.tf declares neither; the sub-directory is another module
    assert "context" not in by_source["infra/vpc/main.tf"].input
    assert "context" not in by_source["k8s/deploy.yaml"].input


def test_a_directory_is_scanned_as_a_terraform_module(tmp_path: Path) -> None:
    """A sibling variables.tf resolves: an insecure default is a finding of the file that uses the variable, and a
    reference to a resource declared in another file of the module is a declared reference (the file is valid)."""
    root = tmp_path / "module"
    root.mkdir()
    (root / "variables.tf").write_text('variable "public" {\n  type    = bool\n  default = true\n}\n')
    (root / "kms.tf").write_text('resource "aws_kms_key" "db" {\n  description         = "db"\n'
                                 '  enable_key_rotation = true\n}\n')
    (root / "db.tf").write_text(
        'resource "aws_db_instance" "main" {\n  identifier          = "main"\n  engine              = "postgres"\n'
        '  instance_class      = "db.t3.micro"\n  publicly_accessible = var.public\n  storage_encrypted   = true\n'
        '  kms_key_id          = aws_kms_key.db.arn\n}\n')
    items = {i.meta["source"]: i for i in load_directory(root)}
    db = items["db.tf"]
    assert db.input["module_resources"] == ["aws_kms_key.db"]
    assert [c["filename"] for c in db.input["context"]] == ["variables.tf"]
    assert ("tf-aws-rds-public", "aws_db_instance.main") in {(f["rule_id"], f["resource"])
                                                            for f in db.target["findings"]}
    assert db.meta["valid"], db.meta.get("validation_errors")
    # without its module, the same file refers to things nobody declares
    alone = get_oracle().scan("terraform", db.input["text"])
    assert {issue.key[:2] for issue in alone.issues} == {("undeclared", "var"), ("undeclared", "resource")}
    # the module is the file's directory wherever the scan starts
    nested = {i.meta["source"]: i for i in load_directory_report(root / "..", split="x").items}
    assert nested["module/db.tf"].meta["valid"]
