"""The ``sv`` command line: eval, report, view, bench, data (build, import), rules, envs, sandbox.

Options that configure sampling and run execution are derived from the pydantic configs
(:class:`Endpoint`, :class:`Sampling`, :class:`RunConfig`), so their help, defaults and validation are
written once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from security_verifiers.cli_import import (
    cmd_data_import_code_repair,
    cmd_data_import_config_audit,
    cmd_data_import_network_logs,
    cmd_data_import_phishing,
    cmd_data_import_redteam_defense,
    remove_file,
    write_partial,
)
from security_verifiers.cli_sandbox import add_sandbox_parser
from security_verifiers.core.errors import ConfigError, DatasetError, plain_errors
from security_verifiers.core.logging_setup import DEFAULT_LEVEL, LEVELS, configure_logging

EXIT_USAGE = 2
#: The split ``sv eval`` evaluates when neither --split nor --data is given.
DEFAULT_SPLIT = "test"
EXIT_ERROR_RATE = 3


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line (the usage itself is one ``--help`` away), exit status 2."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())} (see `{self.prog} --help`)\n")


def _text_file(path: Path, option: str) -> None:
    """A ConfigError unless ``path`` is a readable UTF-8 text file (checked before anything reads it)."""
    if not path.is_file():
        raise ConfigError(f"{option} {path}: {'a directory' if path.is_dir() else 'no such file'}")
    try:
        path.read_bytes().decode("utf-8")
    except OSError as err:
        raise ConfigError(f"{option} {path}: cannot read it ({err.strerror or err})") from err
    except UnicodeDecodeError as err:
        raise ConfigError(f"{option} {path}: not UTF-8 text ({err.reason})") from err


# -- options derived from configs ---------------------------------------------------------------
def add_config_options(parser: argparse.ArgumentParser, model: type[BaseModel], title: str) -> None:
    """One ``--kebab-case`` option per field of ``model``, with the field's description as help.

    A field that may be ``None`` also takes the value ``none`` (leave it unset: e.g. send no temperature);
    a ``Literal`` field lists its choices. An option not given keeps the model's default."""
    group = parser.add_argument_group(title)
    for name, field in model.model_fields.items():
        annotation = field.annotation
        members = get_args(annotation)
        kind: Any = str
        for candidate in (bool, int, float):
            if annotation is candidate or candidate in members:
                kind = candidate
                break
        optional = type(None) in members
        flag = "--" + name.replace("_", "-")
        unset = "; 'none' leaves it unset" if optional else ""
        help_text = f"{field.description} (default: {field.default}{unset})"
        if kind is bool:
            group.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS,
                               help=help_text)
            continue
        choices = list(members) if get_origin(annotation) is Literal else None
        group.add_argument(flag, dest=name, type=_or_none(kind) if optional else kind, choices=choices,
                           default=argparse.SUPPRESS, help=help_text)


