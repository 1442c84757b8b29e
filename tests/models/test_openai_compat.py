"""OpenAIChatPolicy through the real ``openai`` client against a fake server on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import openai
import pytest

from security_verifiers.core.cache import ResponseCache
from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError
from security_verifiers.core.rundir import RunDir, read_records
from security_verifiers.core.types import Completion, Item, Message, RolloutRecord, ToolCall
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.harness.runner import RunConfig, run_eval
from security_verifiers.models.base import Endpoint, Policy, Sampling
from security_verifiers.models.openai_compat import OpenAIChatPolicy
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import e1_item

T = TypeVar("T")
ITEM = Item(id="i1", split="dev", input={}, target={"label": "Benign"})
MESSAGES = [Message(role="system", content="Be terse."), Message(role="user", content="is this bad")]
SCAN_TOOL = {
    "name": "scan",
    "description": "Scan a host.",
    "parameters": {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]},
}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def run_with(policy: OpenAIChatPolicy, use: Callable[[OpenAIChatPolicy], Awaitable[T]]) -> T:
    """Run ``use(policy)`` in a fresh event loop and close the client in that same loop."""

    async def main() -> T:
        try:
            return await use(policy)
        finally:
            await policy.aclose()

    return asyncio.run(main())


def ask(policy: OpenAIChatPolicy, sample: int = 0, tools: list[dict[str, Any]] | None = None) -> Completion:
    return run_with(policy, lambda p: p.respond(ITEM, MESSAGES, tools, sample))


def test_reply_is_mapped_with_text_unstripped(server: FakeOpenAIServer) -> None:
    server.reply = lambda request: '  {"label": "Benign"}\n'
    completion = ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url)))
    assert completion.text == '  {"label": "Benign"}\n'
    assert completion.finish_reason == "stop"
    assert completion.usage.prompt_tokens == 5  # words of the two messages, as the fake counts them
    assert completion.usage.completion_tokens == 2
    assert completion.tool_calls == [] and not completion.cached


def test_request_carries_messages_and_sampling(server: FakeOpenAIServer) -> None:
    sampling = Sampling(temperature=0.7, max_tokens=77, top_p=0.9, seed=5)
    ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), sampling=sampling))
    (body,) = server.requests
    assert body["model"] == "fake-model"
    assert body["messages"] == [m.to_openai() for m in MESSAGES]
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["seed"]) == (0.7, 77, 0.9, 5)
    assert "tools" not in body
    assert server.headers[0]["authorization"] == "Bearer EMPTY"  # loopback: no key needed


def test_unset_sampling_fields_are_omitted(server: FakeOpenAIServer) -> None:
    ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url)))
    (body,) = server.requests
    assert body["temperature"] == 0.0 and body["max_tokens"] == 1024
    assert "top_p" not in body and "seed" not in body


def test_tools_are_sent_and_tool_calls_mapped(server: FakeOpenAIServer) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "scan", "arguments": '{"host": "10.0.0.1"}'},
    }
    server.reply = lambda request: {"content": None, "tool_calls": [call]}
    completion = ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url)), tools=[SCAN_TOOL])
    assert server.requests[0]["tools"] == [{"type": "function", "function": SCAN_TOOL}]
    assert completion.tool_calls == [ToolCall(id="call_1", name="scan", arguments='{"host": "10.0.0.1"}')]
    assert completion.text == "" and completion.finish_reason == "tool_calls"


def test_wrapped_tool_schemas_are_sent_as_given(server: FakeOpenAIServer) -> None:
    wrapped = {"type": "function", "function": SCAN_TOOL}
    ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url)), tools=[wrapped])
    assert server.requests[0]["tools"] == [wrapped]


def test_transient_errors_are_retried(server: FakeOpenAIServer) -> None:
    server.fail_next(429, 500)
    completion = ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, max_retries=4)))
    assert completion.text == "echo: is this bad"
    assert server.request_count == 3


def test_persistent_errors_become_provider_errors(server: FakeOpenAIServer) -> None:
    server.fail_next(500, 500, 500, 500)
    with pytest.raises(InfraError) as err:
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, max_retries=2)))
    assert err.value.kind is ErrorKind.PROVIDER
    assert server.request_count == 3


def test_client_errors_are_not_retried(server: FakeOpenAIServer) -> None:
    server.fail_next(400)
    with pytest.raises(InfraError) as err:
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, max_retries=4)))
    assert err.value.kind is ErrorKind.PROVIDER
    assert server.request_count == 1


def test_slow_server_is_a_timeout(server: FakeOpenAIServer) -> None:
    server.delay_s = 10.0
    started = time.monotonic()
    with pytest.raises(InfraError) as err:
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, max_retries=0), timeout_s=0.3))
    assert err.value.kind is ErrorKind.TIMEOUT
    assert time.monotonic() - started < 5


def test_unreachable_endpoint_is_a_provider_error(server: FakeOpenAIServer) -> None:
    url = server.base_url
    server.close()  # nothing listens on the port any more (closing twice in the fixture is harmless)
    with pytest.raises(InfraError) as err:
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=url, max_retries=0)))
    assert err.value.kind is ErrorKind.PROVIDER


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []},
        {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0}]},
    ],
    ids=["no-choices", "no-message"],
)
def test_response_without_message_is_a_provider_error(server: FakeOpenAIServer, body: dict[str, Any]) -> None:
    server.reply = lambda request: {"raw": body}
    with pytest.raises(InfraError) as err:
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, max_retries=0)))
    assert err.value.kind is ErrorKind.PROVIDER


def test_cache_hit_skips_the_server(server: FakeOpenAIServer, tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        first = ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), cache=cache))
        second = ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url + "/"), cache=cache))
    assert server.request_count == 1
    assert not first.cached and second.cached
    assert second.model_copy(update={"cached": False}) == first


def test_cache_misses_on_other_sampling_sample_or_endpoint(server: FakeOpenAIServer, tmp_path: Path) -> None:
    with FakeOpenAIServer() as other_server, ResponseCache(tmp_path / "cache.sqlite") as cache:
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), cache=cache))
        hot = Sampling(temperature=0.8)
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), cache=cache, sampling=hot))
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), cache=cache, sampling=hot),
            sample=1)
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=other_server.base_url), cache=cache))
        assert other_server.request_count == 1
    assert server.request_count == 3


def test_cache_survives_reopening(server: FakeOpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with ResponseCache(path) as cache:
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), cache=cache))
    with ResponseCache(path) as cache:
        assert ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), cache=cache)).cached
    assert server.request_count == 1


def test_missing_key_for_remote_endpoint_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SV_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="SV_TEST_KEY"):
        OpenAIChatPolicy("gpt-x", endpoint=Endpoint(base_url="https://api.example.com/v1", api_key_env="SV_TEST_KEY"))


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 0.0])
def test_timeouts_the_client_cannot_use_are_refused(server: FakeOpenAIServer, value: float) -> None:
    # Used to be accepted and to fail every request inside the client, not at configuration time. (A negative
    # retry count is refused by Endpoint itself: tests/harness/test_policies.py.)
    with pytest.raises(ConfigError, match="timeout_s must be a finite number"):
        OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), timeout_s=value)
    assert server.request_count == 0


def test_key_is_read_from_the_named_variable(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SV_TEST_KEY", "sk-test-secret")
    policy = OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, api_key_env="SV_TEST_KEY"))
    assert "sk-test-secret" not in repr(policy.describe())
    ask(policy)
    assert server.headers[0]["authorization"] == "Bearer sk-test-secret"


# -- the key sent to a loopback server ------------------------------------------------------------------------------
def test_loopback_without_a_key_says_what_it_sends(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SV_TEST_KEY", raising=False)
    policy = OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, api_key_env="SV_TEST_KEY"))
    assert policy.key_note == (f"SV_TEST_KEY is not set: the requests to {server.base_url} carry the placeholder "
                               "key 'EMPTY' (enough for a local server started without a key)")
    monkeypatch.setenv("SV_TEST_KEY", "sk-x")
    keyed = Endpoint(base_url=server.base_url, api_key_env="SV_TEST_KEY")
    assert OpenAIChatPolicy("fake-model", endpoint=keyed).key_note is None


@pytest.mark.parametrize(("key", "words"), [
    # the variable is unset: the 401 used to read as a bare provider error, with no word of the placeholder key
    (None, "SV_TEST_KEY is not set, so the placeholder key 'EMPTY' was sent; set SV_TEST_KEY to the server's key "
           "(or name the variable that holds it with --api-key-env)"),
    # the variable holds another key
    ("sk-wrong", "the key in SV_TEST_KEY was rejected"),
])
def test_a_401_from_a_server_that_wants_a_key_names_the_variable(key: str | None, words: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if key is None:
        monkeypatch.delenv("SV_TEST_KEY", raising=False)
    else:
        monkeypatch.setenv("SV_TEST_KEY", key)
    with FakeOpenAIServer(api_key="sk-local") as server:
        with pytest.raises(InfraError) as err:
            ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, api_key_env="SV_TEST_KEY",
                                                                 max_retries=3)))
        assert server.request_count == 1  # a 401 is not retried
    assert err.value.kind is ErrorKind.PROVIDER
    assert err.value.message.startswith(f"fake-model at {server.base_url}: HTTP 401 (Unauthorized): ")
    assert err.value.message.endswith(words)


def test_a_403_says_the_key_was_refused(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SV_TEST_KEY", "sk-x")
    server.fail_next(403)
    with pytest.raises(InfraError, match=r"HTTP 403 \(forced failure 403\): the key in SV_TEST_KEY was rejected"):
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, api_key_env="SV_TEST_KEY")))


def test_the_right_key_gets_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SV_TEST_KEY", "sk-local")
    with FakeOpenAIServer(api_key="sk-local") as server:
        keyed = Endpoint(base_url=server.base_url, api_key_env="SV_TEST_KEY")
        assert ask(OpenAIChatPolicy("fake-model", endpoint=keyed)).text


def test_base_url_defaults_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1/")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    policy = OpenAIChatPolicy("local-model")
    assert policy.base_url == "http://localhost:8000/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert OpenAIChatPolicy("gpt-x").base_url == "https://api.openai.com/v1"


def test_describe_and_protocol() -> None:
    policy = OpenAIChatPolicy("org/model:7b", endpoint=Endpoint(base_url="http://[::1]:8000/v1", max_retries=1),
                              timeout_s=9.0)
    assert isinstance(policy, Policy)
    assert policy.name == "org/model:7b"
    assert policy.describe() == {
        "kind": "openai-compatible",
        "model": "org/model:7b",
        "base_url": "http://[::1]:8000/v1",
        "api_key_env": "OPENAI_API_KEY",
        "sampling": {"temperature": 0.0, "max_tokens": 1024, "top_p": None, "seed": None,
                     "max_tokens_field": "max_tokens"},
        "timeout_s": 9.0,
        "max_retries": 1,
        "max_reply_bytes": 1048576,
        "rpm": None,
        "tpm": None,
    }


def test_max_tokens_can_travel_as_max_completion_tokens(server: FakeOpenAIServer) -> None:
    # OpenAI's reasoning models reject max_tokens; the same limit goes under the newer field name.
    sampling = Sampling(max_tokens=77, max_tokens_field="max_completion_tokens")
    ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url), sampling=sampling))
    (body,) = server.requests
    assert body["max_completion_tokens"] == 77 and "max_tokens" not in body and "max_tokens_field" not in body


def test_post_sends_what_chat_completions_create_sends(server: FakeOpenAIServer) -> None:
    # The policy calls ``post`` to skip create's re-typing of the request: the wire must not change.
    policy = OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url),
                              sampling=Sampling(top_p=0.5, seed=1))
    wrapped_tools = [{"type": "function", "function": SCAN_TOOL}]

    async def both(p: OpenAIChatPolicy) -> None:
        await p.respond(ITEM, MESSAGES, [SCAN_TOOL], 0)
        request = {"model": "fake-model", "messages": [m.to_openai() for m in MESSAGES], **p._sampling_params()}
        await p._http().chat.completions.create(**request, tools=wrapped_tools)

    run_with(policy, both)
    ours, sdk = server.requests
    assert ours == sdk
    assert [h["authorization"] for h in server.headers] == ["Bearer EMPTY"] * 2
    assert [h["content-type"] for h in server.headers] == ["application/json"] * 2


@pytest.mark.parametrize(
    ("body", "text", "finish_reason"),
    [
        # Fields a compatible server may leave out (id, created, object, usage) or fill its own way.
        ({"choices": [{"message": {"content": "hi"}, "finish_reason": "eos"}], "usage": None}, "hi", "eos"),
        ({"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": None}]}, "", None),
    ],
    ids=["sparse", "null-content"],
)
def test_lenient_responses_are_read(
    server: FakeOpenAIServer, body: dict[str, Any], text: str, finish_reason: str | None
) -> None:
    server.reply = lambda request: {"raw": body}
    completion = ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, max_retries=0)))
    assert (completion.text, completion.finish_reason) == (text, finish_reason)
    assert completion.usage.prompt_tokens == completion.usage.completion_tokens == 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"choices": [{"message": {"content": 7}}]}, "ValidationError"),  # a field that is there has its type
        ({"choices": [{"message": {"tool_calls": [{"id": "c", "type": "custom", "custom": {"input": "x"}}]}}]},
         "unsupported tool call type 'custom'"),
    ],
    ids=["content-not-text", "non-function-tool-call"],
)
def test_malformed_responses_are_provider_errors(server: FakeOpenAIServer, body: dict[str, Any], message: str) -> None:
    server.reply = lambda request: {"raw": body}
    with pytest.raises(InfraError) as err:
        ask(OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, max_retries=0)))
    assert err.value.kind is ErrorKind.PROVIDER and message in err.value.message


# -- the aiohttp transport, through the runner ----------------------------------------------------------
E1_ANSWER = json.dumps({"label": "Malicious", "p_malicious": 0.9})


@pytest.fixture
def aiohttp_clients(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every aiohttp-backed HTTP client the policy makes, each with ``closed`` set once it is closed."""
    made: list[Any] = []

    class RecordingAioHttpClient(openai.DefaultAioHttpClient):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.closed = False
            made.append(self)

        async def aclose(self) -> None:
            self.closed = True
            await super().aclose()

    monkeypatch.setattr(openai, "DefaultAioHttpClient", RecordingAioHttpClient)
    return made


