"""Every environment's item contract: its data meets it, other environments' items do not, loaders enforce it,
dataset files say which environment they are for, and `sv envs --json` publishes it as JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from security_verifiers.cli import main
from security_verifiers.core.datasets import content_hash, dataset_header, read_jsonl, write_jsonl
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.base import ItemContract, get_env, registry
from security_verifiers.envs.network_logs.loaders import load_iot23
from tests.helpers import e1_item

ENVS = sorted(registry())


def _public_items(name: str) -> list[Item]:
    env = get_env(name)
    return [item for split in env.public_splits for item in env.dataset(split).items]


@pytest.mark.parametrize("name", ENVS)
def test_every_environment_declares_a_contract_its_public_data_meets(name: str) -> None:
    cls = registry()[name]
    assert isinstance(cls.item_contract, ItemContract)
    items = _public_items(name)  # dataset() validates; a second look, item by item
    assert items and all(cls.item_contract.problem(item) is None for item in items)


@pytest.mark.parametrize("name", ENVS)
def test_another_environments_items_are_named_as_such(name: str, tmp_path: Path) -> None:
    cls = registry()[name]
    for other in ENVS:
        if other == name:
            continue
        items = _public_items(other)[:3]
        path = tmp_path / f"{other}.jsonl"
        write_jsonl(items, path)  # no header: caught item by item
        with pytest.raises(DatasetError, match=rf"{path} holds {other} items, not {name} items \(first at "
                           rf"{path}:1; 2 more like it\)"):
            cls.read_dataset(path)
        write_jsonl(items, path, dataset_header(other, registry()[other].version))  # caught by the header
        with pytest.raises(DatasetError, match=rf"{path} holds {other} items \(its header says {other} "):
            cls.read_dataset(path)


def test_the_first_bad_item_is_named_with_its_line_and_the_others_counted(tmp_path: Path) -> None:
    good = [e1_item(i) for i in range(3)]
    bad = [e1_item(10 + i).model_copy(update={"target": {"label": "Malicious", "family": "benign_dns",
                                                          "p_malicious": 1.0}}) for i in range(2)]
    path = tmp_path / "mixed.jsonl"
    write_jsonl([*good, *bad], path, dataset_header("network-logs", get_env("network-logs").version))
    with pytest.raises(DatasetError, match=rf"{path}:5: not a valid network-logs item: target: Value error, family "
                       r"'benign_dns' is Benign, but the label is Malicious \(1 more invalid item\(s\) after it\)"):
        get_env("network-logs").read_dataset(path)


def test_the_header_leaves_the_hash_of_the_items_unchanged(tmp_path: Path) -> None:
    items = [e1_item(i) for i in range(5)]
    bare, headed = tmp_path / "bare.jsonl", tmp_path / "headed.jsonl"
    assert write_jsonl(items, bare) == write_jsonl(items, headed, dataset_header("network-logs", "1.1.0")) \
        == content_hash(items)
    dataset = read_jsonl(headed, "h", expected_hash=content_hash(items))
    assert dataset.header is not None and dataset.header["env"] == "network-logs"
    assert read_jsonl(bare, "b").header is None and list(dataset.items) == items


def test_a_header_of_another_major_version_is_refused_and_a_minor_one_noted(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    env = get_env("network-logs")
    major, minor = env.version.split(".")[:2]
    path = tmp_path / "old.jsonl"
    write_jsonl([e1_item(0)], path, dataset_header(env.name, f"{int(major) + 1}.0.0"))
    with pytest.raises(DatasetError, match="a major version whose items differ"):
        env.read_dataset(path)
    other_minor = f"{major}.{int(minor) + 1}.0"
    write_jsonl([e1_item(0)], path, dataset_header(env.name, other_minor))
    assert main(["eval", env.name, "--model", "baseline:reference", "--data", str(path), "--out",
                 str(tmp_path / "o"), "--quiet"]) == 0
    assert f"was written for network-logs {other_minor}" in capsys.readouterr().err


def test_a_loader_row_that_breaks_the_contract_is_a_row_error(tmp_path: Path) -> None:
    fields = ("ts uid id.orig_h id.orig_p id.resp_h id.resp_p proto service duration orig_bytes resp_bytes "
              "conn_state local_orig local_resp missed_bytes history orig_pkts orig_ip_bytes resp_pkts "
              "resp_ip_bytes tunnel_parents label detailed-label").split()
    row = ["1.5", "C1", "10.0.0.1", "1234", "10.0.0.2", "80", "sctp", "-", "0.1", "10", "20", "SF", "-", "-", "0",
           "ShADad", "3", "100", "3", "100", "-", "Benign", "-"]
    path = tmp_path / "conn.log.labeled"
    path.write_text("#separator \\x09\n#fields\t" + "\t".join(fields) + "\n" + "\t".join(row) + "\n")
    with pytest.raises(DatasetError, match=r"conn.log.labeled:3: not a valid network-logs item: input.flow.proto"):
        load_iot23(path)


def test_sv_data_build_writes_a_header_and_validated_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nl.jsonl"
    assert main(["data", "build", "network-logs", "--split", "dev", "--n", "4", "--seed", "3", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    header = json.loads(out.read_text().splitlines()[0])["sv_dataset"]
    assert header["env"] == "network-logs" and header["env_version"] == get_env("network-logs").version
    assert get_env("network-logs").read_dataset(out, expected_hash=summary["hash"]).header == header
    assert not list(tmp_path.glob("*.partial"))


def test_sv_envs_json_gives_schemas_that_public_items_and_answers_meet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["envs", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert sorted(rows) == ENVS
    for name, row in rows.items():
        schemas = row["schemas"]
        assert set(schemas) == {"item", "input", "target", "answer"}
        for item in _public_items(name)[:20]:
            jsonschema.validate(item.model_dump(mode="json"), schemas["item"])
        other = next(n for n in ENVS if n != name)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(_public_items(other)[0].model_dump(mode="json"), schemas["item"])
    answer = {"label": "Benign", "p_malicious": 0.1}
    jsonschema.validate(answer, rows["network-logs"]["schemas"]["answer"])
    jsonschema.validate({"findings": [{"rule_id": "k8s-host-pid", "resource": "Pod/a"}], "patch": ""},
                        rows["config-audit"]["schemas"]["answer"])
