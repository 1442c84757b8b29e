"""Readers of public labelled flow datasets, as E1 items (same input/target layout as the generator).

* IoT-23 ``conn.log.labeled`` (Zeek TSV, with the label columns appended, or exported as CSV),
* CIC-IDS-2017 CSVs (the ``TrafficLabelling`` variant with addresses and timestamps, the
  ``MachineLearningCVE`` variant without them, and the "improved" re-extraction of Engelen et al. (2021),
  whose columns are renamed, whose timestamps count microseconds and whose labels are respelled),
* UNSW-NB15 CSVs (the training/testing-set form with a header, and the raw 49-column form, with or
  without a header),
* CTU-13 ``.binetflow`` files (Argus bidirectional flows as CSV, one label per flow; its unlabelled
  Background flows are not items).

Each format is a :class:`~security_verifiers.envs.network_logs.reading.FlowFile` that streams its rows
(``FORMATS``, what ``sv data import network-logs`` uses); ``load_*`` read one whole file into a list and
raise on its first unreadable row. Where a dataset lacks a field of the conn record, the reader writes a
placeholder (``None``, an empty history, port 0, host ``"unknown"``) *and* lists the field in the item's
capture (:mod:`capture`), with the resolution of the dataset's timestamps, so that nothing reads the
placeholder as a value. Labels map onto the one family taxonomy of :mod:`families` (an unknown label is an
error, never a new family name). A row that cannot be read (a wrong number of cells, an unparseable number,
an unknown label) is a ``RowError`` naming ``file:line``. Nothing ever falls back to synthetic data.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.network_logs.capture import ZEEK
from security_verifiers.envs.network_logs.families import (
    CICIDS2017_LABELS,
    CTU13_LABELS,
    IOT23_LABELS,
    UNSW_NB15_LABELS,
)
from security_verifiers.envs.network_logs.reading import (
    UNKNOWN_HOST,
    Cells,
    CsvFile,
    FlowFile,
    Record,
    RowError,
    column_index,
    column_key,
    conn_record,
    load_file,
)

#: What the address-less forms (CIC-IDS-2017 MachineLearningCVE, UNSW-NB15 training/testing set) lack.
_UNADDRESSED = ("id.orig_h", "id.orig_p", "id.resp_h", "service", "history")


def _label_key(label: str) -> str:
    """How dataset labels are compared: their words, lower case (``Web Attack \u2013 XSS`` -> ``web attack xss``)."""
    return " ".join(re.findall(r"[a-z0-9]+", label.lower()))


# --------------------------------------------------------------------------------------------------
# IoT-23
# --------------------------------------------------------------------------------------------------
_ZEEK_REQUIRED = ("ts", "id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "proto", "service", "duration",
                  "orig_bytes", "resp_bytes", "conn_state", "history", "orig_pkts", "resp_pkts", "label",
                  "detailed-label")
#: Tabs, or the runs of spaces that separate the last three columns in the published IoT-23 files.
_IOT23_SPLIT = re.compile(r"\t| {2,}")
#: The same runs of spaces inside one CSV cell: an export of the TSV that kept them
#: (``tunnel_parents   label   detailed-label`` as one column).
_IOT23_MERGED = re.compile(r" {2,}")


def _unset_or(row: Cells, column: str, kind: type[int] | type[float]) -> Any:
    """The number, or ``None`` where Zeek wrote ``-`` (unset) or a CSV export left the cell empty."""
    return None if row.optional(column) is None else row.required(column, kind)


def _iot23_record(row: Cells) -> Record:
    """One conn record; ``ts`` written without a fraction (some CSV exports truncate it) counts whole seconds."""
    label = row.text("label").capitalize()
    if label not in ("Malicious", "Benign"):
        raise row.error(f"unknown label {row.text('label')!r} (expected Malicious or Benign)")
    detail = row.optional("detailed-label") or "-"
    if label == "Benign":
        family = "benign"
    elif detail in IOT23_LABELS:
        family = IOT23_LABELS[detail]
    else:
        raise row.error(f"unknown detailed-label {detail!r} (not an IoT-23 label; see families.IOT23_LABELS)")
    flow = conn_record(
        row.required("ts", float), (row.text("id.orig_h"), row.required("id.orig_p", int)),
        (row.text("id.resp_h"), row.required("id.resp_p", int)), row.text("proto"), row.optional("service"),
        _unset_or(row, "duration", float), (_unset_or(row, "orig_bytes", int), _unset_or(row, "resp_bytes", int)),
        row.text("conn_state"), row.optional("history") or "",
        (row.required("orig_pkts", int), row.required("resp_pkts", int)),
    )
    resolution = ZEEK["ts_resolution"] if "." in row.text("ts") else 1.0
    return Record(flow, label, family, row.line, resolution)


class IoT23File(CsvFile):
    """An IoT-23 ``conn.log.labeled``: Zeek ``#`` header lines, then one tab-separated row per connection; or
    its CSV export (a ``ts,uid,id.orig_h,...`` header line, empty cells where Zeek writes ``-``).

    The form is told by the first line that is not blank: a Zeek log begins with ``#`` and separates by tabs.
    """

    dataset = "iot-23"
    role = "iot_device"

    def _open(self) -> None:
        self._csv, self._merged = self._starts_as_csv(), False
        if self._csv:
            header = self._start()
            self._merged = any(_IOT23_MERGED.search(c) for c in header)
            header = self._split_merged(header)
            missing = [c for c in _ZEEK_REQUIRED if column_key(c) not in {column_key(h) for h in header}]
            if missing:  # neither form: say what each would have needed
                raise DatasetError(f"{self.where}:1: missing required column(s) {', '.join(missing)} of an "
                                   "IoT-23 conn.log's CSV export; not a Zeek log either (data before the #fields "
                                   "header line)")
            self._columns, self._width = column_index(self.where, 1, header, _ZEEK_REQUIRED), len(header)
            return
        self._lines = enumerate(self._text(), 1)
        for lineno, raw in self._lines:
            line = raw.rstrip("\r\n")
            if not line.strip():
                continue
            if not line.startswith("#"):
                raise DatasetError(f"{self.where}:{lineno}: data before the #fields header line")
            if line.startswith("#fields"):
                names = _IOT23_SPLIT.split(line)[1:]
                self._columns, self._width = column_index(self.where, lineno, names, _ZEEK_REQUIRED), len(names)
                return
        raise DatasetError(f"{self.where}: no #fields header line; not a Zeek log")

    def _starts_as_csv(self) -> bool:
        """Whether the first line that is not blank is neither a Zeek ``#`` line nor tab-separated (read ahead,
        then rewound: the reader of either form starts from the top)."""
        try:
            for raw in self._fh:
                line = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
                if line.strip():
                    return not line.startswith("#") and "\t" not in line
            return False
        finally:
            self._fh.seek(0)

    def _split_merged(self, cells: list[str]) -> list[str]:
        """The cells with the merged label columns split, where the header had them merged."""
        return [part for cell in cells for part in _IOT23_MERGED.split(cell)] if self._merged else cells

    def _check(self, lineno: int, cells: list[str]) -> Iterator[Cells | RowError]:
        return super()._check(lineno, self._split_merged(cells))

    def records(self) -> Iterator[Record | RowError]:
        if self._csv:
            for row in self._cells():
                if isinstance(row, RowError):
                    yield row
                    continue
                try:
                    yield _iot23_record(row)
                except RowError as err:
                    yield err
            return
        for lineno, raw in self._lines:
            line = raw.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):  # blank, or #close at the end
                continue
            self.rows += 1
            cells = _IOT23_SPLIT.split(line)
            if len(cells) != self._width:
                yield RowError(self.where, lineno, f"{len(cells)} cells, expected {self._width}")
                continue
            try:
                yield _iot23_record(Cells(self.where, lineno, self._columns, cells))
            except RowError as err:
                yield err


def load_iot23(path: Path | str, split: str = "test") -> list[Item]:
    """Items from an IoT-23 ``conn.log.labeled`` file (all hosts are lab IoT devices: role ``iot_device``)."""
    return load_file(IoT23File(path), split)


# --------------------------------------------------------------------------------------------------
# CIC-IDS-2017
# --------------------------------------------------------------------------------------------------
_CIC_REQUIRED = ("Destination Port", "Flow Duration", "Total Fwd Packets", "Total Backward Packets",
                 "Total Length of Fwd Packets", "Total Length of Bwd Packets", "FIN Flag Count",
                 "SYN Flag Count", "RST Flag Count", "ACK Flag Count", "Label")
_CIC_ADDRESSED = ("Source IP", "Source Port", "Destination IP", "Protocol", "Timestamp")
#: The improved release's (Engelen et al., 2021) names of the columns read here, by the original's name.
_CIC_COLUMN_ALIASES = {
    "Source IP": "Src IP", "Source Port": "Src Port", "Destination IP": "Dst IP", "Destination Port": "Dst Port",
    "Total Fwd Packets": "Total Fwd Packet", "Total Backward Packets": "Total Bwd packets",
    "Total Length of Fwd Packets": "Total Length of Fwd Packet",
    "Total Length of Bwd Packets": "Total Length of Bwd Packet",
}
_CIC_CANONICAL = {column_key(alias): name for name, alias in _CIC_COLUMN_ALIASES.items()}
_CIC_LABELS = {_label_key(k): v for k, v in CICIDS2017_LABELS.items()}
#: The improved release's suffix for an attack's flow that carried no attack payload (a connection the tool
#: opened and dropped): still the attack's, so Malicious, of the attack's family.
_ATTEMPTED = " attempted"
_IP_PROTOCOLS = {6: "tcp", 17: "udp", 1: "icmp"}


def _cic_header(where: str, header: list[str]) -> list[str]:
    """The header with the improved release's column names read as the original's; a required column absent
    under both names is an error naming both."""
    header = [_CIC_CANONICAL.get(column_key(c), c) for c in header]
    names = {column_key(c) for c in header}
    missing = [f"{c} (or {_CIC_COLUMN_ALIASES[c]})" if c in _CIC_COLUMN_ALIASES else c
               for c in _CIC_REQUIRED if column_key(c) not in names]
    if missing:
        raise DatasetError(f"{where}:1: missing required column(s) {', '.join(missing)}")
    return header


def _cic_family(row: Cells) -> tuple[str, str]:
    """(label, family); labels are compared by their words (the web attacks' dash is mis-encoded in some copies),
    an improved release's ``<attack> - Attempted`` as ``<attack>``."""
    raw = row.text("Label")
    key = _label_key(raw)
    attempted = key.endswith(_ATTEMPTED)
    family = _CIC_LABELS.get(key.removesuffix(_ATTEMPTED) if attempted else key)
    if family is None or (attempted and family == "benign"):
        raise row.error(f"unknown label {raw!r}")
    return ("Benign" if family == "benign" else "Malicious"), family


def _utc_with_fraction(row: Cells, column: str, match: re.Match[str]) -> tuple[float, float]:
    """Seconds since the epoch and their resolution from a match of year, month, day, hour, minute, second and an
    optional fraction of up to six digits (groups 1-7), read as UTC; a value without a fraction counts seconds."""
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction = match.group(7) or ""
    try:
        when = datetime(year, month, day, hour, minute, second, int(fraction.ljust(6, "0")), tzinfo=UTC)
    except ValueError:
        raise row.error(f"column {column!r}: {match.group(0)!r} is not a date") from None
    return when.timestamp(), 10.0 ** -len(fraction) if fraction else 1.0


def _cic_timestamp(row: Cells) -> tuple[float, float]:
    """Seconds since the epoch, and the resolution of that value.

    The original release writes ``d/m/Y H:M[:S] [AM|PM]``, the capture's local clock (read as UTC), to the
    minute (60 s) or in some files the second (1 s). Its afternoon hours lack ``PM`` (``1:05`` for 13:05); the
    captures ran from about 8:00 to 18:00, so an hour below 8 without a marker is taken as afternoon. The
    improved release writes ``Y-m-d H:M:S.ffffff`` in UTC (3 h after the original's local clock), to the
    microsecond; a value written without a fraction is read as whole seconds.
    """
    value = row.text("Timestamp")
    iso = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?", value)
    if iso is not None:
        return _utc_with_fraction(row, "Timestamp", iso)
    match = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4}) (\d{1,2}):(\d{2})(?::(\d{2}))?(?: ?([AP]M))?", value)
    if match is None:
        raise row.error(f"column 'Timestamp': cannot read {value!r} as d/m/Y H:M[:S] or Y-m-d H:M:S[.f]")
    day, month, year, hour, minute = (int(match.group(i)) for i in range(1, 6))
    second, marker = int(match.group(6) or 0), match.group(7)
    if (marker == "PM" and hour < 12) or (marker is None and hour < 8):
        hour += 12
    elif marker == "AM" and hour == 12:
        hour = 0
    try:
        return (datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp(),
                60.0 if match.group(6) is None else 1.0)
    except ValueError:
        raise row.error(f"column 'Timestamp': {value!r} is not a date") from None


