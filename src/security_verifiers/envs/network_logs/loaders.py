"""Loaders that turn public labelled flow datasets into E1 items (same input/target layout as the generator).

* IoT-23 ``conn.log.labeled`` (Zeek TSV, with the label columns appended),
* CIC-IDS-2017 CSVs (both the ``TrafficLabelling`` variant with addresses and timestamps and the
  ``MachineLearningCVE`` variant without them),
* UNSW-NB15 CSVs (the training/testing-set form with a header, and the raw 49-column headerless form).

Each record becomes one item whose window is the preceding records of the same originating host,
ordered by timestamp. Where a dataset lacks a field of the conn record, the loader says so in the
value (``None``, an empty history, port 0, host ``"unknown"``) instead of inventing one. A malformed
file (missing columns, a wrong number of cells, an unparseable number, an unknown label) raises
:class:`DatasetError` naming ``file:line``; nothing ever falls back to synthetic data.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.network_logs.generator import WINDOW

UNKNOWN_HOST = "unknown"


@dataclass(frozen=True)
class _Record:
    flow: dict[str, Any]
    label: str
    family: str
    line: int


def _camel_to_snake(name: str) -> str:
    """``PartOfAHorizontalPortScan-Attack`` -> ``part_of_a_horizontal_port_scan_attack``."""
    name = name.replace("&", "")
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


class _Cells:
    """One row's cells by column name, with parsers that fail with ``file:line``."""

    def __init__(self, path: Path, line: int, columns: dict[str, int], cells: list[str]) -> None:
        self.path, self.line, self.columns, self.cells = path, line, columns, cells

    def error(self, message: str) -> DatasetError:
        return DatasetError(f"{self.path}:{self.line}: {message}")

    def text(self, column: str) -> str:
        return self.cells[self.columns[column]].strip()

    def optional(self, column: str) -> str | None:
        """The cell, or ``None`` where the dataset marks it unset (``-``) or leaves it empty."""
        value = self.text(column)
        return None if value in ("-", "") else value

    def number(self, column: str, kind: type[int] | type[float], unset: str | None = "-") -> Any:
        value = self.text(column)
        if unset is not None and value == unset:
            return None
        try:
            return int(value, 0) if kind is int and value.lower().startswith("0x") else kind(value)
        except ValueError:
            raise self.error(f"column {column!r}: cannot read {value!r} as {kind.__name__}") from None

    def required(self, column: str, kind: type[int] | type[float]) -> Any:
        return self.number(column, kind, unset=None)


def _column_index(path: Path, line: int, header: list[str], required: tuple[str, ...]) -> dict[str, int]:
    columns: dict[str, int] = {}
    for i, name in enumerate(header):
        columns.setdefault(name.strip(), i)
    missing = [c for c in required if c not in columns]
    if missing:
        raise DatasetError(f"{path}:{line}: missing required column(s) {', '.join(missing)}")
    return columns


def _conn(ts: float, orig: tuple[str, int], resp: tuple[str, int], proto: str, service: str | None,
          duration: float | None, nbytes: tuple[int | None, int | None], state: str, history: str,
          pkts: tuple[int, int]) -> dict[str, Any]:
    """A conn record with exactly the keys of the item contract, floats rounded like the generator's."""
    return {
        "ts": round(ts, 6), "id.orig_h": orig[0], "id.orig_p": orig[1], "id.resp_h": resp[0],
        "id.resp_p": resp[1],
        "proto": proto, "service": service, "duration": None if duration is None else round(duration, 6),
        "orig_bytes": nbytes[0], "resp_bytes": nbytes[1], "conn_state": state, "history": history,
        "orig_pkts": pkts[0], "resp_pkts": pkts[1],
    }