def evaluate(policy: OpenAIChatPolicy, tmp_path: Path, n: int = 1) -> list[RolloutRecord]:
    data = Dataset(id="toy", items=[e1_item(i) for i in range(n)], splits=("test",))
    run_dir = RunDir(tmp_path / "run")
    config = RunConfig(concurrency=2, max_error_rate=1.0, timeout_s=30.0)
    asyncio.run(run_eval(NetworkLogs(), policy, data, run_dir, config, progress=False))
    return read_records(run_dir.results_path)


@pytest.mark.parametrize(
    ("case", "failures", "delay_s", "requests", "error"),
    [
        ("reply", [], 0.0, 1, None),  # a normal answer is scored
        ("500 then success", [500], 0.0, 2, None),  # retried by the client, then scored
        ("timeout", [], 10.0, 2, "timeout"),  # the client's read timeout (0.3 s, retried once), not the runner's
        ("connection refused", [], 0.0, 0, "provider"),  # nothing listens: an endpoint failure, not a timeout
    ],
)
def test_runner_through_the_aiohttp_transport(
    case: str, failures: list[int], delay_s: float, requests: int, error: str | None, tmp_path: Path,
    aiohttp_clients: list[Any],
) -> None:
    with FakeOpenAIServer(reply=lambda request: E1_ANSWER, delay_s=delay_s) as server:
        server.fail_next(*failures)
        if case == "connection refused":
            server.close()
        policy = OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url, max_retries=1),
                                  timeout_s=0.3)
        (record,) = evaluate(policy, tmp_path)
        assert server.request_count == requests
    if error is None:
        assert record.error is None and record.reward is not None and record.usage.completion_tokens > 0
    else:
        assert record.error is not None and record.error.kind == error
        assert record.reward is None  # an infrastructure failure is never a score of 0
    assert len(aiohttp_clients) == 1 and aiohttp_clients[0].closed  # one client per run, closed at its end


def test_one_client_serves_every_rollout_and_a_later_run_opens_a_new_one(
    tmp_path: Path, aiohttp_clients: list[Any]
) -> None:
    with FakeOpenAIServer(reply=lambda request: E1_ANSWER) as server:
        policy = OpenAIChatPolicy("fake-model", endpoint=Endpoint(base_url=server.base_url))
        first = evaluate(policy, tmp_path / "a", n=6)
        second = evaluate(policy, tmp_path / "b", n=6)  # another event loop: the closed client is not reused
        assert server.request_count == 12
    assert all(r.error is None for r in first + second)
    assert len(aiohttp_clients) == 2 and all(c.closed for c in aiohttp_clients)
