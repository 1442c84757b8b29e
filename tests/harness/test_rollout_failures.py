"""One rollout's failure is that rollout's: a record that cannot be written is its rollout's error and the run goes
on; a run that does end early says so in its metadata (``failed`` or ``stopped``, and why), and a resume continues
it. Every environment takes hostile reply text (surrogates, NULs, 8-bit, huge lines) without raising."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.rundir import RunDir, read_records
from security_verifiers.core.types import Message, RolloutRecord, Score, Transcript
from security_verifiers.envs.base import registry
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.harness.episode import apply_score, run_episode
from security_verifiers.harness.runner import RunConfig, run_eval, write_record
from tests.helpers import ScriptedPolicy, e1_item

DATA = Dataset(id="toy", items=[e1_item(i, "Malicious" if i % 2 else "Benign") for i in range(30)], splits=("test",))
HOSTILE_ID = DATA.items[7].id


def truthful(item):
    return {"label": item.target["label"], "p_malicious": item.target["p_malicious"]}


class LoneSurrogateOutcome(NetworkLogs):
    """E1 whose scorer puts a lone surrogate (a header's 8-bit byte kept by ``surrogateescape``) in one outcome."""

    def score(self, item, transcript):  # noqa: ANN001
        score = super().score(item, transcript)
        if item.id == HOSTILE_ID:
            score = score.model_copy(update={"outcome": {**score.outcome, "received": "from mail.ex\udce2mple.de"}})
        return score


def run(env, policy, run_dir, resume=False, **config):
    config = RunConfig(**{"concurrency": 2, "score_workers": 0, **config})
    return asyncio.run(run_eval(env, policy, DATA, run_dir, config, resume=resume, progress=False))


def test_an_unwritable_outcome_is_its_rollouts_error_and_the_run_finishes(tmp_path) -> None:
    run_dir = RunDir(tmp_path / "run")
    outcome = run(LoneSurrogateOutcome(), ScriptedPolicy(truthful), run_dir)
    records = {r.item_id: r for r in read_records(run_dir.results_path)}
    assert len(records) == len(DATA) and outcome.errors == 1 and outcome.errors_by_kind == {"scorer": 1}
    bad = records[HOSTILE_ID]
    assert bad.reward is None and bad.outcome == {} and "cannot be written as JSON" in bad.error.message
    assert bad.transcript is not None  # kept, made writable, to read the failure by
    assert all(r.reward == 1.0 for k, r in records.items() if k != HOSTILE_ID)
    meta = json.loads(run_dir.metadata_path.read_text())
    assert (meta["status"], meta["status_reason"], meta["errors"]["count"]) == ("finished", None, 1)


def test_a_reply_with_lone_surrogates_is_scored_and_written_as_valid_text(tmp_path) -> None:
    # An endpoint's JSON may decode to lone surrogates ("\udce2"): they become U+FFFD before the scorer reads them.
    reply = json.dumps({"label": "Malicious", "p_malicious": 0.9, "note": "\udce2\ud800"}, ensure_ascii=False)
    item = DATA.items[1]
    record = asyncio.run(run_episode(NetworkLogs(), ScriptedPolicy(lambda _: reply), item))
    assert record.error is None and record.reward is not None
    assert "\ufffd\ufffd" in record.transcript.final_text
    record.model_dump_json()  # writable as it is


def test_a_run_that_aborts_says_failed_and_a_resume_finishes_it(tmp_path, monkeypatch) -> None:
    run_dir = RunDir(tmp_path / "run")
    real_append, written = RunDir.append, []

    def disk_fills_up(self, record):  # noqa: ANN001
        if len(written) == 10:
            raise OSError(28, "No space left on device")
        written.append(record)
        real_append(self, record)

    monkeypatch.setattr(RunDir, "append", disk_fills_up)
    with pytest.raises(OSError, match="No space left"):
        run(NetworkLogs(), ScriptedPolicy(truthful), run_dir)
    meta = json.loads(run_dir.metadata_path.read_text())
    assert meta["status"] == "failed" and meta["status_reason"] == "OSError: [Errno 28] No space left on device"
    assert meta["rollouts"]["finished_this_session"] == 10 and len(read_records(run_dir.results_path)) == 10

    monkeypatch.setattr(RunDir, "append", real_append)
    policy = ScriptedPolicy(truthful)
    outcome = run(NetworkLogs(), policy, run_dir, resume=True)
    assert outcome.resumed == 10 and policy.calls == len(DATA) - 10 and outcome.errors == 0
    meta = json.loads(run_dir.metadata_path.read_text())
    assert (meta["status"], meta["status_reason"]) == ("finished", None)
    assert len({r.item_id for r in read_records(run_dir.results_path)}) == len(DATA)


def test_an_interrupted_run_says_stopped(tmp_path) -> None:
    run_dir = RunDir(tmp_path / "run")

    def interrupt(item):
        if item.id == DATA.items[5].id:
            raise KeyboardInterrupt
        return truthful(item)

    with pytest.raises(KeyboardInterrupt):
        run(NetworkLogs(), ScriptedPolicy(interrupt), run_dir, concurrency=1)
    meta = json.loads(run_dir.metadata_path.read_text())
    assert meta["status"] == "stopped" and meta["status_reason"].startswith("interrupted")


def test_a_prompt_that_raises_is_that_rollouts_error(tmp_path) -> None:
    class BrokenPrompt(NetworkLogs):
        def prompt(self, item):  # noqa: ANN001
            if item.id == HOSTILE_ID:
                raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
            return super().prompt(item)

    run_dir = RunDir(tmp_path / "run")
    outcome = run(BrokenPrompt(), ScriptedPolicy(truthful), run_dir)
    assert outcome.errors_by_kind == {"scorer": 1} and outcome.done == len(DATA)
    assert json.loads(run_dir.metadata_path.read_text())["status"] == "finished"


# -- every environment: hostile reply text through score() and the write of its record ---------------------------
#: Real-world byte quirks, each a fragment a reply may carry: lone surrogates (JSON "\udce2" escapes, bytes kept by
#: surrogateescape), NULs and control characters, UTF-8 read as Latin-1, cp1252 punctuation, BOMs and
#: direction marks, a broken RFC 2047 word, CRLF/CR line ends.
QUIRKS = ("\udce2\udc80", "\ud800", "\udfff", "\x00", "\x00\x00\x1b[31m", "Ã©Ã¨", "\x93quoted\x94", "\ufeff",
          "\u202e", "=?x-unknown?B?w6Q=?=", "=?utf-8?Q?unterminated", "\r\n", "\r", "\xff\xfe", "\U0001f600")


def _in_strings(rng: random.Random, value: Any) -> Any:
    """``value`` (parsed JSON) with quirks added to its strings: an answer that still parses, so the scorer reads
    the quirks past its parser (evidence quotes, labels, explanations)."""
    if isinstance(value, str):
        return value + rng.choice(QUIRKS) if rng.random() < 0.7 else value
    if isinstance(value, list):
        return [_in_strings(rng, v) for v in value]
    if isinstance(value, dict):
        return {k: _in_strings(rng, v) for k, v in value.items()}
    return value


def _hostile(rng: random.Random, base: str) -> str:
    """``base`` with quirks in its JSON strings (when it is JSON) or spliced in at random places, sometimes with a
    huge line too."""
    try:
        text = json.dumps(_in_strings(rng, json.loads(base)), ensure_ascii=False)
    except ValueError:
        text = base
        for _ in range(rng.randint(1, 6)):
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(QUIRKS) + text[at:]
    if rng.random() < 0.2:
        text += "\n" + "A" * 200_000
    return text


def _reference_reply(env: Any, item: Any) -> str:
    policy = env.baselines()["reference"]()
    messages = env.prompt(item)
    return asyncio.run(policy.respond(item, messages, None, 0)).text


@pytest.mark.parametrize("env_name", sorted(registry()))
def test_hostile_reply_text_never_raises_through_score_and_write(env_name: str, tmp_path) -> None:
    env = registry()[env_name]()
    item = env.dataset(env.public_splits[0]).items[0]
    rng = random.Random(27)
    reference = _reference_reply(env, item)
    bases = [reference, reference, "", '{"label": ', "I cannot help with that request."]
    run_dir = RunDir(tmp_path / "run")
    run_dir.open_results()
    try:
        for k in range(15):
            text = _hostile(rng, bases[k % len(bases)])
            transcript = Transcript(messages=[*env.prompt(item), Message(role="assistant", content=text)])
            score = env.score(item, transcript)  # raw, surrogates included: never an exception
            assert isinstance(score, Score) and 0.0 <= score.reward <= 1.0
            record = RolloutRecord(env=env.name, env_version=env.version, item_id=item.id, split=item.split,
                                   sample=k, transcript=transcript)
            written = write_record(run_dir, apply_score(record, score))
            assert written.error is None or "cannot be written" in written.error.message
    finally:
        run_dir.close()
    assert len(read_records(run_dir.results_path)) == 15