def _cic_record(row: Cells, addressed: bool) -> Record | None:
    label, family = _cic_family(row)
    fwd, bwd = row.required("Total Fwd Packets", int), row.required("Total Backward Packets", int)
    flags = {f: row.required(f"{f} Flag Count", int) for f in ("FIN", "SYN", "RST", "ACK")}
    if addressed:
        proto = _IP_PROTOCOLS.get(row.required("Protocol", int))
        if proto is None:
            return None  # IP protocol 0 (HOPOPT) and the like: not a conn record Zeek would write
        orig, (ts, resolution) = (row.text("Source IP"), row.required("Source Port", int)), _cic_timestamp(row)
        resp_h = row.text("Destination IP")
    else:  # MachineLearningCVE: no addresses, no time, no protocol; a TCP flow always shows flags
        proto = "tcp" if any(flags.values()) else "udp"
        orig, ts, resolution, resp_h = (UNKNOWN_HOST, 0), None, None, UNKNOWN_HOST
    micros = row.required("Flow Duration", float)
    nbytes = (row.required("Total Length of Fwd Packets", int), row.required("Total Length of Bwd Packets", int))
    flow = conn_record(ts, orig, (resp_h, row.required("Destination Port", int)), proto, None,
                 micros / 1e6 if micros >= 0 else None, nbytes,
                 _cic_state(proto, fwd, bwd, nbytes == (0, 0), flags), "", (fwd, bwd))
    return Record(flow, label, family, row.line, resolution)