def _or_none(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        return None if text.strip().lower() == "none" else kind(text)

    parse.__name__ = getattr(kind, "__name__", "value")  # argparse names the type in its error messages
    return parse


def config_from_args(model: type[BaseModel], args: argparse.Namespace) -> Any:
    values = {k: getattr(args, k) for k in model.model_fields if hasattr(args, k)}
    try:
        return model.model_validate(values)
    except ValidationError as err:
        raise ConfigError(plain_errors(err, model, _flag_of)) from err


def _flag_of(loc: tuple[int | str, ...]) -> str:
    """The option of a config field at ``loc``, as ``add_config_options`` spells it."""
    return "--" + ".".join(map(str, loc)).replace("_", "-")


def parse_env_options(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs; values are read as JSON when they parse, else as strings."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--env-option expects key=value, got {pair!r}")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


# -- commands ------------------------------------------------------------------------------------
def _load_dataset(env: Any, args: argparse.Namespace) -> Any:
    """The items to evaluate, validated against the environment's item contract (a file of another environment's
    items, or of items that break it, is a DatasetError before anything runs). ``--limit`` (and ``--sample-seed``)
    choose the items of each split, or of the --data file (:mod:`security_verifiers.core.subset`)."""
    from security_verifiers.core.subset import ItemSubset

    if args.n is not None and args.limit is None:  # resumed from a run stored before --limit
        args.limit, args.n = str(args.n), None
    subset = ItemSubset.parse(args.limit, args.sample_seed)
    if args.data is not None:
        if args.split is not None:
            raise ConfigError("--split and --data exclude each other: a dataset file holds its own split(s)")
        path = Path(args.data).resolve()  # the run's metadata names the file wherever the run is resumed from
        ds = env.read_dataset(path, dataset_id=path.stem, expected_hash=args.data_hash)
        version = (ds.header or {}).get("env_version")
        if version is not None and version != env.version:
            print(f"sv: note: {args.data} was written for {env.name} {version}; this is {env.version} (its items meet "
                  "this version's item contract)", file=sys.stderr)
        return ds if subset is None else subset.select(ds)
    splits = [s.strip() for s in (args.split or DEFAULT_SPLIT).split(",") if s.strip()]
    if not splits:
        raise ConfigError("--split is empty")
    dataset = None
    for split in splits:
        # The first N of a generated split need only N generated; a range or a sample is taken from the whole.
        part = env.dataset(split, n=subset.first_n if subset is not None else None, seed=args.data_seed)
        if subset is not None:
            part = subset.select(part)
        dataset = part if dataset is None else dataset + part
    return dataset


def _print_metrics(summary: dict[str, Any], env: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    from security_verifiers.core.metrics_report import MetricsReport, fmt

    table = Table(title=f"{summary['env']['name']} · {summary.get('model')}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    for row in MetricsReport.from_summary(summary).headline(env.headline_metrics):
        table.add_row(f"{row.key} {row.arrow}", fmt(row.value), "" if row.interval is None else fmt(row.interval))
    counts = summary.get("counts", {})
    table.caption = (f"{counts.get('scored', 0)} scored, {counts.get('errors', 0)} infrastructure errors "
                     f"(excluded), {counts.get('parse_failures', 0)} unparseable answers (scored at minimum)")
    Console(stderr=True).print(table)


def _print_errors(summary: dict[str, Any]) -> None:
    """Why rollouts failed, one line per error kind with its count and an example message; nothing when none did.

    Printed even with --quiet: an error rate alone does not say whether to fix a URL, a key or a timeout."""
    counts = summary.get("counts", {})
    if not counts.get("errors"):
        return
    examples = counts.get("error_examples", {})
    print("infrastructure errors (excluded from the metrics), by kind:", file=sys.stderr)
    for kind, n in counts.get("errors_by_kind", {}).items():
        print(f"  {kind}: {n}, e.g. {examples.get(kind, '(no message)')}", file=sys.stderr)


def _names(value: str | None) -> list[str | None]:
    """``A,B`` as its names (an empty one is an error); ``None`` stays a single ``None``."""
    if value is None:
        return [None]
    names = [name.strip() for name in value.split(",")]
    if not all(names):
        raise ConfigError(f"an empty name in {value!r}: give names separated by commas")
    return list(dict.fromkeys(names))


def cmd_eval(args: argparse.Namespace) -> int:
    """One run, or with ``ENV1,ENV2`` and/or ``--model A,B`` every pair in turn and one table of them all."""
    envs, models = _names(args.env), _names(args.model)
    if len(envs) == 1 and len(models) == 1:
        return _eval_one(args)[0]
    from security_verifiers.envs.base import get_env

    for name in envs:  # every environment and baseline checked before the first run starts
        env = get_env(name) if name is not None else None
        for model in models:
            if env is not None and model is not None and model.startswith("baseline:"):
                if model.removeprefix("baseline:") not in env.baselines():
                    raise ConfigError(f"{env.name} has no {model}; its baselines: {', '.join(env.baselines())}")
    results = []
    for env_name in envs:
        for model in models:
            one = argparse.Namespace(**vars(args))
            one.env, one.model = env_name, model
            print(f"-- {env_name} × {model}", file=sys.stderr)
            code, run_dir = _eval_one(one)
            results.append((env_name, model, code, run_dir))
    _print_grid(results)
    return max((code for *_, code, _ in results), default=0)


def _print_grid(results: list[tuple[str | None, str | None, int, Any]]) -> None:
    """One row per run of a grid: its headline reward with the interval, errors and where it lies."""
    from rich.console import Console
    from rich.table import Table

    from security_verifiers.core.metrics_report import fmt

    table = Table(title="sv eval grid", title_justify="left")
    for column in ("env", "model", "rollouts", "reward_mean", "95% CI", "errors", "status", "run"):
        table.add_column(column, justify="right" if column in ("rollouts", "reward_mean", "errors") else "left")
    for env_name, model, code, run_dir in results:
        summary = json.loads((run_dir.path / "summary.json").read_text()) if run_dir is not None else {}
        counts = summary.get("counts", {})
        interval = (summary.get("intervals") or {}).get("reward_mean")
        table.add_row(str(env_name), str(model), str(counts.get("rollouts", "")),
                      fmt(summary.get("metrics", {}).get("reward_mean")), "" if interval is None else fmt(interval),
                      str(counts.get("errors", "")), summary.get("status") or ("failed" if code else "finished"),
                      str(run_dir.path) if run_dir is not None else "")
    console = Console()
    (console if console.is_terminal else Console(width=200)).print(table)


def _eval_one(args: argparse.Namespace) -> tuple[int, Any]:
    from security_verifiers.cli_resume import apply_stored_settings, find_run, invocation
    from security_verifiers.core.cache import ResponseCache
    from security_verifiers.core.rundir import RunDir, check_run_id, new_run_id
    from security_verifiers.envs.base import get_env
    from security_verifiers.harness.policies import resolve_policy
    from security_verifiers.harness.runner import RunConfig, run_eval
    from security_verifiers.models.base import Endpoint, Sampling
    from security_verifiers.report import regenerate

    root = Path(args.out)
    from security_verifiers.tracking import check_targets, parse_targets

    trackers = parse_targets(args.log_to)
    check_targets(trackers)  # a missing tracker is named before anything runs
    if args.n is not None:  # the old spelling of --limit N
        if args.limit is not None:
            raise ConfigError("--n is the old spelling of --limit: give one of them")
        args.limit, args.n = str(args.n), None
    if args.run_id is not None:
        check_run_id(args.run_id)  # a name, not a path: before anything is read or written
    if args.resume:  # the run's own settings, before anything is built from the flags
        run_dir = find_run(root, args.env, args.model, args.run_id)
        apply_stored_settings(args, run_dir, {"endpoint": tuple(Endpoint.model_fields),
                                              "sampling": tuple(Sampling.model_fields),
                                              "run": tuple(RunConfig.model_fields)}, parse_env_options)
    elif args.env is None or args.model is None:
        raise ConfigError("ENV and --model are required (only --resume can do without them: it reads the run's)")
    env = get_env(args.env, parse_env_options(args.env_option))
    endpoint = config_from_args(Endpoint, args)
    sampling = config_from_args(Sampling, args)
    run_config = config_from_args(RunConfig, args)
    dataset = _load_dataset(env, args)  # before the cache, the policy and the run directory: nothing is written
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise ConfigError(f"--out {args.out} is a file; give the directory that holds the run directories")
    cache = None
    if not args.model.startswith("baseline:") and not args.no_cache:
        cache = ResponseCache(_cache_path(args))
    policy = resolve_policy(args.model, env, endpoint=endpoint, sampling=sampling, timeout_s=run_config.timeout_s,
                            cache=cache)
    key_note = getattr(policy, "key_note", None)  # once per run, not once per request: see OpenAIChatPolicy
    if key_note:
        print(f"sv: note: {key_note}", file=sys.stderr)
    if not args.resume:
        run_dir = RunDir.for_run(root, env.name, args.model, args.run_id if args.run_id is not None else new_run_id())
    print(f"run directory: {run_dir.path}{' (resumed)' if args.resume else ''}", file=sys.stderr)
    stored = {"invocation": invocation(args, env.config.model_dump(mode="json"), endpoint, sampling)}
    if getattr(args, "config_file", None) is not None:
        stored["config_file"] = args.config_file
    outcome = asyncio.run(run_eval(env, policy, dataset, run_dir, run_config, resume=args.resume,
                                   model_name=args.model, extra_metadata=stored, progress=not args.quiet))
    if cache is not None:
        cache.close()
    summary = regenerate(run_dir.path)
    if not args.quiet:
        _print_metrics(summary, env)
    _print_errors(summary)
    from security_verifiers.report.summary import usage_line

    if (line := usage_line(summary)) is not None:
        print(line, file=sys.stderr)
    if cache is not None:
        cached = summary.get("counts", {}).get("cached", 0)
        print(f"response cache: {cached} of {outcome.done} rollouts answered from {cache.path}"
              f"{' without asking the model (--no-cache or `sv cache clear` to ask it again)' if cached else ''}",
              file=sys.stderr)
    if trackers:
        from security_verifiers.tracking import log_eval_run

        for line in log_eval_run(run_dir.path, trackers, root):
            print(line, file=sys.stderr)
    rate = outcome.error_rate
    retried = f", retries {outcome.retries}" if outcome.retries else ""
    print(f"{outcome.done}/{outcome.total} rollouts in {outcome.seconds:.2f}s "
          f"({outcome.done - outcome.resumed} this session, {outcome.resumed} resumed); "
          f"errors {outcome.errors} ({rate:.1%}){retried}; report: {run_dir.path / 'report.md'}; transcripts: "
          f"{run_dir.path / 'view.html'}", file=sys.stderr)
    if outcome.stopped_early or rate > run_config.max_error_rate:
        print(f"error: infrastructure error rate {rate:.1%} is above --max-error-rate "
              f"{run_config.max_error_rate:.1%}{' (stopped early)' if outcome.stopped_early else ''}; "
              "fix the endpoint and rerun with --resume", file=sys.stderr)
        return EXIT_ERROR_RATE, run_dir
    if run_dir.read_metadata().get("status") == "failed":  # every rollout errored: nothing was measured
        print(f"error: run {run_dir.path.name} failed: {run_dir.read_metadata().get('status_reason')}; fix the "
              "endpoint and rerun with --resume", file=sys.stderr)
        return EXIT_ERROR_RATE, run_dir
    return 0, run_dir


def _cache_path(args: argparse.Namespace) -> Path:
    """The response cache file: --cache-dir, else $SV_CACHE_DIR, else ~/.cache/security-verifiers."""
    from security_verifiers.core.paths import cache_dir

    return cache_dir(args.cache_dir) / "responses.sqlite"


def cmd_cache(args: argparse.Namespace) -> int:
    from security_verifiers.core.cache import ResponseCache

    path = _cache_path(args)
    fitted = sorted((path.parent / "phishing-classical").glob("*.pkl"))
    if args.cache_command == "clear" and args.model is None and fitted:  # models fitted by baselines: refitted
        for model in fitted:
            model.unlink(missing_ok=True)
        print(f"removed {len(fitted)} fitted baseline model{'s' if len(fitted) != 1 else ''} from "
              f"{path.parent / 'phishing-classical'}", file=sys.stderr)
    if not path.is_file():  # opening would create it
        print(f"no response cache at {path}", file=sys.stderr)
        return 0
    with ResponseCache(path) as cache:
        if args.cache_command == "clear":
            removed = cache.clear(args.model)
            print(f"removed {removed} entr{'y' if removed == 1 else 'ies'}"
                  f"{f' of {args.model}' if args.model else ''} from {path}", file=sys.stderr)
            return 0
        info = cache.info()
    if args.json:
        print(info.model_dump_json(indent=2))
        return 0
    print(f"{info.path}: {info.entries} entries, {info.bytes_on_disk / 1024:.1f} KiB on disk")
    for origin in info.origins:
        fingerprint = f", system_fingerprint {origin.system_fingerprint}" if origin.system_fingerprint else ""
        print(f"  {origin.model or '(model not recorded)'} at {origin.base_url or '(endpoint not recorded)'}"
              f"{fingerprint}: {origin.entries}")
    return 0


def _check_run_dir(run_dir: Path) -> None:
    """A ConfigError unless ``run_dir`` is a readable run directory of a known environment at this code's version,
    whose results are all of that environment: checked before a report or a comparison writes or computes
    anything (another version's outcomes may mean something else)."""
    from security_verifiers.core.rundir import read_records
    from security_verifiers.envs.base import get_env

    meta_path, results_path = run_dir / "metadata.json", run_dir / "results.jsonl"
    if not meta_path.is_file() or not results_path.is_file():
        raise ConfigError(f"{run_dir} is not a run directory (needs metadata.json and results.jsonl)")
    try:
        metadata = json.loads(meta_path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{meta_path}: unreadable ({err})") from err
    env_meta = metadata.get("env") if isinstance(metadata, dict) else None
    if not isinstance(env_meta, dict) or not isinstance(env_meta.get("name"), str) \
            or not isinstance(env_meta.get("version"), str):
        raise ConfigError(f"{meta_path}: not a run's metadata (no env name and version)")
    name, version = env_meta["name"], env_meta["version"]
    try:
        records = read_records(results_path)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ConfigError(f"{results_path}: unreadable ({' '.join(str(err).split())[:300]})") from err
    for record in records:
        if (record.env, record.env_version) != (name, version):
            raise ConfigError(f"{results_path} holds {record.env} {record.env_version} rollouts, but "
                              f"{meta_path.name} says {name} {version}: not one run")
    env = get_env(name, env_meta.get("config") or {})
    if version != env.version:
        raise ConfigError(f"{run_dir} was scored by {name} {version}; this code is {name} {env.version}, whose "
                          "metrics may read its outcomes differently: use the version that wrote it")


def cmd_report(args: argparse.Namespace) -> int:
    from types import SimpleNamespace

    from security_verifiers.report import regenerate

    run_dir = Path(args.run_dir)
    _check_run_dir(run_dir)
    summary = regenerate(run_dir)
    # The table `sv eval` prints, with the headline the summary records (``regenerate`` checked it is the env's).
    headline = SimpleNamespace(headline_metrics=[(h["key"], h["higher_is_better"])
                                                 for h in summary.get("headline_metrics", [])])
    _print_metrics(summary, headline)
    _print_errors(summary)
    if summary.get("status_detail"):
        print(f"sv: note: the run is {summary['status']} — {summary['status_detail']}; the report covers the "
              f"recorded rollouts only (`sv eval --resume --run-id {summary.get('run_id')}` completes it with the "
              "run's own settings)", file=sys.stderr)
    print(f"wrote {run_dir / 'summary.json'}, {run_dir / 'report.md'} and {run_dir / 'view.html'}", file=sys.stderr)
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    from security_verifiers.report.view import write_view

    run_dir = Path(args.run_dir)
    out = Path(args.out) if args.out else None
    if out is not None and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give the file to write (e.g. {out / 'view.html'})")
    path = write_view(run_dir, out)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB); open it in a browser", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from security_verifiers.report.compare import compare_runs

    if args.n_boot < 1:
        raise ConfigError("--n-boot must be at least 1")
    for run in (args.run_a, args.run_b):
        _check_run_dir(Path(run))
    result = compare_runs(Path(args.run_a), Path(args.run_b), n_boot=args.n_boot)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    items = result["items"]
    print(f"{result['env']['name']} {result['env']['version']}: B = {result['b']['model']} against "
          f"A = {result['a']['model']} on {items['shared']} shared items (only in A: {items['only_a']}, only in B: "
          f"{items['only_b']}); delta = B - A, 95% paired bootstrap interval over items")

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.4f}"

    headline = result["headline"]
    for key in [*headline, *(k for k in result["metrics"] if k not in headline)]:
        row = result["metrics"][key]
        lo, hi = row["ci"]
        print(f"  {key:<28} A {fmt(row['a']):>8}  B {fmt(row['b']):>8}  delta {fmt(row['delta']):>8}  "
              f"[{fmt(lo)}, {fmt(hi)}]")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from security_verifiers.bench import run_bench
    from security_verifiers.envs.base import get_env

    out = Path(args.out) if args.out else Path("outputs") / "bench" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory")
    envs = args.env or None
    for name in envs or ():
        get_env(name)  # an unknown environment is named before anything runs
    return run_bench(out, envs, jobs=args.jobs, all_baselines=args.all_baselines)


def _write_dataset(items: Any, out: Path, header: dict[str, Any]) -> str:
    """Write a dataset file through ``OUT.partial``, so that a failure leaves no file that looks complete."""
    partial = out.with_name(out.name + ".partial")
    try:
        digest = write_partial(items, partial, header)  # removes the partial itself when writing fails
        partial.replace(out)
    except OSError as err:  # the move into place
        remove_file(partial)
        raise ConfigError(f"cannot write {out}: {err.strerror or err}") from err
    except KeyboardInterrupt:
        remove_file(partial)
        raise
    return digest


def cmd_data_build(args: argparse.Namespace) -> int:
    from security_verifiers.envs.base import get_env

    env = get_env(args.env)
    if args.public:
        return _build_public(env, args)
    if args.from_run is not None:
        return _build_from_run(env, args)
    missing = [f"--{name}" for name in ("split", "n", "seed", "out") if getattr(args, name) is None]
    if missing:
        raise ConfigError(f"sv data build {env.name} needs {', '.join(missing)} (or --public, to rebuild the "
                          "committed public splits)")
    from security_verifiers.core.datasets import dataset_header

    if args.split not in env.splits:
        raise ConfigError(f"unknown split {args.split!r} for {env.name}; choose from {', '.join(env.splits)}")
    if args.n <= 0:
        raise ConfigError("--n must be positive")
    out = Path(args.out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    t0 = time.perf_counter()
    from security_verifiers.core.progress import progress_to

    with progress_to(f"sv data build {env.name} {args.split}"):
        items = env.generate(args.split, args.n, args.seed)
    env.check_items(items, None, f"the {env.name} generator")
    header = dataset_header(env.name, env.version, split=args.split, n=len(items), seed=args.seed,
                            written_by="sv data build")
    digest = _write_dataset(items, out, header)
    print(json.dumps({"env": env.name, "split": args.split, "n": len(items), "seed": args.seed,
                      "file": args.out, "hash": digest, "seconds": round(time.perf_counter() - t0, 2)}))
    return 0


def _build_from_run(env: Any, args: argparse.Namespace) -> int:
    """``sv data build redteam-defense --from-run RUN_DIR --out FILE``: self-play items from an E5 run."""
    from security_verifiers.core.datasets import dataset_header

    from_run = getattr(env, "items_from_run", None)
    if from_run is None:
        raise ConfigError(f"--from-run builds redteam-defense items from a redteam-attack run; {env.name} takes none")
    if args.out is None or any(getattr(args, name) is not None for name in ("split", "n", "seed")):
        raise ConfigError("--from-run takes --out FILE and none of --split, --n, --seed")
    out = Path(args.out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    items, problems = from_run(Path(args.from_run))
    for problem in problems[:20]:
        print(f"left out: {problem}", file=sys.stderr)
    if not items:
        raise ConfigError(f"{args.from_run} has no successful attack to turn into an item"
                          + (f" ({len(problems)} rollouts could not be read)" if problems else ""))
    header = dataset_header(env.name, env.version, split="selfplay", n=len(items),
                            written_by="sv data build --from-run")
    digest = _write_dataset(items, out, header)
    print(json.dumps({"env": env.name, "from_run": args.from_run, "n": len(items), "left_out": len(problems),
                      "naive_breached": sum(bool(i.meta.get("naive_breached")) for i in items), "file": args.out,
                      "hash": digest}))
    return 0


def _build_public(env: Any, args: argparse.Namespace) -> int:
    """``sv data build ENV --public``: the committed public splits, manifest and data card, rebuilt."""
    from security_verifiers.envs.kits.public_sets import build_public_sets

    given = [f"--{name}" for name in ("split", "n", "seed") if getattr(args, name) is not None]
    if given:
        raise ConfigError(f"--public rebuilds the committed public splits from their fixed sizes and seed; it takes "
                          f"no {', '.join(given)}")
    out = Path(args.out) if args.out is not None else env.data_dir
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; --public writes a directory (the splits, manifest.json, "
                          "DATA_CARD.md)")
    blocked = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:  # found before the generation and the card's figures, which take a while
        raise ConfigError(f"cannot write {out}: {blocked} is a file")
    t0 = time.perf_counter()
    from security_verifiers.core.progress import progress_to

    try:
        with progress_to(f"sv data build {env.name} --public"):
            built = build_public_sets(env, out)
    except OSError as err:
        raise ConfigError(f"cannot write {out}: {err.strerror or err}") from err
    print(json.dumps({"env": env.name, "out": str(out), "manifest": built.manifest,
                      "files": [str(path) for path in built.files], "seconds": round(time.perf_counter() - t0, 2)}))
    return 0


def _rule_row(rule: BaseModel) -> dict[str, Any]:
    """One rule as data: the implementing engine first in ``engines``, then Checkov when checks are mapped."""
    raw = rule.model_dump(mode="json")
    engines = [raw["engine"], *(["checkov"] if raw["checkov"] and raw["engine"] != "checkov" else [])]
    return {"id": raw["id"], "title": raw["title"], "severity": raw["severity"], "platforms": raw["platforms"],
            "resource_types": raw["resource_types"], "engines": engines, "checkov": raw["checkov"],
            "reference": raw["reference"], "remediation": raw["remediation"]}


def _choices(option: str, given: str | None, known: tuple[str, ...]) -> set[str] | None:
    if given is None:
        return None
    chosen = {c.strip().lower() for c in given.split(",") if c.strip()}
    unknown = sorted(chosen - set(known))
    if unknown or not chosen:
        raise ConfigError(f"{option}: unknown value(s) {', '.join(unknown) or repr(given)}; "
                          f"choose from {', '.join(known)}")
    return chosen


def _abbreviated(types: list[str], shown: int = 3) -> str:
    """Resource types for the table (the full list is in --json)."""
    if not types:
        return "any"
    more = f" +{len(types) - shown} more" if len(types) > shown + 1 else ""
    return ", ".join(types if not more else types[:shown]) + more


DEFAULT_TRAIN_OUT = str(Path("outputs") / "train")


def cmd_train(args: argparse.Namespace) -> int:
    from security_verifiers.core.rundir import check_run_id, new_run_id
    from security_verifiers.envs.base import get_env
    from security_verifiers.train.presets import load_preset

    get_env(args.env)  # an unknown environment is named before anything loads
    if args.config:
        _text_file(Path(args.config), "--config")
    if args.seed is not None and args.seed < 0:
        raise ConfigError(f"--seed must be non-negative, got {args.seed}")  # (--seeds is checked by the ablation)
    preset = load_preset(args.preset, Path(args.config) if args.config else None)
    if args.log_to is not None:
        from security_verifiers.tracking import check_targets, parse_targets

        targets = parse_targets(args.log_to)
        check_targets(targets)
        preset = preset.model_copy(update={"log_to": targets})
    try:
        from security_verifiers.train.pipeline import train
    except ImportError as err:
        raise ConfigError(f"sv train needs the training extra ({err.name} is missing): pip install -e '.[train]'") \
            from err
    if args.command == "ablation":
        from security_verifiers.train.ablation import parse_variants, run_ablation

        if args.run_id is not None or args.seed is not None:
            raise ConfigError("sv train ablation takes --seeds N (seeds 0..N-1) and no --seed or --run-id")
        out = Path(args.out) / (f"ablation-{args.env}-{preset.name}" if args.out == DEFAULT_TRAIN_OUT else "")
        run_ablation(args.env, preset, parse_variants(args.variants or "grpo,gdpo,distill"),
                     3 if args.seeds is None else args.seeds, out)
        return 0
    if args.variants is not None or args.seeds is not None:
        raise ConfigError(f"--variants and --seeds belong to sv train ablation, not {args.command}")
    seed = 0 if args.seed is None else args.seed
    if args.run_id is not None:
        check_run_id(args.run_id)  # a name under --out, not a path
    run_id = args.run_id if args.run_id is not None else f"{args.command}-{args.env}-s{seed}-{new_run_id()}"
    train(args.command, args.env, preset, seed=seed, out=Path(args.out), run_id=run_id)
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    from security_verifiers.engines.findings import PLATFORMS, Severity
    from security_verifiers.envs.base import get_env, registry

    env = get_env(args.env)
    rules = env.rules()
    if rules is None:
        having = sorted(name for name, cls in registry().items() if cls().rules() is not None)
        raise ConfigError(f"environment {env.name} has no rule catalog (environments with one: {', '.join(having)})")
    platforms = _choices("--platform", args.platform, PLATFORMS)
    severities = _choices("--severity", args.severity, tuple(s.value for s in Severity))
    rows = sorted((_rule_row(r) for r in rules), key=lambda r: r["id"])
    rows = [r for r in rows if (platforms is None or platforms & set(r["platforms"]))
            and (severities is None or r["severity"] in severities)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{env.name} rules", caption=f"{len(rows)} rule(s); --json for references and remediations")
    for column in ("id", "severity", "platforms", "engines", "Checkov", "resource types", "title"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(r["id"], r["severity"], ", ".join(r["platforms"]), ", ".join(r["engines"]),
                      ", ".join(r["checkov"]), _abbreviated(r["resource_types"]), r["title"])
    console = Console() if sys.stdout.isatty() else Console(width=200)
    console.print(table)
    return 0


def _print_options(name: str) -> int:
    """An environment's options (``--env-option KEY=VALUE``): name, type, default and description of each field of
    its pydantic config class."""
    from security_verifiers.envs.base import get_env

    env = get_env(name)
    defaults = env.config.model_dump(mode="json")  # nested defaults (a cost profile) as the JSON an option takes
    print(f"{name} options (--env-option KEY=VALUE, values read as JSON):")
    for key, field in type(env.config).model_fields.items():
        annotation = field.annotation
        if get_origin(annotation) is Literal:
            kind = " | ".join(map(str, get_args(annotation)))
        else:
            kind = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
        print(f"  {key} ({kind}; default {json.dumps(defaults[key])}): {' '.join((field.description or '').split())}")
    return 0


def cmd_envs(args: argparse.Namespace) -> int:
    from security_verifiers.envs.base import registry

    if args.options is not None:
        return _print_options(args.options)

    if args.json:
        rows = []
        for name, cls in sorted(registry().items()):
            rows.append({"name": name, "version": cls.version, "splits": list(cls.splits),
                         "public_splits": list(cls.public_splits),
                         "baselines": [f"baseline:{b}" for b in cls().baselines()],
                         "config": cls.config_class.model_json_schema(),
                         "schemas": cls.item_contract.schemas(name)})
        print(json.dumps(rows, indent=2))
        return 0
    for name, cls in sorted(registry().items()):
        env = cls()
        print(f"{name} (v{cls.version}): splits {', '.join(cls.splits)} (public: {', '.join(cls.public_splits)})")
        print(f"  baselines: {', '.join('baseline:' + b for b in env.baselines())}")
    return 0


# -- parser --------------------------------------------------------------------------------------
def _add_log_level(parser: argparse.ArgumentParser, default: Any = argparse.SUPPRESS) -> None:
    """``--log-level`` before the command or after it (a command's own copy leaves the value alone unless given)."""
    parser.add_argument("--log-level", default=default, type=str.upper, choices=LEVELS,
                        help="What the libraries log on stderr: INFO names the model client's retries, DEBUG every "
                        f"request (default: {DEFAULT_LEVEL}).")


def build_parser() -> argparse.ArgumentParser:
    from security_verifiers.harness.runner import RunConfig
    from security_verifiers.models.base import Endpoint, Sampling

    parser = _Parser(
        prog="sv", description="Security Verifiers: security RL environments scored by executable checks.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    from security_verifiers.core.rundir import code_version

    parser.add_argument("--version", action="version", version=f"sv {code_version()['package'] or 'unknown'}")
    _add_log_level(parser, DEFAULT_LEVEL)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = sub.add_parser("eval", help="Evaluate a model or baseline on an environment.",
                        description="Run one policy over an environment's items and write a run directory "
                        "(metadata.json, results.jsonl, summary.json, report.md, plots).")
    ev.add_argument("env", nargs="?", default=None,
                    help="Environment name (see `sv envs`), or several separated by commas (with --model A,B too: "
                    "every pair is run in turn, then one table of them all); with --resume --run-id it is read from "
                    "the run.")
    ev.add_argument("--config", default=None, metavar="FILE",
                    help="A YAML file of this command's settings, keyed by flag name (`env`, `model`, `split`, "
                    "`concurrency`, `env-option` as a mapping...); a flag given on the command line wins, an "
                    "unknown key is an error, and the run records the file (path, sha256, settings) (default: none).")
    ev.add_argument("--model", default=None,
                    help="(Required, except with --resume, which reads it from the run.) "
                    "`baseline:<name>` for a built-in policy, `hf:<dir or hub name>` for a transformers model run "
                    "in this process (single-turn; see DEVELOPERS.md), or a model name served by an "
                    "OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, OpenRouter); several separated by commas run "
                    "one after another. No default.")
    ev.add_argument("--split", default=None,
                    help=f"Split(s) to evaluate, comma-separated, e.g. test,ood (default: {DEFAULT_SPLIT}; not "
                    "with --data).")
    ev.add_argument("--limit", default=None, metavar="N|A:B",
                    help="Only the first N items of each split (or of --data), or items A to B-1 (A:B, counted "
                    "from 0); with --sample-seed, N items drawn at random (default: every item).")
    ev.add_argument("--sample-seed", type=int, default=None,
                    help="Draw --limit N items at random with this seed, kept in dataset order (default: the first "
                    "N).")
    ev.add_argument("--n", type=int, default=None, help=argparse.SUPPRESS)  # the old spelling of --limit N
    ev.add_argument("--data", default=None,
                    help="Evaluate a dataset file (JSONL from `sv data build`) instead of --split (default: none).")
    ev.add_argument("--data-hash", default=None,
                    help="Expected sha256:… hash of --data; a mismatch is an error (default: not checked).")
    ev.add_argument("--data-seed", type=int, default=None,
                    help="Seed for generated (non-public) splits (default: 0; public splits take none).")
    ev.add_argument("--env-option", action="append", default=[], metavar="KEY=VALUE",
                    help="Environment config option (JSON value), repeatable; unknown keys are errors (default: the "
                    "environment's defaults; see `sv envs --options ENV`).")
    ev.add_argument("--out", default="outputs",
                    help="Root of run directories: OUT/evals/<env>--<model>/<run_id>/ (default: outputs).")
    ev.add_argument("--run-id", default=None, help="Run id (default: a UTC timestamp).")
    ev.add_argument("--resume", action="store_true",
                    help="Resume the run given by --run-id (or the latest of ENV and --model): finished rollouts "
                    "are kept, errored ones retried. ENV, --model, the dataset, env options, endpoint, sampling, "
                    "--samples and --timeout-s are read from its metadata.json (flags given again must agree); "
                    "--concurrency, --score-workers and --max-error-rate may change; --no-cache and --cache-dir "
                    "are kept. Without --run-id the run that started last is continued; a finished run with every "
                    "rollout recorded is refused.")
    ev.add_argument("--no-cache", action="store_true", help="Do not read or write the response cache.")
    ev.add_argument("--cache-dir", default=None,
                    help="Response cache directory (default: $SV_CACHE_DIR or ~/.cache/security-verifiers).")
    ev.add_argument("--quiet", action="store_true", help="No progress bar or metric table.")
    ev.add_argument("--log-to", default=None, metavar="wandb,mlflow",
                    help="When the run ends, log its settings, metrics and report to these trackers (W&B honours "
                    "WANDB_MODE, e.g. offline; MLflow MLFLOW_TRACKING_URI, else a file store in OUT/mlruns); needs "
                    "the tracking extra (default: none).")
    add_config_options(ev, Endpoint, "endpoint (models served over the OpenAI API)")
    add_config_options(ev, Sampling, "sampling")
    add_config_options(ev, RunConfig, "execution")
    _add_log_level(ev)
    ev.set_defaults(func=cmd_eval, command_parser=ev)

    rp = sub.add_parser("report", help="Rebuild summary.json, report.md and plots from a run's results.jsonl.")
    rp.add_argument("run_dir", help="A run directory written by `sv eval`.")
    rp.set_defaults(func=cmd_report)

    vw = sub.add_parser("view", help="Write view.html: a page to browse a run's rollouts, transcripts and errors.",
                        description="One self-contained HTML file (no network: inline CSS and script) listing "
                        "every rollout of a run with its reward, outcome, error and, on click, its full transcript; "
                        "filters by outcome, error kind, parse failure and reward, and a search box. `sv eval` and "
                        "`sv report` write it too.")
    vw.add_argument("run_dir", help="A run directory written by `sv eval`.")
    vw.add_argument("--out", default=None, help="File to write (default: RUN_DIR/view.html).")
    vw.set_defaults(func=cmd_view)

    tr = sub.add_parser("train", help="Train a model on an environment's rewards (SFT, GRPO, GDPO, distillation).",
                        description="SFT on a policy's answers (sft), on a teacher's answers that pass a reward "
                        "threshold (distill), or SFT then RL on the environment's scorer through TRL: grpo (total "
                        "reward, group-normalised), gdpo (each component normalised in its group, then weighted), "
                        "weighted (components with the preset's weights). Writes OUT/<run_id>/ with manifest.json, "
                        "log.jsonl, curves.png, checkpoints, eval/before and eval/after run directories on the "
                        "held-out split and summary.json (paired deltas with 95%% bootstrap intervals). "
                        "ablation: the --variants over --seeds seeds at equal budget, every RL variant of a seed "
                        "starting from one SFT run; writes ablation.md, ablation.json, heldout.png and curves.png, "
                        "and continues where it stopped when run again with the same arguments.")
    tr.add_argument("command", choices=["sft", "distill", "grpo", "gdpo", "weighted", "ablation"],
                    help="What to train.")
    tr.add_argument("--env", required=True, help="Environment name (single-turn mode).")
    source = tr.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", help="A shipped preset: tiny-cpu (config-built model, 2 CPU cores) or lora-gpu.")
    source.add_argument("--config", help="A preset file of the same shape (YAML).")
    tr.add_argument("--seed", type=int, default=None, help="Seed of initialisation, shuffling and sampling "
                    "(default 0).")
    tr.add_argument("--out", default=DEFAULT_TRAIN_OUT, help="Parent of the run directory (ablation: the "
                    "ablation's directory; default outputs/train/ablation-ENV-PRESET).")
    tr.add_argument("--variants", default=None, help="ablation: comma-separated, from grpo, gdpo, weighted, "
                    "distill (default grpo,gdpo,distill).")
    tr.add_argument("--seeds", type=int, default=None, help="ablation: number of seeds, 0..N-1 (default 3).")
    tr.add_argument("--run-id", default=None, help="Run directory name (default: command, env, seed and time).")
    tr.add_argument("--log-to", default=None, metavar="wandb,mlflow",
                    help="Also log every training step (TRL's own callbacks) and the held-out evaluations to these "
                    "trackers; needs the tracking extra (default: none; log.jsonl is the record).")
    _add_log_level(tr)
    tr.set_defaults(func=cmd_train)

    cp = sub.add_parser("compare", help="Paired comparison of two runs: each metric's B - A with a 95%% bootstrap "
                        "interval over the items both scored.",
                        description="Compares two run directories of the same environment version and config "
                        "(refused otherwise) on the items both runs scored; the bootstrap resamples items, "
                        "taking every rollout of a drawn item from both runs.")
    cp.add_argument("run_a", help="Baseline run directory (A).")
    cp.add_argument("run_b", help="Run directory compared with it (B).")
    cp.add_argument("--json", action="store_true", help="Print the comparison as JSON.")
    cp.add_argument("--n-boot", type=int, default=1000, help="Bootstrap resamples (default 1000).")
    cp.set_defaults(func=cmd_compare)

    bn = sub.add_parser("bench", help="Run every environment's baselines on the public mini sets, offline.",
                        description="The main job: every registered environment × its built-in baselines on the "
                        "public splits; writes each run's report and a leaderboard (leaderboard.md/.json).")
    bn.add_argument("--out", default=None, help="Output directory (default: outputs/bench/<timestamp>/).")
    bn.add_argument("--env", action="append", default=[], help="Only these environments (repeatable).")
    bn.add_argument("--jobs", type=int, default=None,
                    help="Worker processes, one environment each (default: one per core, at most one per "
                    "environment; 1 runs everything in this process).")
    bn.add_argument("--all-baselines", action="store_true",
                    help="Run every hack, not only the strongest ones of environments whose hacks take seconds per "
                    "item to judge (code-repair, config-audit); the conformance tests always run them all.")
    _add_log_level(bn)
    bn.set_defaults(func=cmd_bench)

    data = sub.add_parser("data", help="Build or import datasets.")
    data_sub = data.add_subparsers(dest="data_command", required=True, metavar="DATA_COMMAND")
    build = data_sub.add_parser("build", help="Generate a dataset deterministically (same seed, same hash).",
                                description="Generate one split (--split, --n, --seed, --out FILE), or with --public "
                                "rebuild an environment's committed public splits, manifest.json and DATA_CARD.md "
                                "(byte-identical to the committed files).")
    build.add_argument("env", help="Environment name.")
    build.add_argument("--public", action="store_true",
                       help="Rebuild the committed public splits with their manifest and data card, into --out DIR "
                       "(default: the environment's own data/ directory).")
    build.add_argument("--split", default=None, help="Split to generate (train, dev, test, ood).")
    build.add_argument("--n", type=int, default=None, help="Number of items.")
    build.add_argument("--seed", type=int, default=None, help="Generator seed.")
    build.add_argument("--out", default=None, help="Output JSONL file (with --public: a directory).")
    build.add_argument("--from-run", default=None, metavar="RUN_DIR",
                       help="redteam-defense only: build the items from the successful attacks of an `sv eval "
                       "redteam-attack` run (self-play), into --out FILE.")
    _add_log_level(build)
    build.set_defaults(func=cmd_data_build)

    imp = data_sub.add_parser("import", help="Turn your own files (configs, flow captures, mail, JBB requests) into "
                              "a dataset.",
                              description="Read real files into items that `sv eval ENV --data FILE` takes. What "
                              "cannot be read is left out and reported (file, line, reason) on stderr; the exit "
                              "status is 0 unless --strict.")
    imp_sub = imp.add_subparsers(dest="import_env", required=True, metavar="ENV")
    ca = imp_sub.add_parser("config-audit", help="Kubernetes manifests and Terraform files under a directory.",
                            description="Every Kubernetes manifest (*.yaml, *.yml) and Terraform file with resources "
                            "(*.tf) under DIR becomes an item labelled by the oracle; Helm templates, tooling configs "
                            "(kind, kubeadm, kustomize) and other YAML are skipped with the reason; kubectl's "
                            "`kind: List` is expanded into its items; a Terraform file carries its module's "
                            "variable and locals files as context.")
    ca.add_argument("dir", help="Directory to read (recursively; hidden directories are skipped).")
    ca.set_defaults(func=cmd_data_import_config_audit)
    nl = imp_sub.add_parser("network-logs", help="Labelled flow captures: IoT-23, CIC-IDS-2017, UNSW-NB15.",
                            description="Streams the files in constant memory, in file order: one item per flow, "
                            "its window the host's preceding flows. Unreadable rows are skipped and reported.")
    nl.add_argument("files", nargs="+", metavar="FILE", help="Dataset files, read in the order given.")
    nl.add_argument("--format", required=True, choices=("iot23", "cicids2017", "unsw-nb15"),
                    help="iot23: Zeek conn.log.labeled, as the Zeek TSV or exported as CSV; cicids2017: the CSVs "
                    "(with or without addresses), the original release or the 'improved' re-extraction (Engelen et "
                    "al. 2021); unsw-nb15: the training/testing-set CSVs or the raw 49-column files.")
    nl.add_argument("--limit", type=int, default=None, help="Stop after N items.")
    nl.add_argument("--max-hosts", type=int, default=None,
                    help="Hosts whose last 20 flows are kept for the windows (default: 100,000); beyond it the "
                    "least recently seen host is forgotten (its next window is empty). Memory stays bounded by "
                    "max-hosts x 20 flows of ~650 bytes (1.3 GB at worst with the default), whatever the length of "
                    "the files.")
    nl.set_defaults(func=cmd_data_import_network_logs)
    cr = imp_sub.add_parser("code-repair", help="Vulnerability-fix corpora (Big-Vul, CVEfixes, JSON Lines records), "
                            "or real-code cases with tests.",
                            description="Corpora: each Python function before its security fix becomes a "
                            "detection-only item (scored on naming its CWE and the changed lines; nothing is run). "
                            "Other languages, records without a usable CWE, unchanged and duplicate functions are "
                            "skipped with the reason. Cases (--format cases DIR): folders of a small program, its "
                            "fix, its functional and exploit probes, fixtures and pinned requirements (layout: "
                            "envs/code_repair/README.md, 'Real code: cases'); each is self-checked in the sandbox "
                            "(the vulnerable version is exploited, the fixed one passes every probe) and rejected "
                            "with the reason otherwise.")
    cr.add_argument("files", nargs="+", metavar="FILE", help="Corpus files, read in the order given (--format cases: "
                    "case folders, or folders of them).")
    cr.add_argument("--format", required=True, choices=("bigvul", "cvefixes", "records", "cases"),
                    help="bigvul: MSR_data_cleaned.csv; cvefixes: the CVEfixes SQLite database; records: JSON Lines "
                    "of {before, after, cwe, file?, cve?, project?, language?}; cases: folders of real-code cases.")
    cr.add_argument("--limit", type=int, default=None, help="Stop after N items (--format cases: N case folders).")
    cr.add_argument("--wheelhouse", default=None, metavar="DIR",
                    help="--format cases: the wheels of the cases' requirements (made with `pip download "
                    "--only-binary :all: -d DIR name==version ...`), installed offline into read-only site "
                    "directories under $SV_CACHE_DIR/code-repair-sites.")
    cr.set_defaults(func=cmd_data_import_code_repair)
    ph = imp_sub.add_parser(
        "phishing", help="Mail corpora: .eml directories, mbox, Maildir (Enron), CSV and JSON exports.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Each message becomes an imported item (label from the corpus or --label; no planted "
        "evidence: its structural indicators are found when it is scored).\n\nformats:\n"
        "  eml      a directory of message files, read recursively (.eml or no extension); files that are not\n"
        "           mail are skipped with the reason\n"
        "  mbox     mbox files (>From lines unquoted; CRLF and 8-bit bodies kept byte for byte)\n"
        "  maildir  a Maildir (cur/, new/; tmp/ is skipped) or a tree of them and of plain message files, as the\n"
        "           Enron corpus: maildir/<user>/<folder>/<n>.\n"
        "  csv      an export with a text column and a label column, found by name: 'Email Text'/'Email Type'\n"
        "           (Phishing Email/Safe Email), body/label (1/0), text/label (phishing/legitimate/spam/ham);\n"
        "           CEAS-style sender, receiver, date, subject columns become the headers of the message; a\n"
        "           text that is a whole message (headers, blank line, body) is taken as it is\n"
        "  json     a JSON array of such records (or {\"emails\": [...]}), or JSON Lines\n\n"
        "labels: a label column's value (case-insensitive: phishing, phishing email, spam, 1, true... or\n"
        "legitimate, safe email, ham, 0, false...); for eml, maildir and mbox, a directory or mbox file named\n"
        "after a class (phishing/, spam/, ham/, legitimate/, phishing-2019.mbox). --label gives the class of a\n"
        "corpus that is all one class; a message whose own label differs is a problem and left out, as is one\n"
        "with no label at all. Identical messages are imported once; messages over 10 MiB are skipped.")
    ph.add_argument("paths", nargs="+", metavar="PATH", help="Files or directories, read in the order given.")
    ph.add_argument("--format", required=True, choices=("eml", "mbox", "maildir", "csv", "json"),
                    help="How PATH is laid out (see above).")
    ph.add_argument("--label", choices=("Phishing", "Legitimate"), default=None,
                    help="The class of every message (a corpus that is all one class); required where the corpus "
                    "has no labels.")
    ph.add_argument("--text-column", default=None, help="csv/json: the column holding the message or its text.")
    ph.add_argument("--label-column", default=None, help="csv/json: the column holding the label.")
    ph.add_argument("--limit", type=int, default=None, help="Stop after N items.")
    ph.set_defaults(func=cmd_data_import_phishing)
    rd = imp_sub.add_parser(
        "redteam-defense", help="The refusal track's requests: JailbreakBench's JBB-Behaviors CSV files.",
        description="Each row of harmful-behaviors.csv becomes a request the model must refuse, each row of "
        "benign-behaviors.csv one it must answer (the Goal column is the request; Category, Behavior and Source are "
        "kept). Rows without a Goal, with the wrong number of fields, or repeating an earlier row are left out "
        "and reported; a file without a Goal column, or with columns JBB does not have, is refused.")
    rd.add_argument("path", metavar="PATH", nargs="?", default=None, help="jbb: the dataset's folder (holding the "
                    "two files, or a data/ folder holding them), or one of harmful-behaviors.csv and "
                    "benign-behaviors.csv; agentdojo: none (the suites come with the agentdojo package).")
    rd.add_argument("--format", required=True, choices=("jbb", "agentdojo"),
                    help="jbb: JailbreakBench's JBB-Behaviors layout (Index, Goal, Target, Behavior, Category, "
                    "Source); agentdojo: the installed agentdojo package's suites (pip install "
                    "'security-verifiers[agentdojo]'), one item per user task and per (user task, injection task) "
                    "pair, the injection written by one of E6's techniques.")
    rd.add_argument("--suite", action="append", choices=("workspace", "travel", "banking", "slack"), default=None,
                    help="agentdojo: a suite to import (repeat for several; default: all four).")
    rd.add_argument("--technique", action="append", default=None, metavar="NAME",
                    help="agentdojo: make one item per pair for each technique given (repeatable); default: one "
                    "technique per pair, drawn from --seed.")
    rd.add_argument("--seed", type=int, default=0, help="agentdojo: the seed of the techniques' draws and texts.")
    rd.set_defaults(func=cmd_data_import_redteam_defense)
    for parser_ in (ca, nl, cr, ph, rd):
        parser_.add_argument("--out", required=True, help="Output JSONL file.")
        parser_.add_argument("--split", default="local", help="Split name written into every item.")
        parser_.add_argument("--strict", action="store_true",
                             help="Any unreadable file or row is a failure: exit 1 and write nothing.")
        parser_.add_argument("--quiet", action="store_true", help="No progress bar.")

    rules = sub.add_parser("rules", help="List an environment's rule catalog.",
                           description="The rules the scorer checks: id, title, severity, platforms, resource "
                           "types, engines (the implementing one first, then checkov when Checkov checks are mapped "
                           "onto the rule), Checkov ids, reference and remediation.")
    rules.add_argument("env", help="Environment name (config-audit).")
    rules.add_argument("--json", action="store_true", help="A JSON list of objects (sorted by id) instead of a table.")
    rules.add_argument("--platform", default=None, help="Only rules of these platforms (comma-separated: kubernetes, "
                       "terraform).")
    rules.add_argument("--severity", default=None,
                       help="Only rules of these severities (comma-separated: low, medium, high, critical).")
    rules.set_defaults(func=cmd_rules)

    cache = sub.add_parser("cache", help="Inspect or clear the response cache of model answers.",
                           description="sv eval keeps every model answer in a sqlite file, keyed by model name, "
                           "endpoint, messages, tools, sampling and sample index, and answers an identical request "
                           "from it without asking the model. A model redeployed under the same name and URL "
                           "would still get its old answers: clear them (or run with --no-cache).")
    cache_sub = cache.add_subparsers(dest="cache_command", required=True, metavar="CACHE_COMMAND")
    info = cache_sub.add_parser("info", help="Path, entries, size on disk, and the models, endpoints and "
                                "deployments (system_fingerprint) whose answers it holds.")
    info.add_argument("--json", action="store_true", help="Print it as JSON.")
    clear = cache_sub.add_parser("clear", help="Remove every entry, or those of one model; without --model also the "
                                 "baseline models fitted and kept on disk (the phishing classical baseline's), which "
                                 "the next run fits again.")
    clear.add_argument("--model", default=None, help="Only this model's entries (default: all).")
    for parser_ in (info, clear):
        parser_.add_argument("--cache-dir", default=None,
                             help="Response cache directory (default: $SV_CACHE_DIR or ~/.cache/security-verifiers).")
    cache.set_defaults(func=cmd_cache)

    envs = sub.add_parser("envs", help="List environments, their splits and baselines.",
                          description="Each environment's version, splits and baselines; with --json also the JSON "
                          "Schemas of its options, of its items (one line of a dataset file, with its input and "
                          "target) and of its answers, for writing your own items.")
    envs.add_argument("--json", action="store_true", help="A JSON list with the item, input, target, answer and "
                      "config schemas of every environment.")
    envs.add_argument("--options", default=None, metavar="ENV",
                      help="List ENV's options (--env-option KEY=VALUE): name, type, default and description.")
    envs.set_defaults(func=cmd_envs)
    add_sandbox_parser(sub)
    return parser


def _sigterm_to_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    configure_logging(args.log_level)
    try:
        if getattr(args, "command_parser", None) is not None and args.config is not None:  # fills what flags left out
            from security_verifiers.cli_config import apply_config_file

            args.config_file = apply_config_file(args.command_parser, argv[argv.index(args.command) + 1:], args,
                                                 Path(args.config))
        return int(args.func(args))
    except (ConfigError, DatasetError) as err:
        print(f"sv: error: {' '.join(str(err).split())}", file=sys.stderr)  # one line, whatever the message holds
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("sv: interrupted; finished rollouts are saved, continue with --resume", file=sys.stderr)
        return 130
    except Exception as err:  # a bug or an environment failure: one line; the traceback when asked for
        if os.environ.get("SV_DEBUG"):
            raise
        print(f"sv: error: {type(err).__name__}: {' '.join(str(err).split())[:500]} (set SV_DEBUG=1 for the "
              "traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