def _items(records: list[_Record], split: str, source: str, role: str) -> list[Item]:
    """Items in timestamp order; each window holds the host's previous flows (none for an unknown host).

    Records that are identical in every field (and so in id) are kept once: a dataset cannot hold two
    items with the same id, and a duplicated row adds no information.
    """
    history: dict[str, deque[dict[str, Any]]] = defaultdict(lambda: deque(maxlen=WINDOW))
    items: list[Item] = []
    seen: set[str] = set()
    for rec in sorted(records, key=lambda r: r.flow["ts"]):
        host = rec.flow["id.orig_h"]
        previous = history[host] if host != UNKNOWN_HOST else deque()
        inp = {"host": {"ip": host, "role": role}, "flow": rec.flow, "window": list(previous)}
        target = {"label": rec.label, "family": rec.family,
                  "p_malicious": 1.0 if rec.label == "Malicious" else 0.0}
        iid = item_id("nl", {"input": inp, "target": target})
        if host != UNKNOWN_HOST:
            history[host].append(rec.flow)
        if iid in seen:
            continue
        seen.add(iid)
        items.append(Item(id=iid, split=split, input=inp, target=target,
                          meta={"source": source, "line": rec.line}))
    return items


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    if not path.is_file():
        raise DatasetError(f"dataset file not found: {path}")
    with path.open(encoding="utf-8", errors="replace", newline="") as fh:
        for lineno, line in enumerate(fh, 1):
            yield lineno, line.rstrip("\r\n")


# --------------------------------------------------------------------------------------------------
# IoT-23
# --------------------------------------------------------------------------------------------------
_ZEEK_REQUIRED = ("ts", "id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "proto", "service", "duration",
                  "orig_bytes", "resp_bytes", "conn_state", "history", "orig_pkts", "resp_pkts", "label",
                  "detailed-label")
#: Tabs, or the runs of spaces that separate the last three columns in the published IoT-23 files.
_IOT23_SPLIT = re.compile(r"\t| {2,}")
_IOT23_FAMILIES = {
    "PartOfAHorizontalPortScan": "portscan_horizontal", "C&C-HeartBeat": "cc_heartbeat", "DDoS": "ddos_flood",
    "FileDownload": "malware_download", "C&C-FileDownload": "malware_download", "C&C": "cc", "Okiru": "okiru",
    "Attack": "attack", "C&C-Torii": "cc_torii", "C&C-Mirai": "cc_mirai",
}


def _iot23_record(row: _Cells) -> _Record:
    label = row.text("label").capitalize()
    if label not in ("Malicious", "Benign"):
        raise row.error(f"unknown label {row.text('label')!r} (expected Malicious or Benign)")
    detail = row.text("detailed-label")
    if label == "Benign":
        family = "benign"
    elif detail == "-":
        family = "malicious_unspecified"
    else:
        family = _IOT23_FAMILIES.get(detail, _camel_to_snake(detail))
    history = row.text("history")
    flow = _conn(
        row.required("ts", float), (row.text("id.orig_h"), row.required("id.orig_p", int)),
        (row.text("id.resp_h"), row.required("id.resp_p", int)), row.text("proto"), row.optional("service"),
        row.number("duration", float), (row.number("orig_bytes", int), row.number("resp_bytes", int)),
        row.text("conn_state"), "" if history == "-" else history,
        (row.required("orig_pkts", int), row.required("resp_pkts", int)),
    )
    return _Record(flow, label, family, row.line)


def load_iot23(path: Path | str, split: str = "test") -> list[Item]:
    """Items from an IoT-23 ``conn.log.labeled`` file (all hosts are lab IoT devices: role ``iot_device``)."""
    path = Path(path)
    columns: dict[str, int] | None = None
    records: list[_Record] = []
    for lineno, line in _lines(path):
        if not line.strip():
            continue
        if line.startswith("#"):
            if line.startswith("#fields"):
                columns = _column_index(path, lineno, _IOT23_SPLIT.split(line)[1:], _ZEEK_REQUIRED)
            continue
        if columns is None:
            raise DatasetError(f"{path}:{lineno}: data before the #fields header line")
        cells = _IOT23_SPLIT.split(line)
        if len(cells) != len(columns):
            raise DatasetError(f"{path}:{lineno}: {len(cells)} cells, expected {len(columns)}")
        records.append(_iot23_record(_Cells(path, lineno, columns, cells)))
    if columns is None:
        raise DatasetError(f"{path}: no #fields header line; not a Zeek log")
    return _items(records, split, "iot-23", "iot_device")


