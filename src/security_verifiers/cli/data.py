"""``sv data build`` and ``sv data import``: datasets generated, rebuilt from a run, or imported."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from security_verifiers.cli.common import (
    add_log_level,
)
from security_verifiers.cli.data_import import (
    cmd_data_import_code_repair,
    cmd_data_import_config_audit,
    cmd_data_import_network_logs,
    cmd_data_import_phishing,
    cmd_data_import_redteam_defense,
    remove_file,
    write_partial,
)
from security_verifiers.core.errors import ConfigError


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

    if env.items_from_runs_of is None:
        from security_verifiers.envs.base import registry

        builders = [f"{name} (from {cls.items_from_runs_of} runs)" for name, cls in sorted(registry().items())
                    if cls.items_from_runs_of is not None]
        raise ConfigError(f"{env.name} builds no items from runs (--from-run); environments that do: "
                          f"{', '.join(builders) or 'none'}")
    if args.out is None or any(getattr(args, name) is not None for name in ("split", "n", "seed")):
        raise ConfigError("--from-run takes --out FILE and none of --split, --n, --seed")
    out = Path(args.out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    items, problems = env.items_from_run(Path(args.from_run))
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
    from security_verifiers.harness.conformance import baseline_rewards

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
            built = build_public_sets(env, out, baseline_rewards(env))
    except OSError as err:
        raise ConfigError(f"cannot write {out}: {err.strerror or err}") from err
    print(json.dumps({"env": env.name, "out": str(out), "manifest": built.manifest,
                      "files": [str(path) for path in built.files], "seconds": round(time.perf_counter() - t0, 2)}))
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv data`` to the command line's subcommands."""
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
    add_log_level(build)
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
    nl = imp_sub.add_parser("network-logs", help="Labelled flow captures: IoT-23, CIC-IDS-2017, UNSW-NB15, CTU-13.",
                            description="Streams the files in constant memory, in file order: one item per flow, "
                            "its window the host's preceding flows. Unreadable rows are skipped and reported.")
    nl.add_argument("files", nargs="+", metavar="FILE", help="Dataset files, read in the order given.")
    nl.add_argument("--format", required=True, choices=("iot23", "cicids2017", "unsw-nb15", "ctu13"),
                    help="iot23: Zeek conn.log.labeled, as the Zeek TSV or exported as CSV; cicids2017: the CSVs "
                    "(with or without addresses), the original release or the 'improved' re-extraction (Engelen et "
                    "al. 2021); unsw-nb15: the training/testing-set CSVs or the raw 49-column files; ctu13: CTU-13 "
                    ".binetflow files (Argus; Background flows are unlabelled and not imported).")
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
