"""The real-world layouts the E1 readers must also take: CIC-IDS-2017 "improved" (Engelen et al., 2021: renamed
columns, extra columns, ISO timestamps to the microsecond, respelled and ``- Attempted`` labels) under
``cicids2017``, and IoT-23's ``conn.log.labeled`` exported as CSV (empty cells where Zeek writes ``-``) under
``iot23``. The headers are the releases' own; every row is invented here, never copied from a dataset."""

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.network_logs.env import FIELDS
from security_verifiers.envs.network_logs.loaders import load_cicids2017, load_iot23

#: The improved release's header, as published (91 columns).
CIC_IMPROVED_HEADER = (
    "id,Flow ID,Src IP,Src Port,Dst IP,Dst Port,Protocol,Timestamp,Flow Duration,Total Fwd Packet,"
    "Total Bwd packets,Total Length of Fwd Packet,Total Length of Bwd Packet,Fwd Packet Length Max,"
    "Fwd Packet Length Min,Fwd Packet Length Mean,Fwd Packet Length Std,Bwd Packet Length Max,"
    "Bwd Packet Length Min,Bwd Packet Length Mean,Bwd Packet Length Std,Flow Bytes/s,Flow Packets/s,"
    "Flow IAT Mean,Flow IAT Std,Flow IAT Max,Flow IAT Min,Fwd IAT Total,Fwd IAT Mean,Fwd IAT Std,Fwd IAT Max,"
    "Fwd IAT Min,Bwd IAT Total,Bwd IAT Mean,Bwd IAT Std,Bwd IAT Max,Bwd IAT Min,Fwd PSH Flags,Bwd PSH Flags,"
    "Fwd URG Flags,Bwd URG Flags,Fwd RST Flags,Bwd RST Flags,Fwd Header Length,Bwd Header Length,Fwd Packets/s,"
    "Bwd Packets/s,Packet Length Min,Packet Length Max,Packet Length Mean,Packet Length Std,"
    "Packet Length Variance,FIN Flag Count,SYN Flag Count,RST Flag Count,PSH Flag Count,ACK Flag Count,"
    "URG Flag Count,CWR Flag Count,ECE Flag Count,Down/Up Ratio,Average Packet Size,Fwd Segment Size Avg,"
    "Bwd Segment Size Avg,Fwd Bytes/Bulk Avg,Fwd Packet/Bulk Avg,Fwd Bulk Rate Avg,Bwd Bytes/Bulk Avg,"
    "Bwd Packet/Bulk Avg,Bwd Bulk Rate Avg,Subflow Fwd Packets,Subflow Fwd Bytes,Subflow Bwd Packets,"
    "Subflow Bwd Bytes,FWD Init Win Bytes,Bwd Init Win Bytes,Fwd Act Data Pkts,Fwd Seg Size Min,Active Mean,"
    "Active Std,Active Max,Active Min,Idle Mean,Idle Std,Idle Max,Idle Min,ICMP Code,ICMP Type,"
    "Total TCP Flow Time,Label,Attempted Category"
)
CIC_COLUMNS = CIC_IMPROVED_HEADER.split(",")
#: IoT-23's conn.log.labeled as CSV, as redistributed (e.g. aucad/sensor-data): Zeek's names, one per column.
IOT23_CSV_HEADER = (
    "ts,uid,id.orig_h,id.orig_p,id.resp_h,id.resp_p,proto,service,duration,orig_bytes,resp_bytes,conn_state,"
    "local_orig,local_resp,missed_bytes,history,orig_pkts,orig_ip_bytes,resp_pkts,resp_ip_bytes,tunnel_parents,"
    "label,detailed-label"
)
CIC_UNRECORDED = ["service", "history"]


def _cic_row(k: int, src: tuple[str, int], dst: tuple[str, int], proto: int, when: str, label: str,
             **counters: str) -> str:
    """One row of the improved layout: the named cells, CICFlowMeter's zeros elsewhere. ``counters`` are by
    column name with spaces as underscores (``Total_Fwd_Packet="3"``)."""
    cells = dict.fromkeys(CIC_COLUMNS, "0")
    cells.update({"id": str(k), "Flow ID": f"{src[0]}-{dst[0]}-{src[1]}-{dst[1]}-{proto}", "Src IP": src[0],
                  "Src Port": str(src[1]), "Dst IP": dst[0], "Dst Port": str(dst[1]), "Protocol": str(proto),
                  "Timestamp": when, "ICMP Code": "-1", "ICMP Type": "-1", "Label": label,
                  "Attempted Category": "-1"})
    cells.update({name.replace("_", " "): value for name, value in counters.items()})
    assert len(cells) == len(CIC_COLUMNS), "a counter name not in the header"
    return ",".join(cells[c] for c in CIC_COLUMNS)


