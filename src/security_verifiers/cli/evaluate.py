"""``sv eval``: one run, a grid of runs, or a resumed run, and the tables they print."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from security_verifiers.cli.common import (
    DEFAULT_SPLIT,
    EXIT_ERROR_RATE,
    add_config_options,
    add_log_level,
    config_from_args,
    parse_env_options,
)
from security_verifiers.core.errors import ConfigError


def _limit_from_n(args: argparse.Namespace) -> None:
    """``--n N``, the old spelling of ``--limit N`` (given again, or stored by a run made before --limit), as
    ``--limit``: one setting from here on."""
    if args.n is not None and args.limit is None:
        args.limit, args.n = str(args.n), None


def _load_dataset(env: Any, args: argparse.Namespace) -> Any:
    """The items to evaluate, validated against the environment's item contract (a file of another environment's
    items, or of items that break it, is a DatasetError before anything runs). ``--limit`` (and ``--sample-seed``)
    choose the items of each split, or of the --data file (:mod:`security_verifiers.core.subset`)."""
    from security_verifiers.core.subset import ItemSubset

    _limit_from_n(args)  # a run stored before --limit, resumed
    if args.heldout:
        return _load_heldout(env, args)
    if args.secret_file is not None:
        raise ConfigError("--secret-file goes with --heldout")
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


def _load_dataset_part(env: Any, args: argparse.Namespace) -> Any:
    """:func:`_load_dataset`, then the part ``--shard i/N`` names (recorded in ``args.shard_claim`` for the run's
    metadata: which part of which dataset, so that ``sv merge`` can join the parts)."""
    from security_verifiers.core.shard import Shard

    shard = Shard.parse(getattr(args, "shard", None))
    if shard is not None and args.heldout:
        raise ConfigError("--shard and --heldout exclude each other: a gated set is evaluated whole")
    dataset = _load_dataset(env, args)
    if shard is None:
        return dataset
    part = shard.select(dataset)
    if not part.items:
        raise ConfigError(f"shard {shard.index}/{shard.count} of {dataset.id} holds no item ({len(dataset)} items in "
                          "all): use fewer shards")
    args.shard_claim = shard.describe(dataset)
    return part


def _load_heldout(env: Any, args: argparse.Namespace) -> Any:
    """The gated held-out set built from ``--secret-file``, refused unless its commitment is published for this
    environment; the commitment goes into the run's metadata (``args.heldout_claim``)."""
    from security_verifiers.core.heldout import build_heldout, check_published, read_key

    given = [f"--{name.replace('_', '-')}" for name in ("split", "data", "data_hash", "data_seed", "limit",
                                                        "sample_seed") if getattr(args, name) is not None]
    if given:
        raise ConfigError(f"--heldout evaluates the whole committed held-out set; it takes no {', '.join(given)}")
    if args.secret_file is None:
        raise ConfigError("--heldout needs --secret-file KEY, the key the set was committed with")
    dataset, commitment = build_heldout(env, read_key(args.secret_file))
    check_published(env, commitment)
    args.heldout_claim = {"id": commitment.id, "commitment": commitment.model_dump(mode="json")}
    return dataset