def _cic_state(proto: str, fwd_pkts: int, bwd_pkts: int, no_payload: bool, flags: dict[str, int]) -> str:
    """A Zeek-like state from CICFlowMeter's counters (it records no state of its own).

    A flow with no answer is an unanswered attempt (S0) only if it could have opened a connection: the
    one-way FIN/ACK leftovers CICFlowMeter writes after a connection it had already closed (Engelen et al.,
    2021) carry no SYN and are midstream traffic, Zeek's OTH."""
    if proto == "icmp":
        return "OTH"
    if bwd_pkts == 0:
        return "OTH" if proto == "tcp" and not flags["SYN"] and (flags["FIN"] or flags["ACK"]) else "S0"
    if proto == "udp":
        return "SF"
    if flags["RST"]:
        return "REJ" if no_payload and fwd_pkts <= 2 else "RSTO"  # a SYN answered by a reset: refused
    return "SF" if flags["FIN"] else "S1"


class CicIds2017File(CsvFile):
    """A CIC-IDS-2017 CSV, with (``TrafficLabelling``, the improved release) or without (``MachineLearningCVE``)
    addresses and times.

    None has a service or history column; without addresses every host is ``"unknown"``, there is no ``ts``
    and windows are empty. With them, timestamps count minutes (some files seconds; the improved release
    microseconds).
    """

    dataset = "cic-ids-2017"

    def _open(self) -> None:
        header = _cic_header(self.where, self._start())
        self._columns, self._width = column_index(self.where, 1, header, _CIC_REQUIRED), len(header)
        present = [c for c in _CIC_ADDRESSED if column_key(c) in self._columns]
        if present and len(present) != len(_CIC_ADDRESSED):
            missing = sorted(set(_CIC_ADDRESSED) - set(present))
            raise DatasetError(f"{self.where}:1: has {', '.join(present)} but lacks {', '.join(missing)}")
        self._addressed = bool(present)
        self.unrecorded = ("service", "history") if present else _UNADDRESSED

    def records(self) -> Iterator[Record | RowError]:
        for row in self._cells():
            if isinstance(row, RowError):
                yield row
                continue
            try:
                record = _cic_record(row, self._addressed)
            except RowError as err:
                yield err
                continue
            if record is None:
                self.ignored += 1
            else:
                yield record


