"""`sv data import`: a user's own files become a dataset `sv eval --data` takes; what cannot be read is left out
and reported on stderr (exit 0), or fails the import with --strict (exit 1, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.datasets import content_hash, read_jsonl
from security_verifiers.envs.network_logs.reading import DEFAULT_MAX_HOSTS

NL_FIXTURES = Path(__file__).parent / "envs" / "network_logs" / "fixtures"

CONFIG_REPO = {
    "chart/templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n",
    "chart/templates/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Values.name }}"\n',
    "kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [app.yaml]\n",
    "cluster/kind.yaml": "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n",
    "cluster/kubeadm.yaml": "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\n---\n"
                            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
                            "kubernetesVersion: 1.30.0\n",
    # a removed API version and a custom resource: a valid item, the custom resource recorded as unchecked
    "legacy.yaml": "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n"
                   "  selector:\n    matchLabels: {app: agent}\n  template:\n    metadata:\n"
                   "      labels: {app: agent}\n"
                   "    spec:\n      containers: [{name: a, image: 'agent:1.0'}]\n---\n"
                   "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: agent\n"
                   "spec:\n  endpoints: [{port: metrics}]\n",
    "live.yaml": "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: p}\n"
                 "    spec:\n      containers: [{name: c, image: 'busybox:1.36'}]\n",
    "broken.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: b\nspec:\n  command: echo a: b\n",
    "app.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n"
                "    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n"
                "      containers:\n        - name: web\n          image: nginx:latest\n",
    "infra/main.tf": 'resource "aws_ebs_volume" "data" {\n  availability_zone = var.zone\n  encrypted = false\n}\n',
    "infra/variables.tf": 'variable "zone" {\n  default = "eu-west-1a"\n}\n',
}


@pytest.fixture(scope="module")
def config_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("configs")
    for rel, text in CONFIG_REPO.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_config_audit_import_reports_what_it_left_out_and_eval_takes_the_result(
        config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine.jsonl"
    assert main(["data", "import", "config-audit", str(config_repo), "--out", str(out), "--quiet"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert (summary["n"], summary["skipped"], summary["problems"]) == (4, 6, 1)
    for line in ("chart/templates/deploy.yaml: template: render first (helm template)",
                 "chart/templates/cm.yaml: template: render first (helm template)",
                 "kustomization.yaml: tooling (kustomize)", "cluster/kind.yaml: tooling (kind cluster config)",
                 "infra/variables.tf: no resource or data block (only variable)",
                 "cluster/kubeadm.yaml: tooling (kubeadm)", "broken.yaml:6: YAML does not parse",
                 "quote a value that contains ': '", "1 file(s) could not be read and were left out"):
        assert line in captured.err
    dataset = read_jsonl(out, "mine", expected_hash=summary["hash"])
    by_source = {i.meta["source"]: i for i in dataset.items}
    assert sorted(by_source) == ["app.yaml", "infra/main.tf", "legacy.yaml", "live.yaml"]
    legacy = by_source["legacy.yaml"]
    assert legacy.meta["valid"] and [u.split(":")[0] for u in legacy.meta["unchecked"]] == ["ServiceMonitor/agent"]
    assert ("k8s-removed-api-version", "DaemonSet/agent") in {(f["rule_id"], f["resource"])
                                                              for f in legacy.target["findings"]}
    assert by_source["infra/main.tf"].input["context"] == [
        {"filename": "infra/variables.tf", "text": CONFIG_REPO["infra/variables.tf"]}]
    assert "kind: List" not in by_source["live.yaml"].input["text"]
    assert {i.split for i in dataset.items} == {"local"}
    assert main(["eval", "config-audit", "--model", "baseline:autofix", "--data", str(out),
                 "--out", str(tmp_path / "runs"), "--quiet"]) == 0


def test_config_audit_strict_fails_and_writes_nothing(config_repo: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine.jsonl"
    assert main(["data", "import", "config-audit", str(config_repo), "--out", str(out), "--strict", "--quiet"]) == 1
    assert "1 problem(s) and --strict" in capsys.readouterr().err
    assert not out.exists() and not Path(str(out) + ".partial").exists()


def test_config_audit_import_of_a_missing_directory_is_an_error(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "import", "config-audit", str(tmp_path / "nope"), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "not a directory" in capsys.readouterr().err


# -- network-logs ------------------------------------------------------------------------------------
@pytest.fixture
def captures(tmp_path: Path) -> tuple[Path, Path]:
    """IoT-23 and CIC-IDS-2017 files in their real layouts, each with one malformed row."""
    iot = tmp_path / "CTU-IoT-1" / "conn.log.labeled"
    iot.parent.mkdir()
    text = (NL_FIXTURES / "iot23_conn.log.labeled").read_text()
    iot.write_text(text.replace("\tCx1c\t", "\t", 1))  # line 11 loses a cell
    cic = tmp_path / "Tuesday-WorkingHours.pcap_ISCX.csv"
    text = (NL_FIXTURES / "cicids2017_trafficlabelling.csv").read_text(encoding="utf-8")
    cic.write_text(text.replace("5/7/2017 9:20:30", "2017-07-05T09:20:30", 1), encoding="utf-8")  # line 5
    return iot, cic


def test_network_logs_import_skips_unreadable_rows_and_eval_runs(captures: tuple[Path, Path], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    iot, cic = captures
    out = tmp_path / "flows.jsonl"
    assert main(["data", "import", "network-logs", "--format", "iot23", str(iot), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"{iot}:11: 22 cells, expected 23" in captured.err and "rows/s" in captured.err
    summary = json.loads(captured.out)
    assert (summary["n"], summary["problems"], summary["rows"]) == (11, 1, 12)
    items = read_jsonl(out, "flows", expected_hash=summary["hash"]).items
    assert [i.meta["line"] for i in items] == [9, 10, 12, 13, 14, 15, 16, 17, 18, 19, 20]  # file order
    assert {i.meta["source"] for i in items} == {"conn.log.labeled"}
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--data", str(out),
                 "--out", str(tmp_path / "runs"), "--quiet"]) == 0

    out = tmp_path / "cic.jsonl"
    assert main(["data", "import", "network-logs", "--format", "cicids2017", str(cic), "--out", str(out),
                 "--quiet", "--split", "ood"]) == 0
    captured = capsys.readouterr()
    assert f"{cic}:5: column 'Timestamp'" in captured.err
    assert json.loads(captured.out)["n"] == 5  # 7 rows: one unreadable, one of IP protocol 0
    assert {i.split for i in read_jsonl(out, "cic").items} == {"ood"}
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--data", str(out),
                 "--out", str(tmp_path / "runs"), "--quiet"]) == 0


def test_network_logs_strict_and_limit(captures: tuple[Path, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    iot, _ = captures
    out = tmp_path / "flows.jsonl"
    argv = ["data", "import", "network-logs", "--format", "iot23", str(iot), "--out", str(out), "--quiet"]
    assert main([*argv, "--strict"]) == 1 and not out.exists()
    capsys.readouterr()
    assert main([*argv, "--limit", "3"]) == 0
    lines = out.read_text().splitlines()  # the header line, then the items
    assert json.loads(capsys.readouterr().out)["n"] == 3 and len(lines) == 4
    assert json.loads(lines[0])["sv_dataset"]["env"] == "network-logs"


def test_files_of_the_same_name_are_told_apart_by_their_directories(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # every IoT-23 capture is a conn.log.labeled: items cite the path below the files' common directory
    for capture in ("CTU-IoT-1", "CTU-IoT-2"):
        (tmp_path / capture).mkdir()
        (tmp_path / capture / "conn.log.labeled").write_text((NL_FIXTURES / "iot23_conn.log.labeled").read_text())
    out = tmp_path / "both.jsonl"
    files = [str(tmp_path / c / "conn.log.labeled") for c in ("CTU-IoT-1", "CTU-IoT-2")]
    assert main(["data", "import", "network-logs", "--format", "iot23", *files, "--out", str(out), "--quiet"]) == 0
    items = read_jsonl(out, "both").items  # unique ids, or this raises
    assert [i.meta["source"] for i in items] == [f"CTU-IoT-{n}/conn.log.labeled" for n in (1, 2) for _ in range(12)]
    assert json.loads(capsys.readouterr().out)["hash"] == content_hash(items)


IOT23 = str(NL_FIXTURES / "iot23_conn.log.labeled")


@pytest.mark.parametrize(("extra", "message"), [
    (["--format", "iot23", str(NL_FIXTURES / "cicids2017_machinelearningcve.csv")], "data before the #fields"),
    (["--format", "unsw-nb15", str(NL_FIXTURES / "nope.csv")], "not found"),
    (["--format", "iot23", IOT23, "--limit", "0"], "--limit"),
    (["--format", "iot23", IOT23, IOT23], "given twice"),
])
def test_network_logs_bad_input_is_a_clear_error(extra: list[str], message: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "import", "network-logs", *extra, "--out", str(tmp_path / "o.jsonl")]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("command", [["data", "import"], ["data", "import", "config-audit"],
                                     ["data", "import", "network-logs"]])
def test_import_commands_have_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    assert exc.value.code == 0
    help_text = capsys.readouterr().out
    assert "usage: sv" in help_text
    if command[-1] == "network-logs":
        assert f"{DEFAULT_MAX_HOSTS:,}" in help_text.replace("\n", " ")


# --- one generic command, built from what each environment declares ------------------------------------------


def test_the_help_names_every_environment_that_imports() -> None:
    """`sv data import --help` names the importing environments from a list written out (so that no `sv` command
    imports every environment to build its parser); it must be the registry's."""
    from security_verifiers.cli.data_import import IMPORTING, importing_environments

    assert sorted(IMPORTING) == sorted(importing_environments())


