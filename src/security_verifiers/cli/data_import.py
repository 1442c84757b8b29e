"""``sv data import``: a user's own files into a dataset that ``sv eval ENV --data FILE`` takes.

The commands leave out what cannot be read, report it (file, line, reason) on stderr with a summary,
and exit 0; ``--strict`` turns any problem into exit status 1 with nothing written. Items are written to
``OUT.partial`` as they come and moved into place at the end, so an interrupted import never leaves a
file that looks complete. The readers live with their environments: ``envs/config_audit/loaders.py``,
``envs/network_logs/{loaders,reading}.py``, ``envs/code_repair/loaders.py``, ``envs/phishing/loaders.py``
and ``envs/redteam/defense/refusal.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError, DatasetError


def _import_progress(quiet: bool, *fields: str) -> Any:
    """A rich progress bar on stderr (``None`` with ``--quiet``); ``fields`` are extra text columns."""
    if quiet:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                    *(TextColumn(f) for f in fields), TimeElapsedColumn(), console=Console(stderr=True),
                    refresh_per_second=4)


def _print_problems(problems: Any, total: int, what: str) -> None:
    if not total:
        return
    shown = f"; the first {len(problems)} shown" if len(problems) < total else ""
    print(f"{total} {what} could not be read and were left out{shown}:", file=sys.stderr)
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)


def _out_path(args: argparse.Namespace) -> Path:
    out = Path(args.out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    return out


def _header(env: str, args: argparse.Namespace) -> dict[str, Any]:
    """The header line of an imported dataset: the environment and version its items are for."""
    from security_verifiers.core.datasets import dataset_header
    from security_verifiers.envs.base import registry

    return dataset_header(env, registry()[env].version, split=args.split, written_by="sv data import")


def write_partial(items: Any, partial: Path, header: dict[str, Any]) -> str:
    """Write the items to ``partial``; on a failure (not an interrupt) nothing is left behind."""
    from security_verifiers.core.datasets import write_jsonl

    try:
        return write_jsonl(items, partial, header)
    except OSError as err:
        remove_file(partial)
        raise ConfigError(f"cannot write {partial}: {err.strerror or err}") from err
    except Exception:
        remove_file(partial)
        raise


def remove_file(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:  # a path through a file, say: there is nothing to remove
        pass


def _finish_import(args: argparse.Namespace, env: str, partial: Path, n: int, digest: str, problems: int,
                   t0: float, **counts: int) -> int:
    """Move the written items into place and say what was imported; ``--strict`` fails on any problem."""
    out = Path(args.out)
    if args.strict and problems:
        partial.unlink(missing_ok=True)
        print(f"sv: {problems} problem(s) and --strict: nothing written to {out}", file=sys.stderr)
        return 1
    if n == 0:
        partial.unlink(missing_ok=True)
        raise DatasetError(f"nothing to import: no item could be built ({problems} problem(s)); see above")
    partial.replace(out)
    print(json.dumps({"env": env, "split": args.split, "n": n, "file": str(out), "hash": digest,
                      "problems": problems, **counts, "seconds": round(time.perf_counter() - t0, 2)}))
    return 0


def cmd_data_import_config_audit(args: argparse.Namespace) -> int:
    from security_verifiers.envs.config_audit.env import ConfigAudit
    from security_verifiers.envs.config_audit.loaders import load_directory_report

    _out_path(args)
    t0 = time.perf_counter()
    bar = _import_progress(args.quiet)
    tasks: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if bar is not None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(f"{stage} files" if stage == "reading" else "labelling (oracle)",
                                            total=total)
            bar.update(tasks[stage], completed=done)

    if bar is not None:
        bar.start()
    try:
        report = load_directory_report(Path(args.dir), split=args.split, progress=progress)
    finally:
        if bar is not None:
            bar.stop()
    if report.skipped:
        print(f"{len(report.skipped)} file(s) skipped (not configs to audit):", file=sys.stderr)
        for rel, reason in report.skipped:
            print(f"  {rel}: {reason}", file=sys.stderr)
    _print_problems(report.problems, len(report.problems), "file(s)")
    print(f"{len(report.items)} item(s) from {args.dir}: {len(report.skipped)} skipped, {len(report.problems)} "
          f"problem(s), {report.ignored} file(s) of other types ignored", file=sys.stderr)
    ConfigAudit.check_items(report.items, None, args.dir)  # the loader's items meet the item contract
    partial = Path(args.out + ".partial")
    digest = write_partial(report.items, partial, _header("config-audit", args))
    return _finish_import(args, "config-audit", partial, len(report.items), digest, len(report.problems), t0,
                          skipped=len(report.skipped))


def _source_names(paths: list[Path]) -> list[str]:
    """How items cite their files: paths relative to the files' common directory (the same whatever the
    working directory, and distinct for IoT-23's many files named ``conn.log.labeled``)."""
    resolved = [p.resolve() for p in paths]
    if len(set(resolved)) != len(resolved):
        raise ConfigError("a file is given twice")
    common = Path(os.path.commonpath([r.parent for r in resolved]))
    return [r.relative_to(common).as_posix() for r in resolved]