def load_cicids2017(path: Path | str, split: str = "test") -> list[Item]:
    """Items from a CIC-IDS-2017 CSV (see :class:`CicIds2017File`); rows of IP protocols other than TCP, UDP
    and ICMP are skipped and all-empty rows (present in some releases) ignored."""
    return load_file(CicIds2017File(path), split)


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
_UNSW_RAW_REQUIRED = ("srcip", "sport", "dstip", "dsport", "proto", "state", "dur", "sbytes", "dbytes", "service",
                      "Spkts", "Dpkts", "Stime", "attack_cat", "Label")
_UNSW_SET_REQUIRED = ("dur", "proto", "service", "state", "spkts", "dpkts", "sbytes", "dbytes", "attack_cat",
                      "label")
#: Argus states to Zeek's; UDP "CON" (both directions seen) is Zeek's SF, see :func:`_unsw_state`.
_UNSW_STATES = {"FIN": "SF", "CLO": "SF", "CON": "S1", "ACC": "S1", "REQ": "S0", "INT": "S0", "RST": "RSTO",
                "ECO": "OTH", "ECR": "OTH"}


def _unsw_state(proto: str, state: str) -> str:
    if proto == "udp" and state in ("CON", "FIN", "CLO"):
        return "SF"
    return _UNSW_STATES.get(state, "OTH")


