"""Loaders of IoT-23, CIC-IDS-2017 and UNSW-NB15: the fixtures (invented rows in the real layouts) parse
into contract items, and malformed variants fail with a DatasetError naming file and line."""

from collections.abc import Callable
from pathlib import Path

import pytest

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.network_logs.env import FIELDS
from security_verifiers.envs.network_logs.loaders import load_cicids2017, load_iot23, load_unsw_nb15

FIXTURES = Path(__file__).parent / "fixtures"
IOT23 = FIXTURES / "iot23_conn.log.labeled"
CIC_ADDRESSED = FIXTURES / "cicids2017_trafficlabelling.csv"
CIC_ML = FIXTURES / "cicids2017_machinelearningcve.csv"
UNSW_SET = FIXTURES / "unsw_nb15_training_set.csv"
UNSW_RAW = FIXTURES / "unsw_nb15_raw.csv"


def _check_contract(items: list[Item], split: str = "test") -> None:
    Dataset(id="loaded", items=items, splits=(split,))  # unique ids
    for item in items:
        assert item.split == split
        assert tuple(item.input["flow"]) == FIELDS
        for flow in item.input["window"]:
            assert flow["id.orig_h"] == item.input["host"]["ip"] and flow["ts"] <= item.input["flow"]["ts"]
        assert item.target["p_malicious"] == (1.0 if item.target["label"] == "Malicious" else 0.0)


def _variant(tmp_path: Path, source: Path, edit: Callable[[str], str], encoding: str = "utf-8") -> Path:
    out = tmp_path / source.name
    out.write_bytes(edit(source.read_text(encoding="utf-8")).encode(encoding))
    return out


# -- IoT-23 -----------------------------------------------------------------------------------------
def test_iot23_fixture() -> None:
    items = load_iot23(IOT23, split="dev")
    _check_contract(items, "dev")
    assert len(items) == 12
    by_line = {i.meta["line"]: i for i in items}
    scan = by_line[11]
    assert scan.input["host"] == {"ip": "192.168.7.21", "role": "iot_device"}
    assert scan.input["flow"] == {
        "ts": 1600000001.26,
        "id.orig_h": "192.168.7.21",
        "id.orig_p": 51001,
        "id.resp_h": "198.51.100.4",
        "id.resp_p": 23,
        "proto": "tcp",
        "service": None,
        "duration": 2.998,
        "orig_bytes": 0,
        "resp_bytes": 0,
        "conn_state": "S0",
        "history": "S",
        "orig_pkts": 3,
        "resp_pkts": 0,
    }
    assert [f["ts"] for f in scan.input["window"]] == [1600000000.1, 1600000001.25]
    assert scan.target == {"label": "Malicious", "family": "portscan_horizontal", "p_malicious": 1.0}
    assert by_line[10].input["flow"]["duration"] is None and by_line[10].input["flow"]["orig_bytes"] is None
    assert by_line[16].input["flow"]["history"] == "" and by_line[16].target["label"] == "Benign"  # "benign"
    assert {by_line[n].target["family"] for n in (13, 14, 19, 20)} == {
        "cc_heartbeat",
        "malware_download",
        "botnet",  # Okiru: a bot's traffic of no recorded purpose
        "malicious_unspecified",
    }
    assert {i.input["capture"]["ts_resolution"] for i in items} == {1e-06}  # Zeek: microseconds, every field
    assert all(i.input["capture"]["unrecorded"] == [] for i in items)
    assert by_line[17].input["window"] == []  # the other host's first flow
    # each item cites its dataset, file and line
    assert {(i.meta["dataset"], i.meta["source"]) for i in items} == {("iot-23", "iot23_conn.log.labeled")}


def test_iot23_tab_separated_label_columns_parse_the_same(tmp_path: Path) -> None:
    tabs = _variant(tmp_path, IOT23, lambda text: text.replace("   ", "\t"))
    assert load_iot23(tabs) == load_iot23(IOT23)


