"""A fake OpenAI chat-completions server on loopback, so the real ``openai`` client is tested end to end.

It speaks the real wire format over real HTTP, so retries, timeouts, headers and response parsing
are those of the client the policy ships with, not a mock of it. Use it as a context manager::

    with FakeOpenAIServer(reply=lambda request: "hello") as server:
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.base_url))
        server.fail_next(429, 500)  # served before the next success
        server.api_key = "sk-local"  # then requests without that key get 401, as from `vllm serve --api-key`
        ...
        assert server.request_count == 3
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

#: What ``reply`` returns: the assistant's text, or a dict of message fields (``content``,
#: ``tool_calls`` in wire form) with optional ``finish_reason`` and ``usage``, or ``{"raw": body}``
#: to send ``body`` verbatim as the whole response (to test malformed responses).
Reply = Callable[[dict[str, Any]], str | dict[str, Any]]
#: Bytes written to the socket at a time, so :attr:`FakeOpenAIServer.bytes_sent` sees a client that stops reading.
CHUNK = 64 * 1024


def echo(request: dict[str, Any]) -> str:
    """The default reply: the last message's content, prefixed so a test can tell it was answered."""
    return "echo: " + str(request["messages"][-1].get("content", ""))


def _words(text: Any) -> int:
    return len(str(text or "").split())


class FakeOpenAIServer:
    """``POST /v1/chat/completions`` on 127.0.0.1 (a free port), served from a daemon thread."""

    def __init__(self, reply: Reply = echo, *, delay_s: float = 0.0, api_key: str | None = None,
                 declare_length: bool = True) -> None:
        self.reply = reply
        #: False: answer without ``Content-Length``, the body ending when the connection closes (a streamed body
        #: whose size the client learns only by reading it).
        self.declare_length = declare_length
        #: Seconds to wait before answering (for timeout tests); cut short when the server closes.
        self.delay_s = delay_s
        #: The key a request must carry as ``Authorization: Bearer KEY``; others get vLLM's 401 (``--api-key``).
        self.api_key = api_key
        self._lock = threading.Lock()
        self._failures: deque[int] = deque()
        self._requests: list[dict[str, Any]] = []
        self._bytes_sent = 0
        self._headers: list[dict[str, str]] = []
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        # A short poll interval: shutdown() waits up to one interval, and every test closes a server.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="fake-openai", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, failed ones included, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def headers(self) -> list[dict[str, str]]:
        """The (lower-cased) headers of every request received, oldest first."""
        with self._lock:
            return list(self._headers)

    @property
    def bytes_sent(self) -> int:
        """Bytes of response bodies written to clients, in chunks of :data:`CHUNK`: a client that stops reading
        and closes its connection stops the count (within what the sockets' buffers hold)."""
        with self._lock:
            return self._bytes_sent

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    def fail_next(self, *statuses: int) -> None:
        """Answer the next requests with these HTTP error statuses, in order, before answering normally."""
        with self._lock:
            self._failures.extend(statuses)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and free the port; closing again, or a server never started, is harmless."""
        self._closing.set()  # wakes delayed handlers so closing does not wait out their delay
        if self._thread.is_alive():
            self._httpd.shutdown()  # would block forever on a server that never served
            self._thread.join()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> int | None:
        """Record a request; the forced failure status to serve for it, if one is queued."""
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)
            return self._failures.popleft() if self._failures else None

    def _completion(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = self.reply(request)
        if isinstance(reply, str):
            reply = {"content": reply}
        if "raw" in reply:
            return dict(reply["raw"])
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = reply["tool_calls"]
        prompt_tokens = sum(_words(m.get("content")) for m in request.get("messages", []))
        completion_tokens = _words(message["content"])
        usage = reply.get(
            "usage",
            {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        )
        default_finish = "tool_calls" if message.get("tool_calls") else "stop"
        return {
            "id": f"chatcmpl-fake-{self.request_count}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", ""),
            "choices": [
                {"index": 0, "message": message, "finish_reason": reply.get("finish_reason", default_finish)}
            ],
            "usage": usage,
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Silent: pytest output stays readable."""

            def do_POST(self) -> None:
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                failure = server._record(body, headers)
                if server.api_key is not None and headers.get("authorization") != f"Bearer {server.api_key}":
                    self._send(401, {"error": "Unauthorized"})  # what `vllm serve --api-key` answers
                    return
                if server.delay_s and server._closing.wait(server.delay_s):
                    return
                if failure is not None:
                    error = {"message": f"forced failure {failure}", "type": "fake_error", "code": failure}
                    self._send(failure, {"error": error}, {"retry-after": "0", "retry-after-ms": "1"})
                    return
                self._send(200, server._completion(body))

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    if server.declare_length:
                        self.send_header("Content-Length", str(len(data)))
                    else:
                        self.close_connection = True  # the end of the body is the end of the connection
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    for start in range(0, len(data), CHUNK):
                        self.wfile.write(data[start:start + CHUNK])
                        with server._lock:
                            server._bytes_sent += len(data[start:start + CHUNK])
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

        return Handler
