"""E1's robustness split: named rewrites that keep what the baselines read, paired by `sv robust`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.kits.robust import Rewrite, clean_id
from security_verifiers.envs.network_logs.capture import FIELDS
from security_verifiers.envs.network_logs.env import NetworkLogs
from security_verifiers.envs.network_logs.features import features
from security_verifiers.envs.network_logs.presentation import read_tables
from security_verifiers.envs.network_logs.sites import is_internal
from security_verifiers.envs.phishing.env import Phishing

ENV = NetworkLogs()
KINDS = ("address_renumbering", "time_shift", "field_order", "timestamp_format", "duration_unit")


def _addresses(item_input: dict) -> list[str]:
    flows = [item_input["flow"], *item_input["window"]]
    return [item_input["host"]["ip"], *(f[k] for f in flows for k in ("id.orig_h", "id.resp_h"))]


def test_the_robust_split_rewrites_every_test_item_keeping_its_label_and_features() -> None:
    clean = {i.id: i for i in ENV.dataset("test").items}
    robust = ENV.dataset("robust").items
    assert len(robust) == len(KINDS) * len(clean)
    moved_addresses = moved_clock = 0
    for item in robust:
        of, kind = clean_id(item.id)
        original = clean[of]
        assert item.split == "robust" and item.meta["rewrite"] == kind and item.target == original.target
        assert features(item.input) == features(original.input)
        if kind == "address_renumbering":
            before, after = _addresses(original.input), _addresses(item.input)
            assert [is_internal(a) for a in before] == [is_internal(a) for a in after]
            # one bijection: two flows share a server after exactly when they did before
            assert len(set(zip(before, after, strict=True))) == len(set(before)) == len(set(after))
            moved_addresses += before != after
        elif kind == "time_shift":
            shift = item.input["flow"]["ts"] - original.input["flow"]["ts"]
            assert shift != 0 and abs(round(shift / 86_400) * 86_400 - shift) < 1e-3
            moved_clock += 1
        else:  # a presentation: the same records, other spellings
            assert {k: v for k, v in item.input.items() if k != "presentation"} == original.input
    assert moved_addresses >= 0.95 * len(clean) and moved_clock == len(clean)
    assert [i.id for i in ENV.dataset("robust").items] == [i.id for i in robust]  # deterministic


def test_a_rewrite_that_changes_what_is_read_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def outward(item_input: dict, rng: object) -> dict:
        item_input["flow"]["id.resp_h"] = "10.9.9.9" if not is_internal(item_input["flow"]["id.resp_h"]) else "8.8.8.8"
        return item_input

    monkeypatch.setattr(NetworkLogs, "rewrites", lambda self: (Rewrite("outward", "inside <-> outside", outward),))
    with pytest.raises(DatasetError, match="rewrite.*would change what is scored.*features"):
        NetworkLogs().dataset("robust")


def test_an_environment_without_rewrites_has_no_robust_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Phishing, "rewrites", lambda self: ())
    with pytest.raises(DatasetError, match="unknown split 'robust' for phishing"):
        Phishing().dataset("robust")


def test_sv_robust_pairs_each_clean_item_with_its_rewrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--split", "test,robust", "--limit", "20",
                 "--out", str(out), "--run-id", "r", "--quiet"]) == 0
    run = out / "evals" / "network-logs--baseline-heuristic" / "r"
    capsys.readouterr()
    assert main(["robust", str(run), "--json", "--n-boot", "50"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["kinds"]) == set(KINDS)
    for row in result["kinds"].values():
        assert row["items"] == 4  # the first 20 robust items are the first 4 test items' five rewrites
        reward = row["metrics"]["reward_mean"]
        assert reward["delta"] == 0.0 and reward["ci"] == [0.0, 0.0]  # the heuristic reads what is unchanged
    clean_only = out / "evals" / "network-logs--baseline-heuristic" / "c"
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--limit", "5", "--out", str(out),
                 "--run-id", "c", "--quiet"]) == 0
    assert main(["robust", str(clean_only)]) == 2
    assert "no rewritten items" in capsys.readouterr().err


def _prompt(item: Item, style: str = "full") -> str:
    return NetworkLogs(NetworkLogs.config_class(prompt_style=style)).prompt(item)[1].content


def test_presentations_spell_the_same_records_as_other_tools_do() -> None:
    robust = {i.id: i for i in ENV.dataset("robust").items}
    item = ENV.dataset("test").items[0]
    zeek = _prompt(item).split("\n")
    header = zeek.index("Connection to classify:") + 1
    zeek_row = dict(zip(zeek[header].split("\t"), zeek[header + 1].split("\t"), strict=True))

    reordered = _prompt(robust[f"{item.id}~field_order"]).split("\n")
    assert reordered[header] != zeek[header] and sorted(reordered[header].split("\t")) == sorted(FIELDS)
    assert dict(zip(reordered[header].split("\t"), reordered[header + 1].split("\t"), strict=True)) == zeek_row

    iso = _prompt(robust[f"{item.id}~timestamp_format"]).split("\n")
    ts = iso[header + 1].split("\t")[0]
    stamp = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    assert ts.endswith("Z") and abs(stamp.timestamp() - float(zeek_row["ts"])) < 1e-6

    ms = _prompt(robust[f"{item.id}~duration_unit"]).split("\n")
    cells = dict(zip(ms[header].split("\t"), ms[header + 1].split("\t"), strict=True))
    assert "duration" not in cells and float(cells["duration_ms"]) == pytest.approx(float(zeek_row["duration"]) * 1000)
    compact = _prompt(robust[f"{item.id}~duration_unit"], "compact")
    assert "duration_ms" in compact and "duration_ms" not in _prompt(item, "compact")


def test_a_presentation_that_loses_a_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import security_verifiers.envs.network_logs.presentation as presentation

    # ISO times without their fraction of a second: a spelling that drops what the epoch seconds said
    monkeypatch.setattr(presentation, "_iso",
                        lambda ts: datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    with pytest.raises(DatasetError, match="timestamp_format: its prompt does not read back"):
        NetworkLogs().dataset("robust")


def test_read_tables_reads_every_spelling_back_into_zeeks() -> None:
    prose, rows = read_tables("Host x\nts\tduration_ms\thistory\n2024-07-25T03:11:41.5Z\t706\t\n"
                              "last:\n1721877101.5\t-\tDd")
    assert prose == ["Host x", "<table>", "last:"]
    assert rows == [{"ts": "1721877101.5", "duration": "0.706", "history": ""},
                    {"ts": "1721877101.5", "duration": None, "history": "Dd"}]