def test_an_environment_that_declares_an_importer_gets_the_command(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A new environment's importer is all it takes: arguments, progress, item check, writing and the summary."""
    from security_verifiers.core.importing import Argument, Importer, ImportRun, ImportSummary
    from security_verifiers.envs._template.env import TemplateEnvironment
    from security_verifiers.envs.base import registered

    seen: dict[str, object] = {}

    def run(values: dict[str, object], progress: object) -> ImportRun:
        seen.update(values)
        items = [i.model_copy(update={"split": "local"}) for i in TemplateEnvironment().generate("test", 3, seed=1)]
        return ImportRun(iter(items), lambda: ImportSummary(3, 0, ["3 item(s) from nowhere"], {"made": 3}))

    importer = Importer(help="made up", description="Items made up.", run=run,
                        arguments=(Argument(("--seed",), {"type": int, "required": True}),))

    class Importing(TemplateEnvironment):
        name = "importing-template"

        @classmethod
        def importer(cls) -> Importer:
            return importer

    out = tmp_path / "made.jsonl"
    with registered(Importing):
        assert main(["data", "import", "importing-template", "--seed", "5", "--out", str(out), "--quiet"]) == 0
        with pytest.raises(SystemExit) as usage:  # --seed is required: argparse's usage error, exit status 2
            main(["data", "import", "importing-template", "--out", str(out)])
        assert usage.value.code == 2
    summary = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (summary["env"], summary["n"], summary["made"], seen["seed"]) == ("importing-template", 3, 3, 5)
    assert [i.split for i in read_jsonl(out, "made", expected_hash=summary["hash"]).items] == ["local"] * 3