def cmd_data_import_network_logs(args: argparse.Namespace) -> int:
    from security_verifiers.core.importing import Problem, ProblemLog
    from security_verifiers.envs.network_logs.loaders import FORMATS
    from security_verifiers.envs.network_logs.reading import DEFAULT_MAX_HOSTS, HostWindows, RowError, stream_items

    if args.limit is not None and args.limit <= 0:
        raise ConfigError("--limit must be positive")
    max_hosts = DEFAULT_MAX_HOSTS if args.max_hosts is None else args.max_hosts
    if max_hosts <= 0:
        raise ConfigError("--max-hosts must be positive")
    _out_path(args)
    t0 = time.perf_counter()
    paths = [Path(p) for p in args.files]
    files = []
    try:
        for path, name in zip(paths, _source_names(paths), strict=True):
            files.append(FORMATS[args.format](path, name))  # reads and checks every header before any row
        windows, problems = HostWindows(max_hosts=max_hosts), ProblemLog()
        bar = _import_progress(args.quiet, "{task.fields[rows]:,} rows", "{task.fields[rate]:,.0f} rows/s")
        task = None if bar is None else bar.add_task("reading", total=sum(f.size for f in files), rows=0, rate=0)
        written, started = 0, time.perf_counter()

        def show() -> None:
            if bar is not None:
                rows = sum(f.rows for f in files)
                bar.update(task, completed=sum(f.bytes_read for f in files), rows=rows,
                           rate=rows / max(time.perf_counter() - started, 1e-9))

        def items() -> Iterator[Any]:
            nonlocal written
            for produced in stream_items(files, args.split, windows):
                if isinstance(produced, RowError):
                    problems.add(Problem(produced.file, produced.line, produced.reason))
                    continue
                yield produced
                written += 1
                if written % 2000 == 0:
                    show()
                if written == args.limit:
                    return

        partial = Path(args.out + ".partial")
        if bar is not None:
            bar.start()
        try:
            digest = write_partial(items(), partial, _header("network-logs", args))
        finally:
            show()
            if bar is not None:
                bar.stop()
    finally:
        for file in files:
            file.close()
    rows = sum(f.rows for f in files)
    seconds = time.perf_counter() - started
    _print_problems(problems.shown, problems.total, "row(s)")
    print(f"{written} item(s) from {rows:,} rows of {len(files)} file(s) in {seconds:.1f}s "
          f"({rows / max(seconds, 1e-9):,.0f} rows/s){' (--limit reached)' if written == args.limit else ''}; "
          f"{problems.total} unreadable, {sum(f.ignored for f in files)} ignored (blank, or not TCP/UDP/ICMP"
          f"{unlabelled_note(files)}); "
          f"{windows.forgotten} host(s) forgotten beyond --max-hosts {max_hosts:,}", file=sys.stderr)
    return _finish_import(args, "network-logs", partial, written, digest, problems.total, t0, rows=rows)


def unlabelled_note(files: list[Any]) -> str:
    """``, of them N unlabelled (CTU-13 Background)`` when a format leaves flows unlabelled, else nothing."""
    unlabelled = sum(getattr(f, "unlabelled", 0) for f in files)
    return f", of them {unlabelled:,} unlabelled: CTU-13 Background" if unlabelled else ""


