"""summary.json, results reading and report regeneration, from hand-made rollout records."""

import json
from pathlib import Path

import pytest

from security_verifiers.core.types import ErrorRecord, Item, Message, RolloutRecord, Transcript, Usage
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.report import regenerate
from security_verifiers.report.summary import (
    NO_SCORED_NOTE,
    SUMMARY_SCHEMA_VERSION,
    build_summary,
    read_results,
)

ENV = NetworkLogs()
FLOW = {"ts": 1.0, "id.orig_h": "10.0.0.1", "id.orig_p": 4444, "id.resp_h": "10.0.0.2", "id.resp_p": 22,
        "proto": "tcp", "conn_state": "S0"}
METADATA = {"env": ENV.describe(), "model": "test-model", "run_id": "run-1", "status": "finished",
            "dataset": {"id": "network-logs/test@abc", "hash": "sha256:abc", "splits": ["test"], "n": 6,
                        "item_ids": ["nl-0", "nl-1"]}}


def scored(i: int, truth: str, reply: str, latency: float = 1.0, cached: bool = False) -> RolloutRecord:
    item = Item(id=f"nl-{i}", split="test", meta={"difficulty": "easy"},
                input={"host": {"ip": "10.0.0.1", "role": "workstation"}, "flow": FLOW, "window": []},
                target={"label": truth, "family": "x" if truth == "Malicious" else "benign",
                        "p_malicious": 1.0 if truth == "Malicious" else 0.0})
    transcript = Transcript(messages=[Message(role="assistant", content=reply)])
    score = ENV.score(item, transcript)
    return RolloutRecord(env=ENV.name, env_version=ENV.version, item_id=item.id, split=item.split,
                         transcript=transcript, reward=score.reward, components=score.components,
                         outcome=score.outcome, parse_status=score.parse_status, latency_s=latency,
                         usage=Usage(prompt_tokens=100, completion_tokens=10), cached=cached)


def errored(i: int, kind: str) -> RolloutRecord:
    return RolloutRecord(env=ENV.name, env_version=ENV.version, item_id=f"nl-{i}", split="test",
                         error=ErrorRecord(kind=kind, message="boom"), latency_s=30.0,
                         usage=Usage(prompt_tokens=100))


RIGHT = '{"label": "Malicious", "p_malicious": 0.9}'
WRONG = '{"label": "Benign", "p_malicious": 0.2}'
RECORDS = [
    scored(0, "Malicious", RIGHT, latency=1.0),
    scored(1, "Malicious", WRONG, latency=2.0),
    scored(2, "Malicious", "no idea", latency=3.0),  # parse failure: scored at the minimum
    # Schema failure (a label outside the grammar), served from the response cache.
    scored(3, "Malicious", '{"label": "Maybe", "p_malicious": 0.5}', latency=4.0, cached=True),
    errored(4, "provider"),
    errored(5, "timeout"),
    errored(6, "provider"),
]
SUMMARY = build_summary(ENV, RECORDS, METADATA)

COUNT_CASES = [
    # Seven rollouts, three of them infrastructure errors.
    ("rollouts", 7), ("scored", 4), ("errors", 3), ("errors_by_kind", {"provider": 2, "timeout": 1}),
    ("error_rate", 3 / 7),
    # Parse failures are scored rollouts, counted by status.
    ("parse_failures", 2), ("parse_failures_by_status", {"no_json": 1, "schema": 1}),
    ("cached", 1),
]


@pytest.mark.parametrize(("key", "expected"), COUNT_CASES)
def test_counts(key: str, expected) -> None:
    assert SUMMARY["counts"][key] == pytest.approx(expected)


def test_errored_records_are_excluded_from_the_metrics() -> None:
    ok_outcomes = [r.outcome for r in RECORDS if r.error is None]
    assert SUMMARY["metrics"] == ENV.metrics(ok_outcomes)["metrics"]
    assert SUMMARY["metrics"]["n"] == 4
    # Rewards 0.997 (right), 0.108 (wrong), 0 and 0 (unparseable); the errors add nothing.
    assert SUMMARY["metrics"]["reward_mean"] == pytest.approx((0.997 + 0.108) / 4)
    assert set(SUMMARY["intervals"]) >= {"reward_mean", "f1"} and "family" in SUMMARY["breakdowns"]


