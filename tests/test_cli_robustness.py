"""Every `sv` sub-command against malformed and mismatched input: a non-zero exit, one line on stderr, no
traceback, and nothing left behind (no run directory, no output file, no ``.partial``).

The inputs tried (:data:`CASES`, by sub-command):

* files of the wrong environment (config-audit items given to network-logs and the reverse, with and
  without the ``sv_dataset`` header line; a file mixing both), a header of another major version, a
  malformed header;
* truncated JSONL (the last line cut), binary files (NUL bytes; bytes that are not UTF-8), empty files, a
  file holding only its header, a huge line (over the 16 MiB line limit) and a long garbage line;
* items that break the contract (an unknown protocol, a missing key);
* unknown options, unknown sub-commands, bad option values (non-numbers, zero and negative counts,
  out-of-range sampling values, unknown choices, ``key=value`` pairs that are not);
* unreadable paths: missing files, a directory where a file is expected, a file where a directory is
  expected, a path through a regular file, and a ``chmod 000`` file (skipped when the tests run as root,
  since root reads it anyway: the other unreadable paths still run);
* run directories from another environment, of another environment version, of an unknown environment, and
  with a corrupt ``metadata.json`` or a binary ``results.jsonl`` (report, view, compare, eval --resume).

For ``sv train`` only argument and input errors are tried: nothing starts training.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.datasets import dataset_header, write_jsonl
from security_verifiers.envs.config_audit.env import DATA_DIR as CA_DATA_DIR
from security_verifiers.envs.config_audit.env import ConfigAudit
from security_verifiers.envs.network_logs.env import NetworkLogs
from tests.helpers import e1_item

SV = [sys.executable, "-m", "security_verifiers.cli"]


# -- the inputs --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every malformed or mismatched input file, written once."""
    d = tmp_path_factory.mktemp("inputs")
    nl_items = [e1_item(i, "Malicious" if i % 2 else "Benign") for i in range(4)]
    ca_lines = (CA_DATA_DIR / "test.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    out: dict[str, Path] = {}

    def put(name: str, content: str | bytes) -> None:
        out[name] = d / name
        if isinstance(content, bytes):
            out[name].write_bytes(content)
        else:
            out[name].write_text(content, encoding="utf-8")

    out["nl"] = d / "nl.jsonl"
    write_jsonl(nl_items, out["nl"], dataset_header("network-logs", NetworkLogs.version, written_by="test"))
    out["nl_bare"] = d / "nl_bare.jsonl"
    write_jsonl(nl_items, out["nl_bare"])
    header = json.dumps({"sv_dataset": dataset_header("config-audit", ConfigAudit.version)})
    put("ca", "\n".join([header, *ca_lines]) + "\n")
    put("ca_bare", "\n".join(ca_lines) + "\n")
    nl_text = out["nl_bare"].read_text(encoding="utf-8")
    put("mixed", nl_text + ca_lines[0] + "\n")
    put("nl_major", json.dumps({"sv_dataset": dataset_header("network-logs", "0.9.0")}) + "\n" + nl_text)
    put("bad_header", '{"sv_dataset": 3}\n' + nl_text)
    put("truncated", nl_text[: len(nl_text) - 40])
    put("binary", bytes(range(256)) * 8)
    put("latin1", "caf\u00e9 \u00e0 la cr\u00e8me\n".encode("latin-1"))
    put("empty", "")
    put("header_only", json.dumps({"sv_dataset": dataset_header("network-logs", NetworkLogs.version)}) + "\n")
    put("huge_line", "x" * (17 * 1024 * 1024))
    put("long_garbage", '{"id": "' + "a" * 2_000_000 + "\n")
    item = json.loads(nl_text.splitlines()[0])
    item["input"]["flow"]["proto"] = "sctp"
    put("bad_proto", json.dumps(item) + "\n")
    item = json.loads(nl_text.splitlines()[0])
    del item["target"]["family"]
    put("no_family", json.dumps(item) + "\n")
    put("yaml_binary", b"\x00\x01\x02kind: Pod\xff\n")
    put("preset_binary", b"\x89PNG\r\n\x1a\n\x00\x00")
    put("preset_bad", "lr: [unclosed\n")
    put("csv_wrong", "a,b,c\n1,2,3\n")
    (d / "a_dir").mkdir()
    out["a_dir"] = d / "a_dir"
    (d / "yaml_dir").mkdir()
    (d / "yaml_dir" / "pod.yaml").write_bytes(b"\x00\xff\xfe binary\n")
    out["yaml_dir"] = d / "yaml_dir"
    out["locked"] = d / "locked.jsonl"
    shutil.copy(out["nl"], out["locked"])
    out["locked"].chmod(0)
    return out


@pytest.fixture(scope="module")
def runs(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real network-logs run, and copies made to look as if from another environment or version."""
    root = tmp_path_factory.mktemp("runs")
    assert main(["eval", "network-logs", "--model", "baseline:reference", "--data", str(files["nl"]), "--out",
                 str(root), "--run-id", "good", "--quiet"]) == 0
    good = root / "evals" / "network-logs--baseline-reference" / "good"
    out = {"good": good}

    def variant(name: str, edit: Callable[[Path], None]) -> None:
        path = root / "variants" / name
        shutil.copytree(good, path)
        edit(path)
        out[name] = path

    def set_env(name: str | None = None, version: str | None = None) -> Callable[[Path], None]:
        def edit(path: Path) -> None:
            meta = json.loads((path / "metadata.json").read_text())
            meta["env"].update({k: v for k, v in (("name", name), ("version", version)) if v is not None})
            (path / "metadata.json").write_text(json.dumps(meta))
        return edit

    variant("other_env", set_env(name="config-audit", version="2.1.0"))
    variant("other_version", set_env(version="0.1.0"))
    variant("unknown_env", set_env(name="no-such-env"))
    variant("bad_metadata", lambda p: (p / "metadata.json").write_text("{not json"))
    variant("binary_results", lambda p: (p / "results.jsonl").write_bytes(b"\x00\xff" * 100))
    variant("no_results", lambda p: (p / "results.jsonl").unlink())
    return out


# -- the cases ---------------------------------------------------------------------------------------
def _eval(env: str, *more: str) -> list[str]:
    return ["eval", env, "--model", "baseline:reference" if env == "network-logs" else "baseline:empty", "--quiet",
            *more]


#: (case id, argv with {name} placeholders for files and {run:name} for run directories, words the error names).
CASES: list[tuple[str, list[str], str]] = [
    # eval: the wrong environment's files
    ("eval-nl-given-ca-items", _eval("network-logs", "--data", "{ca}"), "holds config-audit items"),
    ("eval-nl-given-ca-items-no-header", _eval("network-logs", "--data", "{ca_bare}"), "holds config-audit items"),
    ("eval-ca-given-nl-items", _eval("config-audit", "--data", "{nl}"), "holds network-logs items"),
    ("eval-ca-given-nl-items-no-header", _eval("config-audit", "--data", "{nl_bare}"), "holds network-logs items"),
    ("eval-mixed-file", _eval("network-logs", "--data", "{mixed}"), "a config-audit item, not a network-logs item"),
    ("eval-other-major-version", _eval("network-logs", "--data", "{nl_major}"), "0.9.0"),
    ("eval-malformed-header", _eval("network-logs", "--data", "{bad_header}"), "malformed sv_dataset header"),
    # eval: malformed files
    ("eval-truncated", _eval("network-logs", "--data", "{truncated}"), "not a valid item"),
    ("eval-binary", _eval("network-logs", "--data", "{binary}"), "binary"),
    ("eval-not-utf8", _eval("network-logs", "--data", "{latin1}"), "not UTF-8"),
    ("eval-empty", _eval("network-logs", "--data", "{empty}"), "empty"),
    ("eval-header-only", _eval("network-logs", "--data", "{header_only}"), "no items"),
    ("eval-huge-line", _eval("network-logs", "--data", "{huge_line}"), "longer than 16 MiB"),
    ("eval-long-garbage-line", _eval("network-logs", "--data", "{long_garbage}"), "not a valid item"),
    ("eval-contract-proto", _eval("network-logs", "--data", "{bad_proto}"), "input.flow.proto"),
    ("eval-contract-missing-key", _eval("network-logs", "--data", "{no_family}"), "target.family"),
    # eval: paths, options and values
    ("eval-missing-file", _eval("network-logs", "--data", "{a_dir}/nope.jsonl"), "not found"),
    ("eval-data-is-dir", _eval("network-logs", "--data", "{a_dir}"), "directory"),
    ("eval-path-through-file", _eval("network-logs", "--data", "{nl}/x.jsonl"), "not found"),
    ("eval-unreadable", _eval("network-logs", "--data", "{locked}"), "Permission denied"),
    ("eval-out-is-file", _eval("network-logs", "--data", "{nl}", "--out", "{nl}"), "--out"),
    ("eval-unknown-option", _eval("network-logs", "--bogus"), "unrecognized arguments"),
    ("eval-n-not-int", _eval("network-logs", "--n", "abc"), "invalid int value"),
    ("eval-n-zero", _eval("network-logs", "--n", "0"), "--limit must be positive"),  # --n: the old spelling
    ("eval-limit-zero", _eval("network-logs", "--limit", "0"), "--limit must be positive"),
    ("eval-limit-negative", _eval("network-logs", "--data", "{nl}", "--limit", "-3"), "--limit takes N"),
    ("eval-limit-empty-range", _eval("network-logs", "--limit", "5:2"), "is empty"),
    ("eval-limit-past-the-end", _eval("network-logs", "--limit", "5000:5001"), "starts past the"),
    ("eval-sample-seed-alone", _eval("network-logs", "--sample-seed", "3"), "--sample-seed needs --limit N"),
    ("eval-limit-and-n", _eval("network-logs", "--limit", "3", "--n", "3"), "old spelling"),
    ("eval-temperature-range", _eval("network-logs", "--temperature", "9"), "--temperature"),
    ("eval-temperature-nan", _eval("network-logs", "--temperature", "nan"), "--temperature"),
    # numbers the endpoint client cannot use: they used to be accepted, and every request then failed inside the
    # openai client (AssertionError "could not resolve response" for -1 retries; a connection error for inf)
    ("eval-max-retries-negative", _eval("network-logs", "--max-retries", "-1"), "--max-retries"),
    ("eval-model-max-retries-negative", ["eval", "network-logs", "--model", "some-model", "--base-url",
                                         "http://127.0.0.1:9/v1", "--no-cache", "--quiet", "--max-retries", "-1"],
     "--max-retries"),
    ("eval-max-retries-not-int", _eval("network-logs", "--max-retries", "two"), "--max-retries"),
    ("eval-timeout-inf", _eval("network-logs", "--timeout-s", "inf"), "--timeout-s"),
    ("eval-timeout-zero", _eval("network-logs", "--timeout-s", "0"), "--timeout-s"),
    ("eval-concurrency-zero", _eval("network-logs", "--concurrency", "0"), "--concurrency"),
    ("eval-env-option-no-equals", _eval("network-logs", "--env-option", "window"), "key=value"),
    ("eval-env-option-bad-value", _eval("network-logs", "--env-option", "window=abc"), "window"),
    ("eval-unknown-env", ["eval", "no-such-env", "--model", "baseline:reference"], "unknown environment"),
    ("eval-unknown-split", _eval("network-logs", "--split", "nope"), "unknown split"),
    ("eval-empty-split", _eval("network-logs", "--split", ","), "--split"),
    ("eval-resume-nothing", _eval("network-logs", "--resume", "--run-id", "nope"), "resume"),
    # report
    ("report-missing", ["report", "{a_dir}/nope"], "not a run directory"),
    ("report-file", ["report", "{nl}"], "not a run directory"),
    ("report-no-results", ["report", "{run:no_results}"], "not a run directory"),
    ("report-other-env", ["report", "{run:other_env}"], "says config-audit"),
    ("report-other-version", ["report", "{run:other_version}"], "0.1.0"),
    ("report-unknown-env", ["report", "{run:unknown_env}"], "no-such-env"),
    ("report-bad-metadata", ["report", "{run:bad_metadata}"], "metadata.json"),
    ("report-binary-results", ["report", "{run:binary_results}"], "results.jsonl"),
    ("report-unknown-option", ["report", "{run:good}", "--bogus"], "unrecognized arguments"),
    # view
    ("view-missing", ["view", "{a_dir}/nope"], "not a run directory"),
    ("view-no-results", ["view", "{run:no_results}"], "not a run directory"),
    ("view-bad-metadata", ["view", "{run:bad_metadata}"], "metadata.json"),
    ("view-binary-results", ["view", "{run:binary_results}"], "results.jsonl"),
    ("view-out-is-dir", ["view", "{run:good}", "--out", "{a_dir}"], "is a directory"),
    # compare
    ("compare-other-env", ["compare", "{run:good}", "{run:other_env}"], "says config-audit"),
    ("compare-other-version", ["compare", "{run:good}", "{run:other_version}"], "0.1.0"),
    ("compare-unknown-env", ["compare", "{run:unknown_env}", "{run:unknown_env}"], "no-such-env"),
    ("compare-missing", ["compare", "{run:good}", "{a_dir}/nope"], "nope"),
    ("compare-bad-metadata", ["compare", "{run:good}", "{run:bad_metadata}"], "metadata.json"),
    ("compare-binary-results", ["compare", "{run:good}", "{run:binary_results}"], "results.jsonl"),
    ("compare-n-boot-zero", ["compare", "{run:good}", "{run:good}", "--n-boot", "0"], "--n-boot"),
    ("compare-n-boot-not-int", ["compare", "{run:good}", "{run:good}", "--n-boot", "x"], "invalid int"),
    # gate: the run directories are checked as compare checks them
    ("gate-other-env", ["gate", "{run:good}", "--against", "{run:other_env}"], "says config-audit"),
    ("gate-other-version", ["gate", "{run:good}", "--against", "{run:other_version}"], "0.1.0"),
    ("gate-missing", ["gate", "{run:good}", "--against", "{a_dir}/nope"], "nope"),
    ("gate-n-boot-zero", ["gate", "{run:good}", "--against", "{run:good}", "--n-boot", "0"], "--n-boot"),
    ("gate-record-unknown-env", ["gate", "--record", "--env", "no-such-env"], "unknown environment"),
    # bench
    ("bench-unknown-env", ["bench", "--env", "no-such-env", "--out-dir"], "unknown environment"),
    ("bench-unknown-option", ["bench", "--bogus"], "unrecognized arguments"),
    ("bench-out-is-file", ["bench", "--env", "network-logs", "--out", "{nl}"], "--out"),
    # data build
    ("build-unknown-env", ["data", "build", "no-such-env", "--split", "dev", "--n", "3", "--seed", "1", "--out-file"],
     "unknown environment"),
    ("build-unknown-split", ["data", "build", "network-logs", "--split", "nope", "--n", "3", "--seed", "1",
                             "--out-file"], "unknown split"),
    ("build-n-zero", ["data", "build", "network-logs", "--split", "dev", "--n", "0", "--seed", "1", "--out-file"],
     "--n must be positive"),
    ("build-n-not-int", ["data", "build", "network-logs", "--split", "dev", "--n", "x", "--seed", "1", "--out-file"],
     "invalid int"),
    ("build-missing-option", ["data", "build", "network-logs", "--split", "dev", "--n", "3", "--out-file"],
     "--seed"),
    ("build-out-is-dir", ["data", "build", "network-logs", "--split", "dev", "--n", "3", "--seed", "1", "--out",
                          "{a_dir}"], "directory"),
    ("build-out-through-file", ["data", "build", "network-logs", "--split", "dev", "--n", "3", "--seed", "1",
                                "--out", "{nl}/x.jsonl"], "cannot write"),
    ("build-nothing-given", ["data", "build", "network-logs"], "--split, --n, --seed, --out (or --public"),
    ("build-public-with-split", ["data", "build", "network-logs", "--public", "--split", "test", "--n", "3"],
     "takes no --split, --n"),
    ("build-public-out-is-file", ["data", "build", "network-logs", "--public", "--out", "{nl}"], "is a file"),
    ("build-public-out-through-file", ["data", "build", "network-logs", "--public", "--out", "{nl}/x"],
     "cannot write"),
    ("build-public-unknown-env", ["data", "build", "no-such-env", "--public"], "unknown environment"),
    # data import
    ("import-ca-missing-dir", ["data", "import", "config-audit", "{a_dir}/nope", "--quiet", "--out-file"],
     "not a directory"),
    ("import-ca-file-not-dir", ["data", "import", "config-audit", "{nl}", "--quiet", "--out-file"],
     "not a directory"),
    ("import-ca-out-is-dir", ["data", "import", "config-audit", "{yaml_dir}", "--quiet", "--out", "{a_dir}"],
     "directory"),
    ("import-nl-given-jsonl", ["data", "import", "network-logs", "--format", "iot23", "{nl}", "--quiet",
                               "--out-file"], "#fields header"),
    ("import-nl-binary", ["data", "import", "network-logs", "--format", "iot23", "{binary}", "--quiet",
                          "--out-file"], "binary"),
    ("import-nl-empty", ["data", "import", "network-logs", "--format", "cicids2017", "{empty}", "--quiet",
                         "--out-file"], "empty"),
    ("import-nl-wrong-columns", ["data", "import", "network-logs", "--format", "cicids2017", "{csv_wrong}",
                                 "--quiet", "--out-file"], "missing required column"),
    ("import-nl-missing-file", ["data", "import", "network-logs", "--format", "unsw-nb15", "{a_dir}/nope.csv",
                                "--quiet", "--out-file"], "not found"),
    ("import-nl-dir", ["data", "import", "network-logs", "--format", "unsw-nb15", "{a_dir}", "--quiet",
                       "--out-file"], "not found"),
    ("import-nl-bad-format", ["data", "import", "network-logs", "--format", "pcap", "{nl}", "--out-file"],
     "invalid choice"),
    ("import-nl-limit-zero", ["data", "import", "network-logs", "--format", "iot23", "{nl}", "--limit", "0",
                              "--out-file"], "--limit"),
    ("import-nl-max-hosts", ["data", "import", "network-logs", "--format", "iot23", "{nl}", "--max-hosts", "-1",
                             "--out-file"], "--max-hosts"),
    ("import-unknown-env", ["data", "import", "no-such-env", "{a_dir}", "--out-file"], "invalid choice"),
    # rules, envs
    ("rules-unknown-env", ["rules", "no-such-env"], "unknown environment"),
    ("rules-no-catalog", ["rules", "network-logs"], "no rule catalog"),
    ("rules-bad-platform", ["rules", "config-audit", "--platform", "cloudformation"], "--platform"),
    ("rules-bad-severity", ["rules", "config-audit", "--severity", "urgent"], "--severity"),
    ("envs-unknown-option", ["envs", "--bogus"], "unrecognized arguments"),
    ("unknown-command", ["no-such-env"], "invalid choice"),
    ("no-command", [], "required"),
    # train: argument and input errors only
    ("train-unknown-env", ["train", "sft", "--env", "no-such-env", "--preset", "tiny-cpu"], "unknown environment"),
    ("train-unknown-preset", ["train", "sft", "--env", "network-logs", "--preset", "huge"], "unknown preset"),
    ("train-no-preset", ["train", "sft", "--env", "network-logs"], "--preset"),
    ("train-both-presets", ["train", "sft", "--env", "network-logs", "--preset", "tiny-cpu", "--config", "{nl}"],
     "not allowed with"),
    ("train-config-missing", ["train", "sft", "--env", "network-logs", "--config", "{a_dir}/nope.yaml"], "--config"),
    ("train-config-dir", ["train", "sft", "--env", "network-logs", "--config", "{a_dir}"], "--config"),
    ("train-config-binary", ["train", "sft", "--env", "network-logs", "--config", "{preset_binary}"], "UTF-8"),
    ("train-config-bad-yaml", ["train", "sft", "--env", "network-logs", "--config", "{preset_bad}"], "preset"),
    ("train-config-wrong-shape", ["train", "sft", "--env", "network-logs", "--config", "{nl}"], "preset"),
    ("train-unknown-command", ["train", "ppo", "--env", "network-logs", "--preset", "tiny-cpu"], "invalid choice"),
    ("train-seed-negative", ["train", "sft", "--env", "network-logs", "--preset", "tiny-cpu", "--seed", "-1"],
     "--seed"),
    ("train-seeds-zero", ["train", "ablation", "--env", "network-logs", "--preset", "tiny-cpu", "--seeds", "0"],
     "--seeds"),
    ("train-seeds-outside-ablation", ["train", "sft", "--env", "network-logs", "--preset", "tiny-cpu", "--seeds",
                                      "2"], "ablation"),
]


def _argv(argv: list[str], files: dict[str, Path], runs: dict[str, Path], out: Path) -> list[str]:
    """Fill the placeholders; ``--out-file`` becomes ``--out OUT/result.jsonl``, and ``eval`` and ``bench``
    write under ``OUT`` unless the case gives its own ``--out``."""
    filled: list[str] = []
    for arg in argv:
        if arg == "--out-file":
            filled += ["--out", str(out / "result.jsonl")]
            continue
        if arg == "--out-dir":
            filled += ["--out", str(out / "bench")]
            continue
        for name, path in files.items():
            arg = arg.replace("{" + name + "}", str(path))
        for name, path in runs.items():
            arg = arg.replace("{run:" + name + "}", str(path))
        filled.append(arg)
    if argv[:1] == ["eval"] and "--out" not in filled:
        filled += ["--out", str(out)]
    return filled


def _snapshot(*roots: Path) -> dict[str, float]:
    """Every path under ``roots`` with its modification time: what a failed command must leave unchanged."""
    return {str(p): p.stat().st_mtime for root in roots if root.exists() for p in [root, *root.rglob("*")]}


@pytest.mark.parametrize(("argv", "words"), [pytest.param(a, w, id=i) for i, a, w in CASES])
def test_bad_input_fails_cleanly(argv: list[str], words: str, files: dict[str, Path], runs: dict[str, Path],
                                 tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if "{locked}" in argv and os.geteuid() == 0:
        pytest.skip("running as root: a chmod 000 file is still readable (the other unreadable paths still run)")
    out = tmp_path / "out"
    out.mkdir()
    filled = _argv(argv, files, runs, out)
    capsys.readouterr()
    before = _snapshot(out, runs["good"].parent.parent.parent, files["a_dir"])
    try:
        code = main(filled)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    except BaseException as err:  # noqa: BLE001 - what the user would see as a traceback
        pytest.fail(f"sv {' '.join(argv)} raised {type(err).__name__}: {err}")
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code not in (0, None), f"exit status {code}; stderr: {captured.err}"
    assert "Traceback" not in captured.err
    assert len(lines) == 1, f"expected one line on stderr, got:\n{captured.err}"
    assert lines[0].startswith("sv"), lines[0]
    assert words in lines[0], lines[0]
    assert len(lines[0]) < 1000, "the error line is not short"
    assert _snapshot(out, runs["good"].parent.parent.parent, files["a_dir"]) == before, "partial output left behind"


# -- the mismatched --data runs, as a user runs them ---------------------------------------------------
@pytest.mark.parametrize(("env", "data", "holds"), [("network-logs", "ca", "config-audit"),
                                                    ("config-audit", "nl", "network-logs")])
def test_mismatched_data_is_one_line_exit_2_and_no_run_directory(env: str, data: str, holds: str,
                                                                files: dict[str, Path], tmp_path: Path) -> None:
    model = "baseline:heuristic" if env == "network-logs" else "baseline:tools"
    result = subprocess.run([*SV, "eval", env, "--model", model, "--data", str(files[data]), "--out",
                             str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"sv: error: {files[data]} holds {holds} items (its header says {holds} "
        f"{(ConfigAudit if holds == 'config-audit' else NetworkLogs).version}), not {env} items; "
        f"evaluate it with `sv eval {holds} --data {files[data]}`"]
    assert not (tmp_path / "o").exists()