def _import_code_repair_cases(args: argparse.Namespace) -> int:
    """Real-code cases (``envs/code_repair/cases.py``): each self-checked in the sandbox, rejected with the reason
    when it fails; repair items (or detection-only ones, for cases without a fix)."""
    from security_verifiers.envs.code_repair.cases import import_cases
    from security_verifiers.envs.code_repair.env import CodeRepair

    t0 = time.perf_counter()
    say = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    wheelhouse = Path(args.wheelhouse) if args.wheelhouse else None
    if not args.quiet:
        print(f"reading cases under {', '.join(args.files)}...", file=sys.stderr)
    report = import_cases([Path(p) for p in args.files], wheelhouse, split=args.split, limit=args.limit,
                          parallel=max(1, min(4, os.cpu_count() or 1)), progress=say)
    if report.rejected:
        print(f"{len(report.rejected)} case(s) rejected:", file=sys.stderr)
        for case, reason in report.rejected:
            print(f"  {case}: {reason}", file=sys.stderr)
    others = report.problems.total - len(report.rejected)
    if others:
        print(f"{others} folder(s) left out:", file=sys.stderr)
        for problem in report.problems.shown:
            if problem.file not in {case for case, _ in report.rejected}:
                print(f"  {problem}", file=sys.stderr)
    print(f"{len(report.items)} item(s) ({report.detection} detection-only) from {report.read} case(s); "
          f"{len(report.sites)} site directory(ies); self-check {report.check_seconds:.1f}s", file=sys.stderr)
    CodeRepair.check_items(report.items, None, ", ".join(args.files))
    partial = Path(args.out + ".partial")
    digest = write_partial(report.items, partial, _header("code-repair", args))
    return _finish_import(args, "code-repair", partial, len(report.items), digest, report.problems.total, t0,
                          rejected=len(report.rejected), detection=report.detection)


def cmd_data_import_code_repair(args: argparse.Namespace) -> int:
    """Vulnerability-fix corpora (Big-Vul, CVEfixes, JSON Lines records) as detection-only items, or real-code
    cases (``--format cases``) as self-checked repair items."""
    from security_verifiers.envs.code_repair.env import CodeRepair
    from security_verifiers.envs.code_repair.loaders import import_records

    if args.limit is not None and args.limit <= 0:
        raise ConfigError("--limit must be positive")
    _out_path(args)
    if args.format == "cases":
        return _import_code_repair_cases(args)
    if args.wheelhouse is not None:
        raise ConfigError("--wheelhouse is for --format cases")
    paths = [Path(p) for p in args.files]
    for path in paths:
        if not path.is_file():
            raise ConfigError(f"{path}: no such file")
    t0 = time.perf_counter()
    if not args.quiet:
        print(f"reading {len(paths)} file(s) as {args.format}...", file=sys.stderr)
    report = import_records(args.format, paths, split=args.split, limit=args.limit)
    if report.skipped:
        print(f"{sum(report.skipped.values())} record(s) skipped:", file=sys.stderr)
        for reason, count in report.skipped.most_common():
            print(f"  {count} {reason}", file=sys.stderr)
    _print_problems(report.problems.shown, report.problems.total, "record(s)")
    print(f"{len(report.items)} item(s) from {report.read} record(s) of {len(paths)} file(s)"
          f"{' (--limit reached)' if args.limit is not None and len(report.items) >= args.limit else ''}",
          file=sys.stderr)
    CodeRepair.check_items(report.items, None, ", ".join(args.files))
    partial = Path(args.out + ".partial")
    digest = write_partial(report.items, partial, _header("code-repair", args))
    return _finish_import(args, "code-repair", partial, len(report.items), digest, report.problems.total, t0,
                          skipped=sum(report.skipped.values()))


def _checked_phishing(items: Iterator[Any]) -> Iterator[Any]:
    """Each item checked against the item contract as it streams by (an import may hold millions of messages)."""
    from security_verifiers.envs.phishing.env import Phishing

    for item in items:
        Phishing.check_items([item], None, "sv data import phishing")
        yield item


