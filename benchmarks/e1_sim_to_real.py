"""E1 sim-to-real: false alarms and detection of the baselines on real flow files you have.

Reads real labelled flow files (IoT-23 ``conn.log.labeled`` or its CSV export, CIC-IDS-2017 CSVs, original or
improved, UNSW-NB15 CSVs, CTU-13 ``.binetflow`` files) through the environment's own readers
(``loaders.FORMATS``, the code behind ``sv data import network-logs``), answers every flow with each named
baseline (trained or tuned on generated data only) and scores the answers with the environment's scorer. Per
dataset (one per argument) and baseline it prints: the benign flows and the share a baseline calls Malicious
(its false-alarm rate; the share it abstains on is shown too), the attack flows and the share it calls
Malicious (its detection rate), each with a 95% Wilson interval, and the mean reward.

Each file's layout is detected from its header (a Zeek ``#fields`` line, or a CSV header with Zeek's
``id.orig_h`` and ``id.resp_p``: iot23; a CSV header with ``attack_cat`` or a headerless 49-cell row:
unsw-nb15; one with ``Flow Duration``: cicids2017; one with Argus' ``SrcBytes`` and ``TotBytes``: ctu13); give
it with ``FORMAT:PATH`` to skip detection. A directory is read recursively, its files in name order, and is one
dataset; windows (a host's preceding flows) run across the files of one argument. Unreadable rows are skipped
and counted; files of no known layout are named and skipped. CTU-13's Background flows are unlabelled (never
checked): they are counted, not scored.

    python benchmarks/e1_sim_to_real.py ~/data/CIC-IDS-2017 ~/data/iot23 unsw-nb15:~/data/UNSW_NB15_testing-set.csv
    python benchmarks/e1_sim_to_real.py DIR --baselines heuristic,gbdt,always-abstain --json out.json
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.envs.network_logs.loaders import FORMATS, UNSW_RAW_COLUMNS
from security_verifiers.envs.network_logs.reading import FlowFile, HostWindows, RowError, column_key, stream_items


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float, float] | None:
    """The share k/n and its Wilson score interval (95% by default); ``None`` when n is 0."""
    if n == 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return p, max(0.0, centre - half), min(1.0, centre + half)


def detect_layout(path: Path) -> str | None:
    """The reader (a key of ``FORMATS``) whose layout the file's first lines have, or ``None``."""
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as fh:
            head = [fh.readline() for _ in range(12)]
    except OSError:
        return None
    lines = [line.rstrip("\r\n") for line in head if line.strip()]
    if not lines:
        return None
    if lines[0].startswith("#"):
        return "iot23" if any(line.startswith("#fields") for line in lines) else None
    cells = next(csv.reader([lines[0]]))
    names = {column_key(c) for c in cells}
    if {column_key("id.orig_h"), column_key("id.resp_p")} <= names:
        return "iot23"
    if column_key("attack_cat") in names:
        return "unsw-nb15"
    if column_key("Flow Duration") in names:
        return "cicids2017"
    if {column_key("SrcBytes"), column_key("TotBytes")} <= names:
        return "ctu13"
    if len(cells) == len(UNSW_RAW_COLUMNS):
        return "unsw-nb15"
    return None


def _files(arg: str) -> tuple[str, str | None, list[Path]]:
    """(dataset name, forced format or None, files) of one command-line argument."""
    fmt = None
    head, sep, rest = arg.partition(":")
    if sep and head in FORMATS:
        fmt, arg = head, rest
    path = Path(arg).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
    elif path.is_file():
        files = [path]
    else:
        raise SystemExit(f"e1_sim_to_real: no such file or directory: {path}")
    return path.name or str(path), fmt, files