IOT23_MALFORMED = [
    # no #fields header: cannot know the columns
    (
        lambda t: "\n".join(x for x in t.splitlines() if not x.startswith("#fields")),
        "data before the #fields",
    ),
    # a required column renamed away
    (lambda t: t.replace("\thistory\t", "\thist\t", 1), "missing required column.*history"),
    # a row with one cell fewer
    (lambda t: t.replace("\tCx1c\t", "\t", 1), r"iot23_conn.log.labeled:11: 22 cells, expected 23"),
    # an unparseable timestamp
    (lambda t: t.replace("1600000001.300000", "16000x0001.3", 1), r":12: column 'ts'"),
    # an unparseable byte count
    (lambda t: t.replace("\t38\t102\t", "\tthirty\t102\t", 1), r":9: column 'orig_bytes'"),
    # a label that is neither Malicious nor Benign
    (lambda t: t.replace("-   Malicious   Okiru", "-   Suspicious   Okiru", 1), r":19: unknown label"),
    # a detailed label outside IoT-23's published set: an error, never a new family name
    (lambda t: t.replace("Malicious   Okiru", "Malicious   Okiru-Spam", 1), r":19: unknown detailed-label"),
]


@pytest.mark.parametrize(("edit", "message"), IOT23_MALFORMED)
def test_iot23_malformed(tmp_path: Path, edit: Callable[[str], str], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        load_iot23(_variant(tmp_path, IOT23, edit))


def test_iot23_without_any_header_or_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("#separator \\x09\n")
    with pytest.raises(DatasetError, match="no #fields header"):
        load_iot23(empty)
    with pytest.raises(DatasetError, match="not found"):
        load_iot23(tmp_path / "missing.log")


# -- CIC-IDS-2017 -----------------------------------------------------------------------------------
def test_cicids2017_with_addresses() -> None:
    items = load_cicids2017(CIC_ADDRESSED)
    _check_contract(items)
    assert len(items) == 6  # the IP-protocol-0 row is skipped
    ftp = [i for i in items if i.target["family"] == "ftp_bruteforce"]
    assert len(ftp) == 2 and len(ftp[1].input["window"]) == 1
    first = items[0].input["flow"]
    assert first["ts"] == 1499245260.0 and first["duration"] == 0.802211 and first["conn_state"] == "SF"
    assert (first["orig_bytes"], first["resp_bytes"], first["orig_pkts"], first["resp_pkts"]) == (
        410,
        9800,
        6,
        5,
    )
    # afternoon hours without PM ("1:15") sort after the morning
    host5 = [i for i in items if i.input["host"]["ip"] == "172.16.9.5"]
    assert [i.input["flow"]["id.resp_p"] for i in host5] == [80, 53, 443] and len(
        host5[2].input["window"]
    ) == 2
    ddos = next(i for i in items if i.target["family"] == "ddos_flood")
    assert ddos.input["flow"]["conn_state"] == "S0" and ddos.input["flow"]["ts"] == 1499269200.0
    # minutes (one row of the file has seconds); an item's resolution is the coarsest of its flow and window
    assert {i.input["capture"]["ts_resolution"] for i in items} == {60.0}
    assert ftp[1].input["flow"]["ts"] == 1499246430.0  # 9:20:30, after the 9:20 flow in its window
    assert all(i.input["capture"]["unrecorded"] == ["service", "history"] for i in items)


def test_cicids2017_without_addresses() -> None:
    items = load_cicids2017(CIC_ML)
    _check_contract(items)
    assert len(items) == 6  # the all-empty row is ignored
    assert {i.input["host"]["ip"] for i in items} == {"unknown"}
    assert all(i.input["window"] == [] for i in items)
    families = [i.target["family"] for i in items]
    assert families == ["benign", "ssh_bruteforce", "portscan_vertical", "benign", "http_slowloris",
                        "web_bruteforce"]
    assert [i.input["flow"]["proto"] for i in items][3] == "udp"  # no TCP flags: UDP
    # no clock at all: no ts (never a made-up 0), and the prompt is told what is missing
    assert all(i.input["flow"]["ts"] is None for i in items)
    assert {(i.input["capture"]["ts_resolution"], tuple(i.input["capture"]["unrecorded"])) for i in items} == {
        (None, ("ts", "id.orig_h", "id.orig_p", "id.resp_h", "service", "history"))}


def test_cicids2017_cp1252_web_attack_label(tmp_path: Path) -> None:
    cp1252 = _variant(tmp_path, CIC_ML, lambda t: t.replace("\ufffd", "\u2013"), encoding="cp1252")
    assert load_cicids2017(cp1252)[-1].target["family"] == "web_bruteforce"


CIC_MALFORMED = [
    # the label column renamed away
    (CIC_ML, lambda t: t.replace(" Label", " Verdict", 1), r":1: missing required column.*Label"),
    # a row with one cell fewer
    (CIC_ML, lambda t: t.replace(",SSH-Patator", "SSH-Patator", 1), r":3: 78 cells, expected 79"),
    # an unparseable flow duration
    (CIC_ML, lambda t: t.replace("22,3500000,", "22,3.5e6x,", 1), r":3: column 'Flow Duration'"),
    # a label outside the dataset's vocabulary
    (CIC_ML, lambda t: t.replace("DoS slowloris", "DoS teardrop", 1), r":6: unknown label 'DoS teardrop'"),
    # a timestamp in another format
    (
        CIC_ADDRESSED,
        lambda t: t.replace("5/7/2017 9:20:30", "2017-07-05T09:20:30", 1),
        r":5: column 'Timestamp'",
    ),
    # an impossible date
    (CIC_ADDRESSED, lambda t: t.replace("5/7/2017 9:02", "35/7/2017 9:02", 1), r":3: .*not a date"),
    # addresses without timestamps: a half-converted file
    (CIC_ADDRESSED, lambda t: t.replace(" Timestamp", " When", 1), r":1: has .* but lacks Timestamp"),
]


@pytest.mark.parametrize(("source", "edit", "message"), CIC_MALFORMED)
def test_cicids2017_malformed(tmp_path: Path, source: Path, edit: Callable[[str], str], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        load_cicids2017(_variant(tmp_path, source, edit))


# -- UNSW-NB15 --------------------------------------------------------------------------------------
def test_unsw_training_set_form() -> None:
    items = load_unsw_nb15(UNSW_SET)
    _check_contract(items)
    assert len(items) == 6  # the ARP row is skipped
    assert [i.target["family"] for i in items] == [
        "benign",
        "crypto_attack",  # UNSW-NB15's "Generic": attacks on block ciphers
        "exploit",
        "benign",
        "reconnaissance",
        "backdoor",
    ]
    assert all(i.input["flow"]["ts"] is None and i.input["capture"]["ts_resolution"] is None for i in items)
    states = [i.input["flow"]["conn_state"] for i in items]
    assert states == ["SF", "S0", "SF", "SF", "S0", "SF"]  # FIN, INT, FIN, udp CON, REQ, FIN
    assert items[2].input["flow"]["service"] == "http" and items[0].input["flow"]["service"] is None


def test_unsw_raw_form() -> None:
    items = load_unsw_nb15(UNSW_RAW, split="ood")
    _check_contract(items, "ood")
    assert len(items) == 6
    fuzz = next(i for i in items if i.target["family"] == "fuzzing")
    assert (fuzz.input["flow"]["id.orig_p"], fuzz.input["flow"]["id.resp_p"]) == (11, 49320)  # hex ports
    icmp = next(i for i in items if i.input["flow"]["proto"] == "icmp")
    assert icmp.input["flow"]["conn_state"] == "OTH" and icmp.input["flow"]["id.orig_p"] == 0  # "-" port
    last = items[-1]
    assert last.input["host"]["ip"] == "10.40.0.3" and len(last.input["window"]) == 2
    assert last.input["capture"] == {"ts_resolution": 1.0, "unrecorded": ["history"]}  # Argus: whole seconds


UNSW_MALFORMED = [
    # a raw row with one cell fewer
    (UNSW_RAW, lambda t: t.replace("10.40.1.9,1024,", "10.40.1.9,", 1), r":2: 48 cells, expected 49"),
    # a label other than 0/1
    (UNSW_RAW, lambda t: t.replace("Exploits,1", "Exploits,2", 1), r":4: unknown label '2'"),
    # an attack category UNSW-NB15 does not have
    (UNSW_RAW, lambda t: t.replace("Exploits,1", "Phishing,1", 1), r":4: unknown attack_cat 'Phishing'"),
    # an unparseable duration
    (UNSW_SET, lambda t: t.replace("0.121478", "0.12.1478", 1), r":2: column 'dur'"),
    # a header without attack_cat is neither form
    (UNSW_SET, lambda t: t.replace("attack_cat", "category", 1), r":1: neither a header with attack_cat"),
    # a training-set header missing a required column
    (UNSW_SET, lambda t: t.replace(",dbytes,", ",dbytez,", 1), r":1: missing required column.*dbytes"),
]


@pytest.mark.parametrize(("source", "edit", "message"), UNSW_MALFORMED)
def test_unsw_malformed(tmp_path: Path, source: Path, edit: Callable[[str], str], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        load_unsw_nb15(_variant(tmp_path, source, edit))


def test_empty_csv_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    for loader in (load_cicids2017, load_unsw_nb15):
        with pytest.raises(DatasetError, match="empty"):
            loader(empty)


def test_cicflowmeter_states_read_as_zeek_would() -> None:
    """CICFlowMeter writes no state: an answered SYN with a reset and no payload is a refusal (REJ), its one-way
    FIN/ACK leftovers after a closed connection are midstream traffic (OTH, not an unanswered attempt S0)."""
    from security_verifiers.envs.network_logs.sim_to_real import REAL_DIR

    items = load_cicids2017(REAL_DIR / "cicids2017_friday.csv")
    scan = [i for i in items if i.target["family"] == "portscan_vertical"]
    assert scan and {i.input["flow"]["conn_state"] for i in scan} == {"REJ"}
    leftovers = [i.input["flow"] for i in items if i.input["flow"]["orig_pkts"] == 2 and i.input["flow"]["resp_pkts"]
                 == 0 and i.input["flow"]["proto"] == "tcp"]
    assert leftovers and {f["conn_state"] for f in leftovers} == {"OTH"}


def test_every_dataset_label_maps_into_the_taxonomy() -> None:
    from security_verifiers.envs.network_logs.families import DATASET_LABELS, FAMILIES, IOT23_LABELS, label_of

    for table in DATASET_LABELS.values():
        assert set(table.values()) <= set(FAMILIES)
    assert {label_of(f) for t in DATASET_LABELS.values() for f in t.values()} <= {"Malicious", "Benign"}
    # the heartbeat variants of IoT-23 are one family, the generator's
    assert {IOT23_LABELS[k] for k in ("C&C-HeartBeat", "C&C-HeartBeat-Attack", "C&C-HeartBeat-FileDownload")} == {
        "cc_heartbeat"}


def test_real_rows_load_with_one_taxonomy() -> None:
    """The hand-written real rows (data/real/) load through the ordinary readers, and every family they name is
    the generator's where the concept is the same (no `cc_heart_beat_attack` beside `cc_heartbeat`)."""
    from security_verifiers.envs.network_logs.families import FAMILIES
    from security_verifiers.envs.network_logs.sim_to_real import real_items

    data = real_items()
    assert {k: len(v) for k, v in data.items()} == {"CIC-IDS-2017": 195, "IoT-23": 87, "UNSW-NB15": 58}
    families = {i.target["family"] for items in data.values() for i in items}
    assert families <= set(FAMILIES)
    assert {"cc_heartbeat", "portscan_horizontal", "portscan_vertical", "ddos_flood", "botnet"} <= families