def _unsw_label(row: Cells) -> tuple[str, str]:
    raw = row.text("label")
    if raw not in ("0", "1"):
        raise row.error(f"unknown label {raw!r} in column 'label' (expected 0 or 1)")
    if raw == "0":
        return "Benign", "benign"
    category = _label_key(row.text("attack_cat"))
    if category not in UNSW_NB15_LABELS:
        raise row.error(f"unknown attack_cat {row.text('attack_cat')!r}")
    return "Malicious", UNSW_NB15_LABELS[category]


def _unsw_record(row: Cells, raw_form: bool) -> Record | None:
    proto = row.text("proto").lower()
    if proto not in ("tcp", "udp", "icmp"):
        return None  # ARP, OSPF, SCTP, ...: not a conn record of the item contract
    label, family = _unsw_label(row)
    if raw_form:
        ts, resolution = row.required("Stime", float), 1.0  # Argus' start time, in whole seconds
        orig = (row.text("srcip"), row.number("sport", int) or 0)
        resp = (row.text("dstip"), row.number("dsport", int) or 0)
    else:
        ts, resolution, orig, resp = None, None, (UNKNOWN_HOST, 0), (UNKNOWN_HOST, 0)
    flow = conn_record(ts, orig, resp, proto, row.optional("service"), row.required("dur", float),
                 (row.required("sbytes", int), row.required("dbytes", int)),
                 _unsw_state(proto, row.text("state")), "", (row.required("spkts", int), row.required("dpkts", int)))
    return Record(flow, label, family, row.line, resolution)


class UnswNb15File(CsvFile):
    """UNSW-NB15: the training/testing-set CSV (header, no addresses), or a raw 49-column file (addresses and
    times; headerless as published, or with the feature names as a header).

    Sizes are Argus' (they include headers, unlike Zeek's payload bytes); the raw files mark some ports ``-``
    or in hex, read as 0 and as hex.
    """

    dataset = "unsw-nb15"

    def _open(self) -> None:
        first = self._start()
        names = {column_key(c) for c in first}
        self._first: list[str] | None = None
        if "attack_cat" in names:
            self._raw = "srcip" in names and "stime" in names
            header = first
        else:
            if len(first) != len(UNSW_RAW_COLUMNS):
                raise DatasetError(f"{self.where}:1: neither a header with attack_cat nor a raw row of "
                                   f"{len(UNSW_RAW_COLUMNS)} cells ({len(first)} cells)")
            self._raw, self._first, header = True, first, list(UNSW_RAW_COLUMNS)
        required = _UNSW_RAW_REQUIRED if self._raw else _UNSW_SET_REQUIRED
        self.unrecorded = ("history",) if self._raw else (*_UNADDRESSED[:3], "id.resp_p", "history")
        self._columns, self._width = column_index(self.where, 1, header, required), len(header)

    def records(self) -> Iterator[Record | RowError]:
        rows = self._cells() if self._first is None else itertools.chain(self._check(1, self._first), self._cells())
        for row in rows:
            if isinstance(row, RowError):
                yield row
                continue
            try:
                record = _unsw_record(row, self._raw)
            except RowError as err:
                yield err
                continue
            if record is None:
                self.ignored += 1
            else:
                yield record