# --------------------------------------------------------------------------------------------------
# CIC-IDS-2017
# --------------------------------------------------------------------------------------------------
_CIC_REQUIRED = ("Destination Port", "Flow Duration", "Total Fwd Packets", "Total Backward Packets",
                 "Total Length of Fwd Packets", "Total Length of Bwd Packets", "FIN Flag Count",
                 "SYN Flag Count", "RST Flag Count", "ACK Flag Count", "Label")
_CIC_ADDRESSED = ("Source IP", "Source Port", "Destination IP", "Protocol", "Timestamp")
_CIC_FAMILIES = {
    "DDoS": "ddos_flood", "PortScan": "portscan", "FTP-Patator": "ftp_bruteforce",
    "SSH-Patator": "ssh_bruteforce",
    "DoS slowloris": "http_slowloris", "DoS Slowhttptest": "http_slowhttptest", "DoS Hulk": "dos_hulk",
    "DoS GoldenEye": "dos_goldeneye", "Heartbleed": "heartbleed", "Infiltration": "infiltration",
    "Bot": "botnet",
}
_CIC_WEB_ATTACKS = {"brute force": "web_bruteforce", "xss": "web_xss", "sql injection": "web_sql_injection"}
_IP_PROTOCOLS = {6: "tcp", 17: "udp", 1: "icmp"}


def _cic_family(row: _Cells) -> tuple[str, str]:
    """(label, family); the web-attack labels carry an en dash that some releases mis-encode."""
    raw = row.text("Label")
    if raw.upper() == "BENIGN":
        return "Benign", "benign"
    if raw in _CIC_FAMILIES:
        return "Malicious", _CIC_FAMILIES[raw]
    words = " ".join(re.findall(r"[a-z]+", raw.lower()))
    for kind, family in _CIC_WEB_ATTACKS.items():
        if words.startswith("web attack") and words.endswith(kind):
            return "Malicious", family
    raise row.error(f"unknown label {raw!r}")


def _cic_timestamp(row: _Cells) -> float:
    """Seconds since the epoch from ``d/m/Y H:M[:S] [AM|PM]`` (the capture's local clock, read as UTC).

    The published CSVs write afternoon hours without ``PM`` (``1:05`` for 13:05); the captures ran
    from about 8:00 to 18:00, so an hour below 8 without a marker is taken as afternoon.
    """
    value = row.text("Timestamp")
    match = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4}) (\d{1,2}):(\d{2})(?::(\d{2}))?(?: ?([AP]M))?", value)
    if match is None:
        raise row.error(f"column 'Timestamp': cannot read {value!r} as d/m/Y H:M[:S]")
    day, month, year, hour, minute = (int(match.group(i)) for i in range(1, 6))
    second, marker = int(match.group(6) or 0), match.group(7)
    if (marker == "PM" and hour < 12) or (marker is None and hour < 8):
        hour += 12
    elif marker == "AM" and hour == 12:
        hour = 0
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()
    except ValueError:
        raise row.error(f"column 'Timestamp': {value!r} is not a date") from None