def test_header_usage_and_latency() -> None:
    assert SUMMARY["schema_version"] == SUMMARY_SCHEMA_VERSION
    assert SUMMARY["env"]["name"] == "network-logs" and SUMMARY["env"]["version"] == ENV.version
    assert (SUMMARY["model"], SUMMARY["run_id"], SUMMARY["status"]) == ("test-model", "run-1", "finished")
    assert SUMMARY["dataset"]["hash"] == "sha256:abc" and "item_ids" not in SUMMARY["dataset"]
    # Errored calls still spent tokens, so usage counts all seven rollouts.
    # One rollout (100 + 10 tokens) was answered from the cache; no price was given, so no cost.
    assert SUMMARY["usage"] == {"prompt_tokens": 700, "completion_tokens": 40, "cached_prompt_tokens": 100,
                                "cached_completion_tokens": 10, "price_in": None, "price_out": None,
                                "cost_usd": None}
    # Uncached latencies 1, 2, 3, 30, 30, 30 (the cached rollout's 4 s is left out).
    assert SUMMARY["latency_s"]["mean"] == pytest.approx(96 / 6)
    assert SUMMARY["latency_s"]["p50"] == pytest.approx(16.5)
    assert SUMMARY["warnings"] == []
    json.dumps(SUMMARY, allow_nan=False)


def test_no_scored_records_give_empty_metrics_and_a_note() -> None:
    summary = build_summary(ENV, [errored(0, "provider")], METADATA)
    assert summary["metrics"] == {} and summary["intervals"] == {} and summary["note"] == NO_SCORED_NOTE
    assert summary["counts"]["errors"] == 1 and summary["counts"]["error_rate"] == 1.0


def test_records_of_another_scorer_version_are_flagged() -> None:
    old = RECORDS[0].model_copy(update={"env_version": "0.9.0"})
    assert "0.9.0" in build_summary(ENV, [old], METADATA)["warnings"][0]


def test_records_of_another_environment_are_refused() -> None:
    with pytest.raises(ValueError, match="other-env"):
        build_summary(ENV, [RECORDS[0].model_copy(update={"env": "other-env"})], METADATA)


def write_lines(path: Path, lines: list[str], trailing_newline: bool = True) -> Path:
    path.write_text("\n".join(lines) + ("\n" if trailing_newline else ""), encoding="utf-8")
    return path