def cmd_data_import_phishing(args: argparse.Namespace) -> int:
    """Mail corpora (``.eml`` directories, mbox, Maildir, CSV and JSON exports) as imported phishing items."""
    from security_verifiers.envs.phishing.loaders import ImportReport, import_messages

    if args.limit is not None and args.limit <= 0:
        raise ConfigError("--limit must be positive")
    if args.format not in ("csv", "json") and (args.text_column or args.label_column):
        raise ConfigError("--text-column and --label-column are for --format csv or json")
    _out_path(args)
    paths = [Path(p) for p in args.paths]
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or directory")
    names = _source_names(paths)
    t0 = time.perf_counter()
    report = ImportReport()
    bar = _import_progress(args.quiet, "{task.fields[n]:,} items", "{task.fields[skipped]:,} skipped",
                           "{task.fields[problems]:,} problems")
    task = None if bar is None else bar.add_task(f"reading {args.format}", total=None, n=0, skipped=0, problems=0)

    def show() -> None:
        if bar is not None:
            bar.update(task, n=report.imported, skipped=report.skipped_total, problems=report.problems.total)

    def items() -> Iterator[Any]:
        for item in import_messages(args.format, paths, names, label=args.label, split=args.split, limit=args.limit,
                                    text_column=args.text_column, label_column=args.label_column, report=report):
            yield item
            if report.imported % 200 == 0:
                show()

    partial = Path(args.out + ".partial")
    if bar is not None:
        bar.start()
    try:
        digest = write_partial(_checked_phishing(items()), partial, _header("phishing", args))
    finally:
        show()
        if bar is not None:
            bar.stop()
    if report.skipped:
        print(f"{report.skipped_total} message(s) skipped:", file=sys.stderr)
        for reason, count in sorted(report.skipped.items(), key=lambda kv: -kv[1]):
            print(f"  {count} {reason}", file=sys.stderr)
        shown = report.skipped_shown
        print(f"  {'the first ' + str(len(shown)) if len(shown) < report.skipped_total else 'they are'}: "
              + ", ".join(f"{s.source} ({s.reason})" for s in shown), file=sys.stderr)
    _print_problems(report.problems.shown, report.problems.total, "message(s) or record(s)")
    limited = args.limit is not None and report.imported >= args.limit
    print(f"{report.imported} item(s) from {report.read} message(s) read in {len(paths)} path(s)"
          f"{' (--limit reached)' if limited else ''}: {report.skipped_total} skipped, {report.problems.total} "
          "problem(s)", file=sys.stderr)
    return _finish_import(args, "phishing", partial, report.imported, digest, report.problems.total, t0,
                          read=report.read, skipped=report.skipped_total)


def cmd_data_import_redteam_defense(args: argparse.Namespace) -> int:
    """JailbreakBench's JBB-Behaviors (harmful behaviours and their benign twins) as refusal-track items."""
    from security_verifiers.core.importing import KEEP
    from security_verifiers.envs.base import registry
    from security_verifiers.envs.redteam.defense.refusal import load_jbb

    env = registry().get("redteam-defense")
    if env is None:
        raise ConfigError("the redteam-defense environment is not registered; nothing to import into")
    _out_path(args)
    if args.format == "agentdojo":
        return _import_agentdojo(args, env)
    if args.path is None or args.suite or args.technique:
        raise ConfigError("--format jbb takes PATH, and no --suite or --technique")
    path = Path(args.path)
    if not path.exists():
        raise ConfigError(f"{path}: no such file or directory")
    t0 = time.perf_counter()
    loaded, problems = load_jbb(path)
    items = [item.model_copy(update={"split": args.split}) for item in loaded]
    _print_problems(problems[:KEEP], len(problems), "row(s)")
    refuse = sum(item.target["decision"] == "refuse" for item in items)
    print(f"{len(items)} item(s) from {path}: {refuse} to refuse, {len(items) - refuse} to comply with; "
          f"{len(problems)} problem(s)", file=sys.stderr)
    env.check_items(items, None, args.path)
    partial = Path(args.out + ".partial")
    digest = write_partial(items, partial, _header("redteam-defense", args))
    return _finish_import(args, "redteam-defense", partial, len(items), digest, len(problems), t0, refuse=refuse,
                          comply=len(items) - refuse)


def _import_agentdojo(args: argparse.Namespace, env: Any) -> int:
    """AgentDojo's suites (the installed agentdojo package) as E6 items, each checked when made."""
    from security_verifiers.envs.redteam.defense.agentdojo.items import SUITES
    from security_verifiers.envs.redteam.defense.agentdojo.suites import build_items

    if args.path is not None:
        raise ConfigError("--format agentdojo takes no PATH: the suites come with the agentdojo package")
    t0 = time.perf_counter()
    items: list[Any] = []
    problems: list[str] = []
    counts: dict[str, int] = {}
    for suite in args.suite or SUITES:
        try:
            built, left_out = build_items(suite, split=args.split, seed=args.seed, techniques=args.technique)
        except (ImportError, ValueError) as err:
            raise ConfigError(str(err)) from err
        items += built
        problems += left_out
        counts[suite] = len(built)
        if not args.quiet:
            print(f"{suite}: {len(built)} item(s), {len(left_out)} pair(s) left out", file=sys.stderr)
    _print_problems(problems[:20], len(problems), "AgentDojo pair(s)")
    env.check_items(items, None, "the AgentDojo suites")
    partial = Path(args.out + ".partial")
    digest = write_partial(items, partial, _header("redteam-defense", args))
    return _finish_import(args, "redteam-defense", partial, len(items), digest, len(problems), t0, **counts)