def load_unsw_nb15(path: Path | str, split: str = "test") -> list[Item]:
    """Items from a UNSW-NB15 CSV (see :class:`UnswNb15File`); rows of protocols other than TCP, UDP and ICMP
    are skipped."""
    return load_file(UnswNb15File(path), split)


# --------------------------------------------------------------------------------------------------
# CTU-13
# --------------------------------------------------------------------------------------------------
_CTU13_REQUIRED = ("StartTime", "Dur", "Proto", "SrcAddr", "Sport", "DstAddr", "Dport", "State", "TotPkts",
                   "TotBytes", "SrcBytes", "Label")
#: Argus names the protocol it recognised on top of UDP (``rtp``, ``rtcp``, ``udt``): not told apart here
#: from other protocols outside TCP, UDP and ICMP, so ignored like ARP, IGMP and ESP.
_CTU13_PROTOS = frozenset({"tcp", "udp", "icmp"})
#: Argus' UDP states: both directions seen (CON) is Zeek's SF, a request alone (INT, REQ) its S0.
_ARGUS_UDP_STATES = {"CON": "SF", "INT": "S0", "REQ": "S0"}
_CTU13_CLASSES = ("botnet", "normal", "background")


def _argus_tcp_state(state: str) -> str:
    """A Zeek conn_state from Argus' TCP state as CTU-13 writes it: the flags each side sent, ``src_dst``
    (``S_`` a SYN nobody answered, ``S_RA`` one refused, ``FSPA_FSPA`` a connection opened and closed by both,
    ``PA_PA`` one already open when the capture began). A state without ``_`` is Argus' summary (CON, FIN,
    REQ, INT, RST, as in UNSW-NB15), read as :func:`_unsw_state` reads it."""
    if "_" not in state:
        return _unsw_state("tcp", state)
    src, dst = state.split("_", 1)
    if "S" not in src:
        return "OTH"  # midstream: its opening was before the capture (or not seen)
    if "S" not in dst:
        if "R" in dst:
            return "REJ"
        return "S0" if not dst else "OTH"
    if "R" in src:
        return "RSTO"
    if "R" in dst:
        return "RSTR"
    if "F" in src and "F" in dst:
        return "SF"
    return "S2" if "F" in src else "S3" if "F" in dst else "S1"


def _ctu13_label(row: Cells) -> tuple[str, str] | None:
    """(label, family), or ``None`` for a Background flow (unlabelled). The label's words decide (see
    :data:`families.CTU13_LABELS`); a label of no class, or of two, is an error."""
    raw = row.text("Label")
    words = {re.sub(r"\d+$", "", w) for w in re.findall(r"[a-z0-9]+", raw.lower().removeprefix("flow="))}
    classes = [c for c in _CTU13_CLASSES if c in words]
    if len(classes) != 1:
        raise row.error(f"unknown label {raw!r} (expected one of Botnet, Normal, Background in it)")
    if classes[0] == "background":
        return None
    if classes[0] == "normal":
        return "Benign", CTU13_LABELS["normal"]
    channel = next((CTU13_LABELS[w] for w in ("cc", "irc") if w in words), None)
    return "Malicious", channel or CTU13_LABELS["botnet"]


def _ctu13_timestamp(row: Cells) -> tuple[float, float]:
    """Seconds since the epoch and their resolution: ``Y/m/d H:M:S.ffffff`` (``-`` between the date's parts in
    some copies), the capture's local clock (Prague) read as UTC; microseconds as published."""
    value = row.text("StartTime")
    match = re.fullmatch(r"(\d{4})[/-](\d{2})[/-](\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?", value)
    if match is None:
        raise row.error(f"column 'StartTime': cannot read {value!r} as Y/m/d H:M:S[.f]")
    return _utc_with_fraction(row, "StartTime", match)


def _ctu13_port(row: Cells, column: str) -> int:
    """A port, decimal or hex (``0x0303``); empty (ARP, ICMP without type, IP fragments) reads as 0."""
    return 0 if row.optional(column) is None else row.required(column, int)