CIC_IMPROVED_ROWS = [
    # a DNS lookup: UDP, answered
    _cic_row(101, ("192.168.10.5", 58_181), ("192.168.10.3", 53), 17, "2017-07-05 14:02:11.250000", "BENIGN",
             Flow_Duration="245", Total_Fwd_Packet="1", Total_Bwd_packets="1", Total_Length_of_Fwd_Packet="36",
             Total_Length_of_Bwd_Packet="96"),
    # a bot's check-in and, a second later, its next one (the window of the second)
    _cic_row(102, ("192.168.10.15", 52_318), ("203.0.113.73", 8_080), 6, "2017-07-07 13:29:13.314320", "Botnet",
             Flow_Duration="245669", Total_Fwd_Packet="6", Total_Bwd_packets="5", Total_Length_of_Fwd_Packet="327",
             Total_Length_of_Bwd_Packet="128", FIN_Flag_Count="2", SYN_Flag_Count="2", ACK_Flag_Count="10"),
    _cic_row(103, ("192.168.10.15", 52_319), ("203.0.113.73", 8_080), 6, "2017-07-07 13:29:14.000001", "Botnet",
             Flow_Duration="63295", Total_Fwd_Packet="5", Total_Bwd_packets="4", Total_Length_of_Fwd_Packet="300",
             Total_Length_of_Bwd_Packet="128", FIN_Flag_Count="2", SYN_Flag_Count="2", ACK_Flag_Count="8"),
    # DoS Hulk's connection that carried no request: the attack's family, still Malicious
    _cic_row(104, ("172.16.0.1", 40_110), ("192.168.10.50", 80), 6, "2017-07-05 14:02:13.500125",
             "DoS Hulk - Attempted", Flow_Duration="1200", Total_Fwd_Packet="3", Total_Bwd_packets="2",
             SYN_Flag_Count="2", ACK_Flag_Count="3", FIN_Flag_Count="2", Attempted_Category="0"),
    # the infiltrated host probing a closed port of a neighbour: refused
    _cic_row(105, ("192.168.10.8", 61_049), ("192.168.10.19", 37), 6, "2017-07-06 18:31:18.998491",
             "Infiltration - Portscan", Flow_Duration="30", Total_Fwd_Packet="1", Total_Bwd_packets="1",
             SYN_Flag_Count="1", RST_Flag_Count="1", ACK_Flag_Count="1"),
    # IP protocol 0: not a conn record, ignored
    _cic_row(106, ("192.168.10.3", 0), ("192.168.10.255", 0), 0, "2017-07-05 14:02:12.000000", "BENIGN",
             Flow_Duration="1000", Total_Fwd_Packet="2"),
]


def _write(tmp_path: Path, name: str, lines: list[str], newline: str = "\n", prefix: str = "") -> Path:
    path = tmp_path / name
    path.write_bytes((prefix + newline.join(lines) + newline).encode("utf-8"))
    return path


def _check_contract(items: list[Item]) -> None:
    Dataset(id="loaded", items=items, splits=("test",))  # unique ids
    for item in items:
        assert tuple(item.input["flow"]) == FIELDS
        assert item.target["p_malicious"] == (1.0 if item.target["label"] == "Malicious" else 0.0)


def _content(items: list[Item]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(i.input, i.target) for i in items]


# -- CIC-IDS-2017, improved ------------------------------------------------------------------------
def test_cicids2017_improved_layout(tmp_path: Path) -> None:
    items = load_cicids2017(_write(tmp_path, "improved.csv", [CIC_IMPROVED_HEADER, *CIC_IMPROVED_ROWS]))
    _check_contract(items)
    assert len(items) == 5  # the IP-protocol-0 row is ignored
    dns = items[0]
    assert dns.input["flow"] == {
        "ts": 1499263331.25, "id.orig_h": "192.168.10.5", "id.orig_p": 58181, "id.resp_h": "192.168.10.3",
        "id.resp_p": 53, "proto": "udp", "service": None, "duration": 0.000245, "orig_bytes": 36,
        "resp_bytes": 96, "conn_state": "SF", "history": "", "orig_pkts": 1, "resp_pkts": 1,
    }
    assert dns.target == {"label": "Benign", "family": "benign", "p_malicious": 0.0}
    # microsecond timestamps: the capture's clock is Zeek's, and only service and history are missing
    assert all(i.input["capture"] == {"ts_resolution": 1e-06, "unrecorded": CIC_UNRECORDED} for i in items)
    first_bot, second_bot = items[1], items[2]
    assert second_bot.target == {"label": "Malicious", "family": "botnet", "p_malicious": 1.0}
    assert second_bot.input["flow"]["ts"] == 1499434154.000001 and second_bot.input["flow"]["conn_state"] == "SF"
    assert second_bot.input["window"] == [first_bot.input["flow"]]
    assert (second_bot.input["flow"]["orig_pkts"], second_bot.input["flow"]["resp_bytes"]) == (5, 128)
    attempted = items[3]
    assert attempted.target == {"label": "Malicious", "family": "ddos_flood", "p_malicious": 1.0}
    assert attempted.input["flow"]["ts"] == 1499263333.500125 and attempted.input["flow"]["id.resp_p"] == 80
    sweep = items[4]
    assert sweep.target["family"] == "infiltration" and sweep.input["flow"]["conn_state"] == "REJ"