def test_truncated_final_line_is_dropped(tmp_path: Path) -> None:
    full = [r.model_dump_json() for r in RECORDS[:3]]
    cut = full[2][: len(full[2]) // 2]  # a run killed mid-write: half a line, no newline
    path = write_lines(tmp_path / "results.jsonl", [*full[:2], cut], trailing_newline=False)
    assert [r.item_id for r in read_results(path)] == ["nl-0", "nl-1"]


def test_malformed_middle_line_raises(tmp_path: Path) -> None:
    full = [r.model_dump_json() for r in RECORDS[:3]]
    path = write_lines(tmp_path / "results.jsonl", [full[0], '{"env": "network-logs"', full[2]])
    with pytest.raises(ValueError, match=r"results.jsonl:2"):
        read_results(path)


def test_repeated_rollout_keeps_the_last(tmp_path: Path) -> None:
    first, retry = errored(1, "timeout"), scored(1, "Malicious", RIGHT)
    path = write_lines(tmp_path / "results.jsonl", [r.model_dump_json() for r in (first, RECORDS[0], retry)])
    records = read_results(path)
    assert len(records) == 2 and all(r.error is None for r in records)


def make_run_dir(root: Path, records: list[RolloutRecord]) -> Path:
    run_dir = root / "run"
    run_dir.mkdir()
    (run_dir / "metadata.json").write_text(json.dumps(METADATA), encoding="utf-8")
    write_lines(run_dir / "results.jsonl", [r.model_dump_json() for r in records])
    return run_dir


def test_regenerate_writes_summary_plots_and_report(tmp_path: Path) -> None:
    run_dir = make_run_dir(tmp_path, RECORDS)
    summary = regenerate(run_dir)
    assert json.loads((run_dir / "summary.json").read_text()) == summary
    assert summary["metrics"] == SUMMARY["metrics"]
    for name in ("reliability.png", "risk_coverage.png", "confusion.png"):
        assert (run_dir / name).read_bytes()[:4] == b"\x89PNG"
    report = (run_dir / "report.md").read_text()
    assert "excluded from every metric" in report and "3 errored" in report
    assert "![confusion](confusion.png)" in report
    for heading in ("## Headline metrics", "### By family", "### By split", "### By difficulty"):
        assert heading in report


def test_regenerate_with_only_errors(tmp_path: Path) -> None:
    run_dir = make_run_dir(tmp_path, [errored(0, "provider")])
    summary = regenerate(run_dir)
    assert summary["metrics"] == {}
    assert NO_SCORED_NOTE in (run_dir / "report.md").read_text()
    assert not list(run_dir.glob("*.png"))


def test_intervals_resample_items_not_rollouts() -> None:
    # 30 items answered 4 times each, the same way every time (--samples 4): the repeats carry no new
    # evidence, so the summary's interval must be as wide as an item-level bootstrap, not half as wide.
    records = [scored(i, "Malicious", RIGHT if i % 3 else WRONG) for i in range(30) for _ in range(4)]
    summary = build_summary(ENV, records, METADATA)
    outcomes, items = [r.outcome for r in records], [r.item_id for r in records]
    lo, hi = summary["intervals"]["reward_mean"]
    assert [lo, hi] == ENV.metrics(outcomes, items)["intervals"]["reward_mean"]
    lo_r, hi_r = ENV.metrics(outcomes)["intervals"]["reward_mean"]  # rollouts as if independent
    assert hi_r - lo_r < 0.7 * (hi - lo)


# -- runs whose results fall short of what their metadata promises --------------------------------------------
SIX = [scored(i, "Malicious", RIGHT) for i in range(6)]  # METADATA's dataset has n = 6


def test_a_cut_final_line_marks_the_run_incomplete_in_summary_and_report(tmp_path: Path) -> None:
    # The run finished, then its last line was cut (a disk filled, a copy stopped short). The reader still drops
    # that line, but the report used to say "status: finished" over 5 of the 6 rollouts.
    run_dir = make_run_dir(tmp_path, SIX)
    results = run_dir / "results.jsonl"
    results.write_text(results.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    summary = regenerate(run_dir)
    assert summary["status"] == "incomplete"
    assert (summary["complete"], summary["expected_rollouts"], summary["recorded_rollouts"], summary["cut_line"]) == (
        False, 6, 5, 6)
    assert summary["status_detail"] == "1 cut line in results.jsonl (line 6); 5 of 6 rollouts recorded"
    assert summary["counts"]["rollouts"] == 5
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "(status: incomplete — 1 cut line in results.jsonl (line 6); 5 of 6 rollouts recorded)" in report


@pytest.mark.parametrize(("status", "records", "expected_status", "detail"), [
    # metadata says finished and every rollout is there: nothing to add
    ("finished", SIX, "finished", None),
    # metadata says finished but a rollout is missing (no cut line): incomplete all the same
    ("finished", SIX[:4], "incomplete", "4 of 6 rollouts recorded"),
    # a run stopped early or killed keeps its own word, with the count
    ("stopped", SIX[:2], "stopped", "2 of 6 rollouts recorded"),
    ("running", SIX[:3], "running", "3 of 6 rollouts recorded"),
])
def test_status_compares_the_results_with_the_metadata(status: str, records: list[RolloutRecord],
                                                       expected_status: str, detail: str | None) -> None:
    summary = build_summary(ENV, records, {**METADATA, "status": status})
    assert (summary["status"], summary["status_detail"]) == (expected_status, detail)
    assert summary["recorded_rollouts"] == len(records)
    assert summary["complete"] == (expected_status == "finished")


def test_expected_rollouts_count_samples() -> None:
    metadata = {**METADATA, "run": {"samples": 2}}
    summary = build_summary(ENV, SIX, metadata)
    assert summary["status"] == "incomplete" and summary["status_detail"] == "6 of 12 rollouts recorded"