def _cic_record(row: _Cells, addressed: bool) -> _Record | None:
    label, family = _cic_family(row)
    fwd, bwd = row.required("Total Fwd Packets", int), row.required("Total Backward Packets", int)
    flags = {f: row.required(f"{f} Flag Count", int) for f in ("FIN", "SYN", "RST", "ACK")}
    if addressed:
        proto = _IP_PROTOCOLS.get(row.required("Protocol", int))
        if proto is None:
            return None  # IP protocol 0 (HOPOPT) and the like: not a conn record Zeek would write
        orig, ts = (row.text("Source IP"), row.required("Source Port", int)), _cic_timestamp(row)
        resp_h = row.text("Destination IP")
    else:  # MachineLearningCVE: no addresses, no time, no protocol; a TCP flow always shows flags
        proto = "tcp" if any(flags.values()) else "udp"
        orig, ts, resp_h = (UNKNOWN_HOST, 0), 0.0, UNKNOWN_HOST
    micros = row.required("Flow Duration", float)
    flow = _conn(ts, orig, (resp_h, row.required("Destination Port", int)), proto, None,
                 micros / 1e6 if micros >= 0 else None,
                 (row.required("Total Length of Fwd Packets", int),
                  row.required("Total Length of Bwd Packets", int)),
                 _cic_state(proto, bwd, flags), "", (fwd, bwd))
    return _Record(flow, label, family, row.line)


def _cic_state(proto: str, bwd_pkts: int, flags: dict[str, int]) -> str:
    """A Zeek-like state from CICFlowMeter's counters (it records no state of its own)."""
    if proto == "icmp":
        return "OTH"
    if bwd_pkts == 0:
        return "S0"
    if proto == "udp":
        return "SF"
    if flags["RST"]:
        return "RSTO"
    return "SF" if flags["FIN"] else "S1"


