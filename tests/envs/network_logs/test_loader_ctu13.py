"""The CTU-13 reader (``--format ctu13``): the fixture (invented rows in the ``.binetflow`` layout, with its
quirks: hex ports, empty ports for ICMP and ARP, ``<?>`` and ``<-`` directions, padded cells, the three label
classes) parses into contract items; Background flows are counted, never items; malformed variants fail with a
DatasetError naming file and line, or the missing columns."""

from collections.abc import Callable
from pathlib import Path

import pytest

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import DatasetError
from security_verifiers.envs.network_logs.env import FIELDS
from security_verifiers.envs.network_logs.families import CTU13_LABELS, FAMILIES
from security_verifiers.envs.network_logs.loaders import FORMATS, Ctu13File, _argus_tcp_state, load_ctu13
from security_verifiers.envs.network_logs.reading import RowError, stream_items

CTU13 = Path(__file__).parent / "fixtures" / "ctu13_capture.binetflow"


def _variant(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    out = tmp_path / CTU13.name
    out.write_text(edit(CTU13.read_text(encoding="utf-8")), encoding="utf-8")
    return out


def test_ctu13_fixture() -> None:
    items = load_ctu13(CTU13, split="dev")
    Dataset(id="loaded", items=items, splits=("dev",))  # unique ids, contract items
    assert all(tuple(i.input["flow"]) == FIELDS for i in items)
    by_line = {i.meta["line"]: i for i in items}
    # Background (2, 16) and the protocols outside TCP/UDP/ICMP (ARP 11, RTP 15, IGMP 17) are not items
    assert sorted(by_line) == [3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14]
    cc = by_line[7]
    assert cc.input["host"] == {"ip": "147.32.84.165", "role": "unknown"}
    assert cc.input["flow"] == {
        "ts": 1313488909.0,  # 2011-08-16 10:01:49 on the capture's clock, read as UTC
        "id.orig_h": "147.32.84.165",
        "id.orig_p": 1027,
        "id.resp_h": "203.0.113.138",
        "id.resp_p": 65500,
        "proto": "tcp",
        "service": None,
        "duration": 12.45,
        "orig_bytes": 470,  # SrcBytes
        "resp_bytes": 570,  # TotBytes - SrcBytes
        "conn_state": "RSTO",  # SRPA_FSPA: opened by both, reset by the originator
        "history": "",
        "orig_pkts": 0,  # only TotPkts is recorded: placeholders, listed as unrecorded
        "resp_pkts": 0,
    }
    assert cc.target == {"label": "Malicious", "family": "cc_channel", "p_malicious": 1.0}
    assert [f["id.orig_p"] for f in cc.input["window"]] == [1025, 1026]  # the bot's earlier flows
    assert {i.input["capture"]["ts_resolution"] for i in items} == {1e-06}
    assert {tuple(i.input["capture"]["unrecorded"]) for i in items} == {("service", "history", "orig_pkts",
                                                                         "resp_pkts")}
    assert {(i.meta["dataset"], i.meta["source"]) for i in items} == {("ctu-13", "ctu13_capture.binetflow")}


# line -> (label, family, proto, conn_state, orig_p, resp_p), one per quirk of the layout
EXPECTED = {
    3: ("Benign", "benign", "udp", "SF", 61997, 53),  # UDP CON: both directions
    4: ("Benign", "benign", "tcp", "SF", 1043, 443),  # FSPA_FSPA: opened and closed by both
    5: ("Malicious", "botnet", "tcp", "S0", 1025, 25),  # S_: a spam SYN nobody answered
    6: ("Malicious", "botnet", "tcp", "REJ", 1026, 25),  # S_RA: refused
    8: ("Benign", "benign", "icmp", "OTH", 3, 3),  # Sport 0x0303: ICMP type 3 code 3 (port unreachable)
    9: ("Benign", "benign", "icmp", "OTH", 8, 0),  # Sport 0x0008: echo request
    10: ("Benign", "benign", "icmp", "OTH", 0, 0),  # empty Sport (``<-``: only the other side spoke)
    12: ("Malicious", "botnet", "udp", "S0", 0x0D3C, 53),  # hex source port, INT: a request alone
    13: ("Malicious", "botnet", "tcp", "OTH", 443, 1028),  # To-Botnet, <?>: began before the capture
    14: ("Benign", "benign", "udp", "SF", 123, 123),  # padded State and Label cells
}


@pytest.mark.parametrize("line", sorted(EXPECTED))
def test_ctu13_rows(line: int) -> None:
    item = next(i for i in load_ctu13(CTU13) if i.meta["line"] == line)
    flow = item.input["flow"]
    assert (item.target["label"], item.target["family"], flow["proto"], flow["conn_state"], flow["id.orig_p"],
            flow["id.resp_p"]) == EXPECTED[line]


def test_ctu13_bytes_per_direction_and_the_only_other_sides_flow() -> None:
    by_line = {i.meta["line"]: i.input["flow"] for i in load_ctu13(CTU13)}
    assert (by_line[3]["orig_bytes"], by_line[3]["resp_bytes"]) == (74, 162)
    assert (by_line[10]["orig_bytes"], by_line[10]["resp_bytes"]) == (0, 196)  # SrcBytes 0: ``<-``


def test_ctu13_background_is_counted_not_an_item() -> None:
    """Background flows were never checked: counted as unlabelled (and ignored), never Benign."""
    with Ctu13File(CTU13) as file:
        out = list(stream_items([file], "test"))
    assert not any(isinstance(o, RowError) for o in out)
    assert (file.rows, len(out), file.ignored, file.unlabelled) == (16, 11, 5, 2)
    assert FORMATS["ctu13"] is Ctu13File


ARGUS_TCP_STATES = [
    ("S_", "S0"),  # a SYN nobody answered
    ("S_RA", "REJ"),  # answered by a reset
    ("S_A", "OTH"),  # answered without SYN or reset: not a connection Zeek would name
    ("FSPA_FSPA", "SF"),  # opened and closed by both
    ("SPA_SPA", "S1"),  # opened, still open at the end
    ("FSA_SA", "S2"),  # closed by the originator only
    ("SA_FSA", "S3"),  # closed by the responder only
    ("SR_SA", "RSTO"),  # opened, reset by the originator
    ("FSA_SRA", "RSTR"),  # opened, reset by the responder
    ("PA_PA", "OTH"),  # midstream: opened before the capture
    ("FPA_", "OTH"),  # midstream, one-way
    ("CON", "S1"),  # Argus' summary states, read as UNSW-NB15's
    ("FIN", "SF"),
    ("REQ", "S0"),
    ("RST", "RSTO"),
]


@pytest.mark.parametrize(("state", "zeek"), ARGUS_TCP_STATES)
def test_argus_tcp_states(state: str, zeek: str) -> None:
    assert _argus_tcp_state(state) == zeek


def test_ctu13_label_words() -> None:
    """Every word the reader reads names a family of the taxonomy, of the right label; Background none."""
    assert set(CTU13_LABELS.values()) <= set(FAMILIES)
    assert FAMILIES[CTU13_LABELS["normal"]][0] == "Benign"
    assert {FAMILIES[CTU13_LABELS[w]][0] for w in ("botnet", "cc", "irc")} == {"Malicious"}
    assert "background" not in CTU13_LABELS


CTU13_MALFORMED = [
    # not a binetflow file: the missing columns are named
    (lambda t: t.replace("SrcBytes", "Bytes", 1).replace("Label", "Class", 1),
     r"ctu13_capture.binetflow:1: missing required column\(s\) SrcBytes, Label of a CTU-13"),
    # a label of none of the three classes
    (lambda t: t.replace("flow=From-Normal-V47-Grill\n", "flow=Legitimate\n", 1),
     r":4: unknown label 'flow=Legitimate'"),
    # a label naming two classes
    (lambda t: t.replace("flow=To-Botnet-V47", "flow=Normal-To-Botnet-V47", 1), r":13: unknown label"),
    # more bytes from the source than in total
    (lambda t: t.replace(",2,236,74,", ",2,236,740,", 1), r":3: SrcBytes 740 exceeds TotBytes 236"),
    # an unreadable start time
    (lambda t: t.replace("2011/08/16 10:01:47.200000", "16/08/2011 10:01:47", 1), r":4: column 'StartTime'"),
    # an unreadable port
    (lambda t: t.replace(",0x0d3c,", ",0xzz,", 1), r":12: column 'Sport'"),
    # a row with one cell fewer
    (lambda t: t.replace(",CON ,0,0,", ",CON ,0,", 1), r":14: 14 cells, expected 15"),
]


@pytest.mark.parametrize(("edit", "message"), CTU13_MALFORMED)
def test_ctu13_malformed(tmp_path: Path, edit: Callable[[str], str], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        load_ctu13(_variant(tmp_path, edit))


def test_the_benchmark_detects_a_binetflow_file() -> None:
    """benchmarks/e1_sim_to_real.py reads a CTU-13 file without FORMAT:PATH (Argus' SrcBytes and TotBytes)."""
    import importlib.util

    path = Path(__file__).resolve().parents[3] / "benchmarks" / "e1_sim_to_real.py"
    spec = importlib.util.spec_from_file_location("e1_sim_to_real", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.detect_layout(CTU13) == "ctu13"
