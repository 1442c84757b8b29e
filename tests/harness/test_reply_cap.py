"""``--max-reply-bytes``: a reply is read, recorded and cached only up to a cap, and one past it is a parse failure.

An endpoint that answers a 1,024-token request with 20 MB used to have every byte read into memory, written to
``results.jsonl`` and stored in the response cache. The end-to-end cases run ``sv eval`` in a subprocess against
a fake server sending such replies, with and without a declared length, and measure what the run left behind and
how much the server managed to send.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.core.cache import ResponseCache
from security_verifiers.core.types import Completion, Item, Message, ParseStatus, Score, Transcript
from security_verifiers.envs.base import registry
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.harness.episode import run_episode
from security_verifiers.models.base import DEFAULT_MAX_REPLY_BYTES, Endpoint, reply_too_large
from security_verifiers.models.openai_compat import OpenAIChatPolicy
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import e1_item

SV = [sys.executable, "-m", "security_verifiers.cli"]
HUGE = 20 * 1024 * 1024  # the 20 MB replies of the report
ITEMS = 5
ITEM = Item(id="i1", split="dev", input={}, target={"label": "Benign"})
MESSAGES = [Message(role="user", content="is this bad")]


def huge(request: dict[str, Any]) -> str:
    return "x" * HUGE


def sv_eval(server: FakeOpenAIServer, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """Run ``sv eval network-logs`` on ``ITEMS`` items against ``server``, in a subprocess as a user would."""
    argv = ["eval", "network-logs", "--model", "m", "--base-url", server.base_url, "--n", str(ITEMS),
            "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "--run-id", "r", "--quiet",
            "--max-retries", "0", *flags]
    return subprocess.run([*SV, *argv], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(tmp_path)})


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@pytest.mark.parametrize("declare_length", [True, False], ids=["content-length", "until-close"])
def test_a_20mb_reply_is_capped_end_to_end(tmp_path: Path, declare_length: bool) -> None:
    with FakeOpenAIServer(reply=huge, declare_length=declare_length) as server:
        done = sv_eval(server, tmp_path)
        read = server.bytes_sent
    assert done.returncode == 0, done.stderr
    # What was read, not only what was kept: the client stops reading at the cap and closes the connection. The
    # server still gets out what the sockets' buffers hold (about 5 MB a request on loopback), so the bound is
    # half of the replies, not the cap: reading them whole sends all of them.
    assert read < ITEMS * HUGE // 2, f"{read} bytes sent to the client"
    run = tmp_path / "out" / "evals" / "network-logs--m" / "r"
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert len(records) == ITEMS
    for record in records:
        # a parse failure at the minimum reward, not an infrastructure error
        assert record["error"] is None and record["parse_status"] != ParseStatus.OK and record["reward"] == 0.0
        assert f"--max-reply-bytes ({DEFAULT_MAX_REPLY_BYTES})" in record["transcript"]["messages"][-1]["content"]
    assert size_of(run) < 5 * 1024 * 1024, "the run directory holds the replies"
    assert size_of(tmp_path / "cache") < 1024 * 1024, "the cache holds the replies"
    with ResponseCache(tmp_path / "cache" / "responses.sqlite") as cache:
        assert cache.info().entries == 0  # a capped reply is not an answer to replay
    metadata = json.loads((run / "metadata.json").read_text())
    assert metadata["policy"]["max_reply_bytes"] == DEFAULT_MAX_REPLY_BYTES


def test_the_cap_is_a_flag_recorded_with_the_run(tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=lambda request: '{"label": "Benign", "p_malicious": 0.1}' + " " * 3000) as server:
        done = sv_eval(server, tmp_path, "--max-reply-bytes", "2000")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "out" / "evals" / "network-logs--m" / "r"
    metadata = json.loads((run / "metadata.json").read_text())
    assert metadata["invocation"]["endpoint"]["max_reply_bytes"] == 2000
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert all(r["parse_status"] != ParseStatus.OK and "(2000)" in r["transcript"]["messages"][-1]["content"]
               for r in records)


def ask(policy: OpenAIChatPolicy) -> Completion:
    async def main() -> Completion:
        try:
            return await policy.respond(ITEM, MESSAGES, None, 0)
        finally:
            await policy.aclose()

    return asyncio.run(main())


@pytest.mark.parametrize(
    ("text", "capped"),
    [
        ("x" * 500, False),  # a body of about 700 bytes: under the cap, answered and cached
        ("x" * 5000, True),  # past the cap: the marker, and nothing cached
    ],
)
def test_policy_reads_at_most_the_cap_and_caches_only_answers(tmp_path: Path, text: str, capped: bool) -> None:
    with FakeOpenAIServer(reply=lambda request: text) as server, ResponseCache(tmp_path / "c.sqlite") as cache:
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.base_url, max_reply_bytes=1000), cache=cache)
        completion = ask(policy)
        assert (completion == reply_too_large(1000)) is capped
        assert cache.info().entries == (0 if capped else 1)
        assert policy.describe()["max_reply_bytes"] == 1000


class _Talker:
    """A policy (a local model, a baseline) whose reply is ``size`` characters, with an optional cap of its own."""

    name = "talker"

    def __init__(self, size: int, max_reply_bytes: int | None = None) -> None:
        self.size = size
        if max_reply_bytes is not None:
            self.max_reply_bytes = max_reply_bytes

    def describe(self) -> dict[str, Any]:
        return {"kind": "test"}

    async def respond(self, item: Item, messages: list[Message], tools: Any, sample: int) -> Completion:
        return Completion(text='{"label": "Malicious", "p_malicious": 0.9}' + " " * self.size)


@pytest.mark.parametrize(
    ("policy", "limit"),
    [
        (_Talker(2 * DEFAULT_MAX_REPLY_BYTES), DEFAULT_MAX_REPLY_BYTES),  # no cap of its own: the default one
        (_Talker(200, max_reply_bytes=100), 100),  # its own cap (a model at an endpoint: --max-reply-bytes)
    ],
)
def test_episode_caps_every_policy_as_a_parse_failure(policy: _Talker, limit: int) -> None:
    record = asyncio.run(run_episode(NetworkLogs(), policy, e1_item(1), 0, 5.0))
    assert record.error is None and record.parse_status != ParseStatus.OK and record.reward == 0.0
    assert record.transcript is not None
    assert record.transcript.messages[-1].content == reply_too_large(limit).text
    assert len(record.model_dump_json()) < 100_000


def test_episode_keeps_a_reply_under_the_cap() -> None:
    record = asyncio.run(run_episode(NetworkLogs(), _Talker(50, max_reply_bytes=1000), e1_item(1), 0, 5.0))
    assert record.parse_status == ParseStatus.OK


@pytest.mark.parametrize("name", sorted(registry()))
def test_the_capped_reply_is_a_parse_failure_at_the_floor_everywhere(name: str) -> None:
    env = registry()[name]()
    item = env.dataset(env.public_splits[0], n=1).items[0]

    def score(text: str) -> Score:
        return env.score(item, Transcript(messages=[*env.prompt(item), Message(role="assistant", content=text)]))

    capped = score(reply_too_large(DEFAULT_MAX_REPLY_BYTES).text)
    assert capped.parse_status != ParseStatus.OK
    assert capped.reward == score("I cannot help with that.").reward  # the reward of any unparseable reply


#: A fake server in its own process, so that the memory this one allocates is the client's alone.
_SERVER = ("import sys, time\nfrom tests.fakeserver import FakeOpenAIServer\nbody = 'x' * int(sys.argv[1])\n"
           "server = FakeOpenAIServer(reply=lambda request: body).start()\nprint(server.base_url, flush=True)\n"
           "time.sleep(300)\n")


def test_five_20mb_replies_at_once_take_a_few_mib_of_memory() -> None:
    server = subprocess.Popen([sys.executable, "-c", _SERVER, str(HUGE)], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).parents[2])
    try:
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.stdout.readline().strip()))  # type: ignore[union-attr]

        async def main() -> list[Completion]:
            try:
                return await asyncio.gather(*(policy.respond(ITEM, MESSAGES, None, k) for k in range(ITEMS)))
            finally:
                await policy.aclose()

        tracemalloc.start()
        try:
            replies = asyncio.run(main())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        server.kill()
        server.wait()
    assert all(r == reply_too_large(DEFAULT_MAX_REPLY_BYTES) for r in replies)
    # Read whole, the five replies took 140 MiB; capped, each holds at most 1 MiB while it is read.
    assert peak < 20 * 1024 * 1024, f"{peak} bytes allocated at the peak"