def load_cicids2017(path: Path | str, split: str = "test") -> list[Item]:
    """Items from a CIC-IDS-2017 CSV, with or without the address and timestamp columns.

    Without addresses (``MachineLearningCVE``) every host is ``"unknown"``, ``ts`` is 0 and windows are
    empty. Rows of IP protocols other than TCP, UDP and ICMP are skipped; all-empty rows (present in
    some releases) are ignored.
    """
    path = Path(path)
    lines = _lines(path)
    reader = csv.reader(line for _, line in lines)
    header = next(reader, None)
    if header is None:
        raise DatasetError(f"dataset file is empty: {path}")
    columns = _column_index(path, 1, header, _CIC_REQUIRED)
    present = [c for c in _CIC_ADDRESSED if c in columns]
    if present and len(present) != len(_CIC_ADDRESSED):
        missing = sorted(set(_CIC_ADDRESSED) - set(present))
        raise DatasetError(f"{path}:1: has {', '.join(present)} but lacks {', '.join(missing)}")
    records: list[_Record] = []
    for lineno, cells in enumerate(reader, 2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise DatasetError(f"{path}:{lineno}: {len(cells)} cells, expected {len(header)}")
        record = _cic_record(_Cells(path, lineno, columns, cells), addressed=bool(present))
        if record is not None:
            records.append(record)
    return _items(records, split, "cic-ids-2017", "unknown")


# --------------------------------------------------------------------------------------------------
# UNSW-NB15
# --------------------------------------------------------------------------------------------------
UNSW_RAW_COLUMNS = (
    "srcip", "sport", "dstip", "dsport", "proto", "state", "dur", "sbytes", "dbytes", "sttl", "dttl", "sloss",
    "dloss", "service", "Sload", "Dload", "Spkts", "Dpkts", "swin", "dwin", "stcpb", "dtcpb", "smeansz",
    "dmeansz",
    "trans_depth", "res_bdy_len", "Sjit", "Djit", "Stime", "Ltime", "Sintpkt", "Dintpkt", "tcprtt", "synack",
    "ackdat", "is_sm_ips_ports", "ct_state_ttl", "ct_flw_http_mthd", "is_ftp_login", "ct_ftp_cmd",
    "ct_srv_src",
    "ct_srv_dst", "ct_dst_ltm", "ct_src_ltm", "ct_src_dport_ltm", "ct_dst_sport_ltm", "ct_dst_src_ltm",
    "attack_cat", "Label",
)
_UNSW_SET_REQUIRED = ("dur", "proto", "service", "state", "spkts", "dpkts", "sbytes", "dbytes", "attack_cat",
                      "label")
#: Argus states to Zeek's; UDP "CON" (both directions seen) is Zeek's SF, see :func:`_unsw_state`.
_UNSW_STATES = {"FIN": "SF", "CLO": "SF", "CON": "S1", "ACC": "S1", "REQ": "S0", "INT": "S0", "RST": "RSTO",
                "ECO": "OTH", "ECR": "OTH"}


def _unsw_state(proto: str, state: str) -> str:
    if proto == "udp" and state in ("CON", "FIN", "CLO"):
        return "SF"
    return _UNSW_STATES.get(state, "OTH")


def _unsw_label(row: _Cells, label_column: str) -> tuple[str, str]:
    raw = row.text(label_column)
    if raw not in ("0", "1"):
        raise row.error(f"unknown label {raw!r} in column {label_column!r} (expected 0 or 1)")
    if raw == "0":
        return "Benign", "benign"
    category = row.text("attack_cat").lower().replace(" ", "_")
    return "Malicious", {"backdoors": "backdoor", "": "malicious_unspecified"}.get(category, category)


def _unsw_record(row: _Cells, raw_form: bool) -> _Record | None:
    proto = row.text("proto").lower()
    if proto not in ("tcp", "udp", "icmp"):
        return None  # ARP, OSPF, SCTP, ...: not a conn record of the item contract
    if raw_form:
        label, family = _unsw_label(row, "Label")
        ts = row.required("Stime", float)
        orig = (row.text("srcip"), row.number("sport", int) or 0)
        resp = (row.text("dstip"), row.number("dsport", int) or 0)
        pkts = (row.required("Spkts", int), row.required("Dpkts", int))
    else:
        label, family = _unsw_label(row, "label")
        ts, orig, resp = 0.0, (UNKNOWN_HOST, 0), (UNKNOWN_HOST, 0)
        pkts = (row.required("spkts", int), row.required("dpkts", int))
    flow = _conn(ts, orig, resp, proto, row.optional("service"), row.required("dur", float),
                 (row.required("sbytes", int), row.required("dbytes", int)),
                 _unsw_state(proto, row.text("state")), "", pkts)
    return _Record(flow, label, family, row.line)


def load_unsw_nb15(path: Path | str, split: str = "test") -> list[Item]:
    """Items from UNSW-NB15: the training/testing-set CSV (header, no addresses) or a raw 49-column file.

    Sizes are Argus' (they include headers, unlike Zeek's payload bytes); the raw files mark some
    ports ``-`` or in hex, read as 0 and as hex. Rows of protocols other than TCP, UDP and ICMP are
    skipped.
    """
    path = Path(path)
    reader = csv.reader(line for _, line in _lines(path))
    first = next(reader, None)
    if first is None:
        raise DatasetError(f"dataset file is empty: {path}")
    raw_form = "attack_cat" not in [c.strip() for c in first]
    if raw_form and len(first) != len(UNSW_RAW_COLUMNS):
        raise DatasetError(f"{path}:1: neither a header with attack_cat nor a raw row of "
                           f"{len(UNSW_RAW_COLUMNS)} cells ({len(first)} cells)")
    header = list(UNSW_RAW_COLUMNS) if raw_form else first
    columns = _column_index(path, 1, header, UNSW_RAW_COLUMNS if raw_form else _UNSW_SET_REQUIRED)
    rows = ([(1, first)] if raw_form else []) + list(enumerate(reader, 2))
    records: list[_Record] = []
    for lineno, cells in rows:
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise DatasetError(f"{path}:{lineno}: {len(cells)} cells, expected {len(header)}")
        record = _unsw_record(_Cells(path, lineno, columns, cells), raw_form)
        if record is not None:
            records.append(record)
    return _items(records, split, "unsw-nb15", "unknown")
