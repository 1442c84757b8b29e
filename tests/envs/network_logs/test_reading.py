"""Streaming readers: rows come out in file order as items or row errors, windows hold only earlier flows of
the same host, ids stay unique without remembering them, headers match whatever their case and spacing, and
what the reader holds does not grow with the length of the file."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import DatasetError
from security_verifiers.envs.network_logs.generator import WINDOW
from security_verifiers.envs.network_logs.loaders import (
    CicIds2017File,
    IoT23File,
    UnswNb15File,
    load_cicids2017,
    load_unsw_nb15,
)
from security_verifiers.envs.network_logs.reading import HostWindows, RowError, stream_items

FIXTURES = Path(__file__).parent / "fixtures"
ZEEK_HEADER = (
    "#separator \\x09\n#path\tconn\n"
    "#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tservice\tduration\torig_bytes\t"
    "resp_bytes\tconn_state\tlocal_orig\tlocal_resp\tmissed_bytes\thistory\torig_pkts\torig_ip_bytes\tresp_pkts\t"
    "resp_ip_bytes\ttunnel_parents   label   detailed-label\n"
)


def zeek_row(ts: float, host: str, port: int = 40000, label: str = "Benign   -") -> str:
    return (f"{ts:.6f}\tCx\t{host}\t{port}\t192.0.2.1\t53\tudp\tdns\t0.004\t38\t102\tSF\t-\t-\t0\tDd\t1\t66\t1\t130"
            f"\t-   {label}\n")


def write_zeek(path: Path, rows: list[str]) -> Path:
    path.write_text(ZEEK_HEADER + "".join(rows) + "#close\t2020-09-13-12-26-40\n")
    return path


def test_unreadable_rows_are_reported_in_place_and_reading_goes_on(tmp_path: Path) -> None:
    log = write_zeek(tmp_path / "conn.log.labeled", [
        zeek_row(1.0, "10.0.0.1"),
        "1.5\tCx\t10.0.0.1\n",  # line 5: cut short
        zeek_row(2.0, "10.0.0.1").replace("0.004", "four"),  # line 6: duration is not a number
        zeek_row(3.0, "10.0.0.1", label="Malicious   PartOfAHorizontalPortScan"),
    ])
    with IoT23File(log) as file:
        out = list(stream_items([file], "local"))
    errors = [o for o in out if isinstance(o, RowError)]
    assert [(e.file, e.line) for e in errors] == [(str(log), 5), (str(log), 6)]
    assert "3 cells, expected 23" in errors[0].reason and "'duration'" in errors[1].reason
    items = [o for o in out if not isinstance(o, RowError)]
    assert [i.meta for i in items] == [{"dataset": "iot-23", "source": "conn.log.labeled", "line": n} for n in (4, 7)]
    assert [f["ts"] for f in items[1].input["window"]] == [1.0]  # the unreadable rows are not in any window
    assert file.rows == 4


def test_identical_rows_are_distinct_items(tmp_path: Path) -> None:
    # the old loader kept one of two identical rows; a stream cannot remember ids, so the line is in the id
    log = write_zeek(tmp_path / "conn.log.labeled", [zeek_row(1.0, "10.0.0.1")] * 3)
    with IoT23File(log) as file:
        items = list(stream_items([file], "local"))
    Dataset(id="x", items=items, splits=("local",))  # unique ids
    assert [len(i.input["window"]) for i in items] == [0, 1, 2]


def test_window_holds_earlier_flows_of_the_host_that_did_not_start_later(tmp_path: Path) -> None:
    # Zeek writes a connection when it ends: a long one that started earlier comes later in the file
    log = write_zeek(tmp_path / "conn.log.labeled", [
        zeek_row(10.0, "10.0.0.1"), zeek_row(12.0, "10.0.0.1"), zeek_row(11.0, "10.0.0.1"),
        zeek_row(13.0, "10.0.0.2"), zeek_row(14.0, "10.0.0.1"),
    ])
    with IoT23File(log) as file:
        items = [i for i in stream_items([file], "local") if not isinstance(i, RowError)]
    windows = [[f["ts"] for f in i.input["window"]] for i in items]
    assert windows == [[], [10.0], [10.0], [], [10.0, 11.0, 12.0]]  # oldest first, never a later start


def test_flows_with_equal_timestamps_stay_in_file_order(tmp_path: Path) -> None:
    # a clock that counts minutes gives many flows one timestamp: their order is the capture's
    log = write_zeek(tmp_path / "conn.log.labeled", [
        zeek_row(60.0, "10.0.0.1", port=1), zeek_row(120.0, "10.0.0.1", port=2), zeek_row(60.0, "10.0.0.1", port=3),
        zeek_row(60.0, "10.0.0.1", port=4), zeek_row(120.0, "10.0.0.1", port=5),
    ])
    with IoT23File(log) as file:
        items = [i for i in stream_items([file], "local") if not isinstance(i, RowError)]
    assert [f["id.orig_p"] for f in items[-1].input["window"]] == [1, 3, 4, 2]
    assert [f["id.orig_p"] for f in items[3].input["window"]] == [1, 3]  # the later minute is not "earlier"


def test_a_cic_window_in_minutes_marks_its_intervals_unknown(tmp_path: Path) -> None:
    """Every flow of a CIC-IDS-2017 minute shares its timestamp: the item says the clock counts minutes, its
    interval features are NaN (not the zeros the timestamps would give), and the prompt says so."""
    import math

    from security_verifiers.envs.network_logs import NetworkLogs
    from security_verifiers.envs.network_logs.features import FEATURE_NAMES, TIMING_FEATURES, features
    from security_verifiers.envs.network_logs.sim_to_real import REAL_DIR

    items = load_cicids2017(REAL_DIR / "cicids2017_friday.csv")
    busy = max(items, key=lambda i: len(i.input["window"]))
    assert len(busy.input["window"]) == 20 and busy.input["capture"]["ts_resolution"] == 60.0
    values = dict(zip(FEATURE_NAMES, features(busy.input), strict=True))
    assert all(math.isnan(values[name]) for name in TIMING_FEATURES)
    assert math.isnan(values["service_known"]) and math.isnan(values["server_spoke_first"])
    prompt = NetworkLogs().prompt(busy)[1].content
    assert "rounded down to 60 s" in prompt and "does not record service, history" in prompt


def test_least_recently_seen_host_is_forgotten_beyond_max_hosts(tmp_path: Path) -> None:
    log = write_zeek(tmp_path / "conn.log.labeled", [
        zeek_row(1.0, "10.0.0.1"), zeek_row(2.0, "10.0.0.2"), zeek_row(3.0, "10.0.0.1"),
        zeek_row(4.0, "10.0.0.3"),  # forgets 10.0.0.2, the least recently seen
        zeek_row(5.0, "10.0.0.2"), zeek_row(6.0, "10.0.0.3"),
    ])
    windows = HostWindows(max_hosts=2)
    with IoT23File(log) as file:
        items = [i for i in stream_items([file], "local", windows) if not isinstance(i, RowError)]
    assert [len(i.input["window"]) for i in items] == [0, 0, 1, 0, 0, 1]
    assert windows.forgotten == 2 and windows.hosts == 2


def test_what_the_stream_holds_does_not_grow_with_the_file(tmp_path: Path) -> None:
    """Counting what is held: at most max_hosts windows of WINDOW flows, and the file is read as items are
    taken (after the first item only its first lines have been read); then the peak memory of a stream ten
    times longer stays about the same."""
    hosts = [f"10.0.{h // 250}.{h % 250}" for h in range(40)]
    rows = [zeek_row(1.0 + i, hosts[(i // 25) % len(hosts)], port=1024 + i) for i in range(2000)]  # bursts of 25
    long_log = write_zeek(tmp_path / "long.log", rows)
    short_log = write_zeek(tmp_path / "short.log", rows[:200])

    windows = HostWindows(max_hosts=16)
    with IoT23File(long_log) as file:
        stream = stream_items([file], "local", windows)
        next(stream)
        assert file.bytes_read < 2 * len(ZEEK_HEADER) + 2 * len(rows[0])
        count, most = 1, 0
        for _ in stream:
            count += 1
            assert windows.hosts <= 16 and windows.flows_held <= 16 * WINDOW
            most = max(most, windows.flows_held)
        assert count == 2000 and windows.forgotten > 0 and most == 16 * WINDOW

    def peak(path: Path) -> int:
        tracemalloc.start()
        with IoT23File(path) as file:
            for _ in stream_items([file], "local", HostWindows(max_hosts=4)):  # full after 100 rows
                pass
        peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak_bytes

    assert peak(long_log) < 1.3 * peak(short_log)


def test_headers_match_whatever_their_case_and_spacing(tmp_path: Path) -> None:
    # UNSW-NB15 releases differ in case; CIC-IDS-2017 pads names with spaces (here: more of them, and a BOM)
    unsw = (FIXTURES / "unsw_nb15_training_set.csv").read_text()
    header, rest = unsw.split("\n", 1)
    (tmp_path / "unsw_nb15_training_set.csv").write_text(header.upper() + "\n" + rest)
    assert load_unsw_nb15(tmp_path / "unsw_nb15_training_set.csv") == load_unsw_nb15(
        FIXTURES / "unsw_nb15_training_set.csv")
    cic = (FIXTURES / "cicids2017_trafficlabelling.csv").read_text(encoding="utf-8")
    header, rest = cic.split("\n", 1)
    odd = "\ufeff" + ",".join(f"  {name.strip().lower()}  " for name in header.split(","))
    (tmp_path / "cicids2017_trafficlabelling.csv").write_text(odd + "\n" + rest, encoding="utf-8")
    assert load_cicids2017(tmp_path / "cicids2017_trafficlabelling.csv") == load_cicids2017(
        FIXTURES / "cicids2017_trafficlabelling.csv")


@pytest.mark.parametrize("case", [str.lower, str.upper, lambda h: h.replace(",", " , ")])
def test_raw_unsw_under_the_feature_names_in_any_case_and_spacing(tmp_path: Path, case) -> None:
    # the header some copies take from NUSW-NB15_features.csv ("Sload", "ct_src_ ltm"), in other cases and spacing
    raw = (FIXTURES / "unsw_nb15_raw.csv").read_text()
    names = ("srcip,sport,dstip,dsport,proto,state,dur,sbytes,dbytes,sttl,dttl,sloss,dloss,service,Sload,Dload,"
             "Spkts,Dpkts,swin,dwin,stcpb,dtcpb,smeansz,dmeansz,trans_depth,res_bdy_len,Sjit,Djit,Stime,Ltime,"
             "Sintpkt,Dintpkt,tcprtt,synack,ackdat,is_sm_ips_ports,ct_state_ttl,ct_flw_http_mthd,is_ftp_login,"
             "ct_ftp_cmd,ct_srv_src,ct_srv_dst,ct_dst_ltm,ct_src_ ltm,ct_src_dport_ltm,ct_dst_sport_ltm,"
             "ct_dst_src_ltm,attack_cat,Label")
    (tmp_path / "with_header.csv").write_text(case(names) + "\n" + raw)
    assert [i.input for i in load_unsw_nb15(tmp_path / "with_header.csv")] == [
        i.input for i in load_unsw_nb15(FIXTURES / "unsw_nb15_raw.csv")]


def test_raw_unsw_with_a_feature_name_header(tmp_path: Path) -> None:
    # some copies of the raw files carry the names from NUSW-NB15_features.csv as a first line
    raw = (FIXTURES / "unsw_nb15_raw.csv").read_text()
    names = "srcip,sport,dstip,dsport,proto,state,dur,sbytes,dbytes,sttl,dttl,sloss,dloss,service,Sload,Dload," \
            "Spkts,Dpkts,swin,dwin,stcpb,dtcpb,smeansz,dmeansz,trans_depth,res_bdy_len,Sjit,Djit,Stime,Ltime," \
            "Sintpkt,Dintpkt,tcprtt,synack,ackdat,is_sm_ips_ports,ct_state_ttl,ct_flw_http_mthd,is_ftp_login," \
            "ct_ftp_cmd,ct_srv_src,ct_srv_dst,ct_dst_ltm,ct_src_ ltm,ct_src_dport_ltm,ct_dst_sport_ltm," \
            "ct_dst_src_ltm,attack_cat,Label"
    (tmp_path / "with_header.csv").write_text(names + "\n" + raw)
    with UnswNb15File(tmp_path / "with_header.csv") as file:
        flows = [i.input["flow"] for i in stream_items([file], "ood")]
    with UnswNb15File(FIXTURES / "unsw_nb15_raw.csv") as file:
        assert flows == [i.input["flow"] for i in stream_items([file], "ood")]


def test_a_header_none_of_whose_rows_can_be_read_fails_on_open(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("Flow ID, Label\nx,BENIGN\n")
    with pytest.raises(DatasetError, match=r"bad.csv:1: missing required column"):
        CicIds2017File(bad)