@pytest.mark.parametrize(("label", "family"), [
    ("BENIGN", "benign"),
    ("Botnet", "botnet"),
    ("Portscan", "portscan_vertical"),
    ("Infiltration - Portscan", "infiltration"),
    ("Infiltration", "infiltration"),
    ("DDoS", "ddos_flood"),
    ("DoS Hulk", "ddos_flood"),
    ("DoS Slowloris", "http_slowloris"),
    ("FTP-Patator", "ftp_bruteforce"),
    ("Web Attack - Brute Force", "web_bruteforce"),
    ("Web Attack - SQL Injection", "web_exploit"),
    ("Heartbleed", "exploit"),
    ("DoS Hulk - Attempted", "ddos_flood"),
    ("Botnet - Attempted", "botnet"),
    ("Web Attack - Brute Force - Attempted", "web_bruteforce"),
    ("Infiltration - Attempted", "infiltration"),
    ("SSH-Patator - Attempted", "ssh_bruteforce"),
])
def test_cicids2017_improved_labels(tmp_path: Path, label: str, family: str) -> None:
    row = _cic_row(1, ("192.168.10.9", 50_000), ("192.168.10.50", 80), 6, "2017-07-04 15:00:00.000010", label,
                   Flow_Duration="10", Total_Fwd_Packet="1", SYN_Flag_Count="1")
    [item] = load_cicids2017(_write(tmp_path, "labels.csv", [CIC_IMPROVED_HEADER, row]))
    assert item.target["family"] == family
    assert item.target["label"] == ("Benign" if family == "benign" else "Malicious")


def test_cicids2017_improved_with_bom_and_padded_names_reads_the_same(tmp_path: Path) -> None:
    plain = load_cicids2017(_write(tmp_path, "plain.csv", [CIC_IMPROVED_HEADER, *CIC_IMPROVED_ROWS]))
    padded = ",".join(f" {name}" for name in CIC_COLUMNS)
    variant = _write(tmp_path, "variant.csv", [padded, *CIC_IMPROVED_ROWS], "\r\n", prefix="\ufeff")
    assert _content(load_cicids2017(variant)) == _content(plain)


def test_cicids2017_improved_time_without_fraction_counts_seconds(tmp_path: Path) -> None:
    """Nothing finer than what is written is claimed: ``12:00:00`` counts whole seconds, and so does every item
    whose window holds it."""
    rows = [_cic_row(1, ("192.168.10.9", 50_000 + k), ("192.168.10.50", 80), 6, when, "BENIGN",
                     Flow_Duration="10", Total_Fwd_Packet="1", Total_Bwd_packets="1")
            for k, when in enumerate(("2017-07-06 12:00:00", "2017-07-06 12:00:00.500000"))]
    first, second = load_cicids2017(_write(tmp_path, "seconds.csv", [CIC_IMPROVED_HEADER, *rows]))
    assert first.input["flow"]["ts"] == 1499342400.0 and first.input["capture"]["ts_resolution"] == 1.0
    assert second.input["capture"]["ts_resolution"] == 1.0 and len(second.input["window"]) == 1