def _ctu13_record(row: Cells) -> Record | None:
    proto = row.text("Proto").lower()
    if proto not in _CTU13_PROTOS:
        return None
    labelled = _ctu13_label(row)
    if labelled is None:
        return None
    ts, resolution = _ctu13_timestamp(row)
    sport, dport = _ctu13_port(row, "Sport"), _ctu13_port(row, "Dport")
    if proto == "icmp":  # Argus writes ICMP code<<8 | type as the source port and the ICMP id as the other
        sport, dport = sport & 0xFF, sport >> 8  # Zeek: orig_p is the type, resp_p the code
    total, src = row.required("TotBytes", int), row.required("SrcBytes", int)
    if src > total:
        raise row.error(f"SrcBytes {src} exceeds TotBytes {total}")
    if proto == "tcp":
        state = _argus_tcp_state(row.text("State"))
    else:
        state = _ARGUS_UDP_STATES.get(row.text("State"), "OTH") if proto == "udp" else "OTH"
    duration = row.required("Dur", float)
    row.required("TotPkts", int)  # read (a number it must be), but not split: see Ctu13File
    flow = conn_record(ts, (row.text("SrcAddr"), sport), (row.text("DstAddr"), dport), proto, None,
                       duration if duration >= 0 else None, (src, total - src), state, "", (0, 0))
    return Record(flow, *labelled, row.line, resolution)


class Ctu13File(CsvFile):
    """A CTU-13 ``.binetflow`` file (Garcia et al., 2014): Argus bidirectional flows as CSV, ``StartTime,Dur,
    Proto,SrcAddr,Sport,Dir,DstAddr,Dport,State,sTos,dTos,TotPkts,TotBytes,SrcBytes,Label`` (later releases
    add ``srcUdata,dstUdata``), one label per flow.

    Labels: a flow of an infected host (``From-Botnet-...``, ``To-Botnet-...``) is Malicious, one of the
    scenario's checked normal hosts (``From-Normal-...``) Benign; Background flows (nine in ten, the
    university's other traffic) were never checked and are neither, so they are not items: they are counted in
    ``unlabelled`` (and ``ignored``) and, not being items, stay out of the windows too. The labelled hosts'
    windows lose nothing by that: CTU-13 labels every flow of an infected or normal host by its address.

    What Argus records differs from Zeek's conn record: ``SrcAddr`` is the flow's originator as Argus keyed
    it (also for the ``<?>``/``?>`` flows whose opening it did not see and the ``<-`` ones where only the other
    side spoke); sizes include headers (as in UNSW-NB15): ``orig_bytes`` is ``SrcBytes``, ``resp_bytes``
    ``TotBytes - SrcBytes``; the states are mapped onto Zeek's (:func:`_argus_tcp_state`; UDP CON is SF,
    INT/REQ S0; ICMP OTH). There is no service, no history, and only the total of packets (``TotPkts``): the
    item contract wants a count per direction, so both are written as the placeholder 0 and listed as
    unrecorded (the prompt shows ``-``) rather than split by a guess. Timestamps count microseconds.
    """

    dataset = "ctu-13"
    unrecorded = ("service", "history", "orig_pkts", "resp_pkts")
    #: Background flows read so far (unlabelled: not items).
    unlabelled: int

    def _open(self) -> None:
        self.unlabelled = 0
        header = self._start()
        names = {column_key(c) for c in header}
        missing = [c for c in _CTU13_REQUIRED if column_key(c) not in names]
        if missing:
            raise DatasetError(f"{self.where}:1: missing required column(s) {', '.join(missing)} of a CTU-13 "
                               ".binetflow header")
        self._columns, self._width = column_index(self.where, 1, header, _CTU13_REQUIRED), len(header)

    def records(self) -> Iterator[Record | RowError]:
        for row in self._cells():
            if isinstance(row, RowError):
                yield row
                continue
            try:
                record = _ctu13_record(row)
            except RowError as err:
                yield err
                continue
            if record is None:
                self.ignored += 1
                if row.text("Proto").lower() in _CTU13_PROTOS:
                    self.unlabelled += 1
            else:
                yield record


def load_ctu13(path: Path | str, split: str = "test") -> list[Item]:
    """Items from a CTU-13 ``.binetflow`` file (see :class:`Ctu13File`); Background flows and rows of protocols
    other than TCP, UDP and ICMP are skipped."""
    return load_file(Ctu13File(path), split)


#: The readers by the name ``sv data import network-logs --format`` takes.
FORMATS: dict[str, type[FlowFile]] = {"iot23": IoT23File, "cicids2017": CicIds2017File, "unsw-nb15": UnswNb15File,
                                      "ctu13": Ctu13File}