def read_dataset(arg: str) -> tuple[str, list[Item], dict[str, Any]]:
    """The items of one argument, through the environment's readers, and what happened reading them."""
    name, forced, files = _files(arg)
    report: dict[str, Any] = {"files": {}, "skipped_files": {}, "unreadable_rows": 0, "ignored_rows": 0,
                              "unlabelled_rows": 0, "first_errors": []}
    opened: list[FlowFile] = []
    for path in files:
        fmt = forced or detect_layout(path)
        if fmt is None:
            report["skipped_files"][str(path)] = f"no known layout ({', '.join(FORMATS)}) in its header"
            continue
        try:
            flow_file = FORMATS[fmt](path)
        except DatasetError as err:
            report["skipped_files"][str(path)] = f"{fmt}: {err}"
            continue
        report["files"][str(path)] = fmt
        opened.append(flow_file)
    items: list[Item] = []
    try:
        for out in stream_items(opened, "real", HostWindows()):
            if isinstance(out, RowError):
                report["unreadable_rows"] += 1
                if len(report["first_errors"]) < 3:
                    report["first_errors"].append(str(out))
                continue
            items.append(out)
    finally:
        for flow_file in opened:
            report["ignored_rows"] += flow_file.ignored
            report["unlabelled_rows"] += getattr(flow_file, "unlabelled", 0)
            flow_file.close()
    return name, items, report


def evaluate(env: NetworkLogs, items: list[Item], name: str) -> dict[str, Any]:
    """One baseline on one dataset: false alarms and abstentions on benign flows, detection on attacks."""
    policy = env.baselines()[name]()
    t0 = time.perf_counter()
    prepare = getattr(policy, "prepare", None)
    if callable(prepare):
        prepare(items)
    counts = {label: {"positive": 0, "negative": 0, "abstain": 0, "n": 0} for label in ("Benign", "Malicious")}
    rewards: list[float] = []
    for item in items:
        text = policy.answer(item, env.prompt(item))
        score = env.score(item, Transcript(messages=[Message(role="assistant", content=text)]))
        rewards.append(score.reward)
        row = counts[item.target["label"]]
        row["n"] += 1
        row[score.outcome["action"]] += 1
    benign, attack = counts["Benign"], counts["Malicious"]
    return {
        "benign_n": benign["n"], "false_alarm": wilson(benign["positive"], benign["n"]),
        "benign_abstain": wilson(benign["abstain"], benign["n"]),
        "attack_n": attack["n"], "detection": wilson(attack["positive"], attack["n"]),
        "reward_mean": sum(rewards) / len(rewards) if rewards else None,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _rate(value: tuple[float, float, float] | None) -> str:
    if value is None:
        return f"{'-':>22}"
    p, lo, hi = value
    return f"{p:>7.1%} [{lo:5.1%}, {hi:5.1%}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", metavar="[FORMAT:]PATH",
                        help=f"Files or directories of real flows; FORMAT is one of {', '.join(FORMATS)}.")
    parser.add_argument("--baselines", default="heuristic,gbdt",
                        help="Comma-separated baseline names (default: heuristic,gbdt).")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures as JSON here.")
    args = parser.parse_args()
    env = NetworkLogs()
    names = [n.strip() for n in args.baselines.split(",") if n.strip()]
    unknown = [n for n in names if n not in env.baselines()]
    if unknown:
        parser.error(f"unknown baseline(s) {', '.join(unknown)}; known: {', '.join(env.baselines())}")
    results: dict[str, Any] = {}
    for arg in args.paths:
        name, items, report = read_dataset(arg)
        print(f"\n{name}: {len(items)} flows from {len(report['files'])} file(s) "
              f"({', '.join(sorted(set(report['files'].values()))) or 'none'}); "
              f"{report['unreadable_rows']} unreadable row(s), "
              f"{report['ignored_rows'] - report['unlabelled_rows']} ignored (not TCP/UDP/ICMP, blank)"
              + (f", {report['unlabelled_rows']} unlabelled (CTU-13 Background) not scored"
                 if report["unlabelled_rows"] else ""))
        for path, why in report["skipped_files"].items():
            print(f"  skipped {path}: {why}")
        for err in report["first_errors"]:
            print(f"  e.g. {err}")
        results[name] = {"read": report, "baselines": {}}
        if not items:
            continue
        print(f"  {'baseline':<17}{'n benign':>9}  {'false alarms [95%]':>22}  {'abstain':>7}"
              f"{'n attack':>10}  {'detection [95%]':>22}{'reward':>8}")
        for baseline in names:
            row = evaluate(env, items, baseline)
            results[name]["baselines"][baseline] = row
            abstain = "-" if row["benign_abstain"] is None else f"{row['benign_abstain'][0]:.1%}"
            print(f"  {baseline:<17}{row['benign_n']:>9}  {_rate(row['false_alarm'])}  {abstain:>7}"
                  f"{row['attack_n']:>10}  {_rate(row['detection'])}{row['reward_mean']:>8.3f}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