def print_metrics(summary: dict[str, Any]) -> None:
    """The headline metrics with their intervals, as the summary records them (the environment's own headline)."""
    from rich.console import Console
    from rich.table import Table

    from security_verifiers.core.metrics_report import MetricsReport, fmt

    table = Table(title=f"{summary['env']['name']} · {summary.get('model')}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    headline = [(h["key"], h["higher_is_better"]) for h in summary.get("headline_metrics", [])]
    for row in MetricsReport.from_summary(summary).headline(headline):
        table.add_row(f"{row.key} {row.arrow}", fmt(row.value), "" if row.interval is None else fmt(row.interval))
    counts = summary.get("counts", {})
    table.caption = (f"{counts.get('scored', 0)} scored, {counts.get('errors', 0)} infrastructure errors "
                     f"(excluded), {counts.get('parse_failures', 0)} unparseable answers (scored at minimum)")
    Console(stderr=True).print(table)


def print_errors(summary: dict[str, Any]) -> None:
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
    from security_verifiers.cli.resume import apply_stored_settings, find_run, invocation
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
    if args.n is not None and args.limit is not None:
        raise ConfigError("--n is the old spelling of --limit: give one of them")
    _limit_from_n(args)
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
    if run_config.executor == "ray":  # a missing extra is named before anything is written
        from security_verifiers.harness.ray_pool import import_ray

        import_ray()
    dataset = _load_dataset_part(env, args)  # before the cache, the policy and the run directory: nothing is written
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise ConfigError(f"--out {args.out} is a file; give the directory that holds the run directories")
    cache = None
    if not args.model.startswith("baseline:") and not args.no_cache:
        cache = ResponseCache(response_cache_path(args))
    policy = resolve_policy(args.model, env, endpoint=endpoint, sampling=sampling, timeout_s=run_config.timeout_s,
                            cache=cache)
    key_note = getattr(policy, "key_note", None)  # once per run, not once per request: see OpenAIChatPolicy
    if key_note:
        print(f"sv: note: {key_note}", file=sys.stderr)
    if not args.resume:
        run_dir = RunDir.for_run(root, env.name, args.model, args.run_id if args.run_id is not None else new_run_id())
    print(f"run directory: {run_dir.path}{' (resumed)' if args.resume else ''}", file=sys.stderr)
    stored = {"invocation": invocation(args, env.config.model_dump(mode="json"), endpoint, sampling)}
    if getattr(args, "heldout_claim", None) is not None:
        stored["heldout"] = args.heldout_claim
    if getattr(args, "config_file", None) is not None:
        stored["config_file"] = args.config_file
    if getattr(args, "shard_claim", None) is not None:
        stored["shard"] = args.shard_claim
    outcome = asyncio.run(run_eval(env, policy, dataset, run_dir, run_config, resume=args.resume,
                                   model_name=args.model, extra_metadata=stored, progress=not args.quiet))
    if cache is not None:
        cache.close()
    summary = regenerate(run_dir.path)
    if not args.quiet:
        print_metrics(summary)
    print_errors(summary)
    from security_verifiers.report.summary import usage_line

    if (line := usage_line(summary)) is not None:
        print(line, file=sys.stderr)
    if cache is not None:
        cached = summary.get("counts", {}).get("cached", 0)
        print(f"response cache: {cached} of {outcome.done} rollouts answered from {cache.path}"
              f"{' without asking the model (--no-cache or `sv cache clear` to ask it again)' if cached else ''}",
              file=sys.stderr)
    rate = outcome.error_rate
    retried = f", retries {outcome.retries}" if outcome.retries else ""
    print(f"{outcome.done}/{outcome.total} rollouts in {outcome.seconds:.2f}s "
          f"({outcome.done - outcome.resumed} this session, {outcome.resumed} resumed); "
          f"errors {outcome.errors} ({rate:.1%}){retried}; report: {run_dir.path / 'report.md'}; transcripts: "
          f"{run_dir.path / 'view.html'}", file=sys.stderr)
    if trackers:  # after the lines that say where the run is: a tracker's failure is the copy's, not the run's
        from security_verifiers.tracking import log_eval_run

        for line in log_eval_run(run_dir.path, trackers, root):
            print(line, file=sys.stderr)
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


def response_cache_path(args: argparse.Namespace) -> Path:
    """The response cache file: --cache-dir, else $SV_CACHE_DIR, else ~/.cache/security-verifiers."""
    from security_verifiers.core.paths import cache_dir

    return cache_dir(args.cache_dir) / "responses.sqlite"


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv evaluate`` to the command line's subcommands."""
    from security_verifiers.harness.runner import RunConfig
    from security_verifiers.models.base import Endpoint, Sampling

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
                    "in this process (tools called in text; see DEVELOPERS.md), or a model name served by an "
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
    ev.add_argument("--shard", default=None, metavar="i/N",
                    help="Evaluate part i of N (counted from 0) of the items, chosen by a hash of each item's id: "
                    "disjoint parts that cover every item, for a batch system's array of jobs; `sv merge` joins "
                    "the parts' runs (default: every item).")
    ev.add_argument("--data", default=None,
                    help="Evaluate a dataset file (JSONL from `sv data build`) instead of --split (default: none).")
    ev.add_argument("--data-hash", default=None,
                    help="Expected sha256:… hash of --data; a mismatch is an error (default: not checked).")
    ev.add_argument("--heldout", action="store_true", default=None,
                    help="Evaluate the gated held-out set built from --secret-file KEY (refused unless its "
                    "commitment is published in the environment's data/heldout.json); the run's metadata records "
                    "the commitment, which `sv heldout verify RUN` checks. Its transcripts hold the private items: "
                    "publish the summary, not the run directory.")
    ev.add_argument("--secret-file", default=None, metavar="KEY",
                    help="With --heldout: the file holding the secret key (default: none).")
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
                    "--concurrency, --score-workers, --max-error-rate, --executor and --ray-address may change; "
                    "--no-cache and --cache-dir are kept. Without --run-id the run that started last is continued; "
                    "a finished run with every rollout recorded is refused.")
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
    add_log_level(ev)
    ev.set_defaults(func=cmd_eval, command_parser=ev)