CIC_IMPROVED_MALFORMED = [
    # no destination port under either name
    (lambda t: t.replace(",Dst Port,", ",Dst Prt,", 1), r":1: missing required column\(s\) Destination Port \(or "
                                                         r"Dst Port\)"),
    # a label neither release has
    (lambda t: t.replace("Botnet", "Teardrop", 1), r":3: unknown label 'Teardrop'"),
    # benign traffic cannot be an attempted attack
    (lambda t: t.replace("BENIGN", "BENIGN - Attempted", 1), r":2: unknown label 'BENIGN - Attempted'"),
    # an impossible date
    (lambda t: t.replace("2017-07-05 14:02:11", "2017-02-30 14:02:11", 1), r":2: .*not a date"),
    # a timestamp in neither release's form
    (lambda t: t.replace("2017-07-05 14:02:11.250000", "2017-07-05T14:02:11Z", 1), r":2: column 'Timestamp'"),
]


@pytest.mark.parametrize(("edit", "message"), CIC_IMPROVED_MALFORMED)
def test_cicids2017_improved_malformed(tmp_path: Path, edit: Any, message: str) -> None:
    text = "\n".join([CIC_IMPROVED_HEADER, *CIC_IMPROVED_ROWS]) + "\n"
    path = tmp_path / "bad.csv"
    path.write_text(edit(text))
    with pytest.raises(DatasetError, match=message):
        load_cicids2017(path)


# -- IoT-23 as CSV ---------------------------------------------------------------------------------
IOT23_CSV_ROWS = [
    # a scan probe Zeek saw no answer to: no duration, no byte counts (``-`` in the log, empty here)
    "1545403816.962094,CsKa1,192.168.1.195,41040,203.0.113.7,23,tcp,,,,,S0,,,0,S,1,60,0,0,,Malicious,"
    "PartOfAHorizontalPortScan",
    # the device's clock query: no analyzer, so no service
    "1545403817.100000,CsKa2,192.168.1.195,123,198.51.100.5,123,udp,,0.004520,48,48,SF,,,0,Dd,1,76,1,76,,benign,-",
    "1545403820.500000,CsKa3,192.168.1.195,41041,203.0.113.8,23,tcp,,2.998000,0,0,S0,,,0,S,3,180,0,0,(empty),"
    "Malicious,PartOfAHorizontalPortScan",
    # another device's multicast announcement, with no history recorded
    "1545403821.000001,CsKa4,192.168.1.200,5353,224.0.0.251,5353,udp,dns,,,,S0,,,0,,1,100,0,0,,Benign,-",
    "1545403822.250000,CsKa5,192.168.1.195,48986,198.51.100.235,6667,tcp,irc,3.107733,12,40,SF,,,0,ShADadFf,6,"
    "332,4,248,,Malicious,C&C",
]


def test_iot23_csv_export(tmp_path: Path) -> None:
    items = load_iot23(_write(tmp_path, "capture.labeled.csv", [IOT23_CSV_HEADER, *IOT23_CSV_ROWS], "\r\n"))
    _check_contract(items)
    assert len(items) == 5
    probe, ntp, scan, mdns, cc = items
    assert probe.input["flow"] == {
        "ts": 1545403816.962094, "id.orig_h": "192.168.1.195", "id.orig_p": 41040, "id.resp_h": "203.0.113.7",
        "id.resp_p": 23, "proto": "tcp", "service": None, "duration": None, "orig_bytes": None,
        "resp_bytes": None, "conn_state": "S0", "history": "S", "orig_pkts": 1, "resp_pkts": 0,
    }
    assert probe.target == {"label": "Malicious", "family": "portscan_horizontal", "p_malicious": 1.0}
    assert probe.input["host"] == {"ip": "192.168.1.195", "role": "iot_device"}
    assert ntp.target == {"label": "Benign", "family": "benign", "p_malicious": 0.0}  # "benign", lower case
    assert (ntp.input["flow"]["duration"], ntp.input["flow"]["orig_bytes"], ntp.input["flow"]["history"]) == (
        0.00452, 48, "Dd")
    assert scan.input["window"] == [probe.input["flow"], ntp.input["flow"]]
    assert mdns.input["flow"]["history"] == "" and mdns.input["flow"]["service"] == "dns"
    assert mdns.input["window"] == []  # another device
    assert cc.target["family"] == "cc_channel" and cc.input["flow"]["service"] == "irc"
    # Zeek's clock and every field: nothing is marked unrecorded
    assert all(i.input["capture"] == {"ts_resolution": 1e-06, "unrecorded": []} for i in items)
    assert {(i.meta["dataset"], i.meta["source"]) for i in items} == {("iot-23", "capture.labeled.csv")}


def _as_zeek_tsv(tmp_path: Path) -> Path:
    """The same rows as the published conn.log.labeled: ``#`` lines, tabs, ``-`` for unset, and the last three
    columns separated by three spaces."""
    def line(cells: list[str]) -> str:
        return "\t".join(cells[:-3]) + "\t" + "   ".join(cells[-3:])

    rows = [line([c or "-" for c in row.split(",")]) for row in IOT23_CSV_ROWS]
    lines = ["#separator \\x09", "#path\tconn", "#fields\t" + line(IOT23_CSV_HEADER.split(",")), *rows,
             "#close\t2019-01-01-01-01-01"]
    return _write(tmp_path, "conn.log.labeled", lines)


def test_iot23_csv_reads_as_the_zeek_log_does(tmp_path: Path) -> None:
    csv_items = load_iot23(_write(tmp_path, "capture.csv", [IOT23_CSV_HEADER, *IOT23_CSV_ROWS]))
    assert _content(csv_items) == _content(load_iot23(_as_zeek_tsv(tmp_path)))


def test_iot23_csv_with_the_merged_label_column(tmp_path: Path) -> None:
    """A CSV written from a table that read the TSV by tabs keeps ``tunnel_parents   label   detailed-label`` as
    one column, and each row's three values in one cell."""
    def merge(line: str) -> str:
        cells = line.split(",")
        return ",".join([*cells[:-3], "   ".join(c or "-" for c in cells[-3:])])

    merged = _write(tmp_path, "merged.csv", [merge(IOT23_CSV_HEADER), *map(merge, IOT23_CSV_ROWS)])
    plain = _write(tmp_path, "plain.csv", [IOT23_CSV_HEADER, *IOT23_CSV_ROWS])
    assert _content(load_iot23(merged)) == _content(load_iot23(plain))


def test_iot23_csv_with_whole_second_timestamps(tmp_path: Path) -> None:
    """Some exports truncate ``ts`` to whole seconds: such a capture's clock counts seconds, not microseconds."""
    row = "1540469303,CsKa9,192.168.1.132,58687,198.51.100.4,123,udp,,0.114184,48,48,SF,,,0,Dd,1,76,1,76,,benign,-"
    [item] = load_iot23(_write(tmp_path, "honeypot.csv", [IOT23_CSV_HEADER, row]))
    assert item.input["flow"]["ts"] == 1540469303.0
    assert item.input["capture"] == {"ts_resolution": 1.0, "unrecorded": []}


IOT23_CSV_MALFORMED = [
    # a responder port column renamed away
    (lambda lines: [lines[0].replace("id.resp_p", "resp_port"), *lines[1:]], r":1: missing required column.*id.resp_p"),
    # the 12-attribute redistribution: no time, addresses or ports to make a conn record of
    (lambda lines: ["proto,duration,orig_bytes,resp_bytes,conn_state,missed_bytes,history,orig_pkts,"
                    "orig_ip_bytes,resp_pkts,resp_ip_bytes,label", "udp,0.1,48,48,SF,0,Dd,1,76,1,76,Benign"],
     r":1: missing required column\(s\) ts, id.orig_h"),
    # a row with one cell fewer
    (lambda lines: [*lines[:2], lines[2].replace(",CsKa2", "", 1), *lines[3:]], r":3: 22 cells, expected 23"),
    # no timestamp: the one field a conn record cannot lack
    (lambda lines: [*lines[:3], "," + lines[3].split(",", 1)[1], *lines[4:]], r":4: column 'ts'"),
    # a detailed label outside IoT-23's published set
    (lambda lines: [*lines[:-1], lines[-1].replace("C&C", "C&C-Spam")], r":6: unknown detailed-label 'C&C-Spam'"),
]


@pytest.mark.parametrize(("edit", "message"), IOT23_CSV_MALFORMED)
def test_iot23_csv_malformed(tmp_path: Path, edit: Any, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        load_iot23(_write(tmp_path, "bad.csv", edit([IOT23_CSV_HEADER, *IOT23_CSV_ROWS])))


# -- the sim-to-real benchmark's layout detection --------------------------------------------------
def _benchmark() -> ModuleType:
    path = Path(__file__).resolve().parents[3] / "benchmarks" / "e1_sim_to_real.py"
    spec = importlib.util.spec_from_file_location("e1_sim_to_real", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_detects_both_layouts(tmp_path: Path) -> None:
    detect = _benchmark().detect_layout
    assert detect(_write(tmp_path, "improved.csv", [CIC_IMPROVED_HEADER, *CIC_IMPROVED_ROWS])) == "cicids2017"
    assert detect(_write(tmp_path, "iot.csv", [IOT23_CSV_HEADER, *IOT23_CSV_ROWS], "\r\n", "\ufeff")) == "iot23"
    assert detect(_as_zeek_tsv(tmp_path)) == "iot23"
