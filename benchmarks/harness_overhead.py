"""How close `sv eval` gets to what a model server allows: E1 rollouts/s against a fast fake endpoint.

With a server that answers every request after exactly ``L`` seconds and ``C`` requests in flight, ``N``
rollouts cannot take less than ``N·L/C`` seconds: the ideal is ``C/L`` rollouts/s. Whatever the harness
costs per rollout (HTTP client, scoring, results.jsonl, progress) shows up as the gap to that ideal, and at
``L = 0`` as the rollouts/s ceiling of the process.

1. Data: ``sv data build network-logs --split dev --n N`` (timed apart, not counted).
2. The server: a raw-asyncio HTTP/1.1 server in its own process (``serve`` mode of this script), so it does
   not share the client's event loop or core. It answers ``POST /v1/chat/completions`` with valid
   chat-completions JSON holding the correct answer for the item in the prompt (reward 1.0), after ``L`` s.
3. For each (L, C): ``sv eval network-logs --no-cache --concurrency C`` as a real subprocess of the CLI,
   through the real ``openai`` client. ``sv eval/s`` = N / seconds from process start to exit (imports,
   data load, report and plots included: about 3 s on 2 cores); ``runner/s`` = N / the runner's own
   ``seconds`` in metadata.json, and ``CPU ms`` its ``cpu_seconds`` per rollout. The progress bar is drawn
   to a pseudo-terminal, as a user sees it (``--quiet`` turns it off).
4. Beside it, the raw ``openai`` client alone, in this process: ``chat.completions.create`` on the same
   transport as the harness (``--raw-transport``), same C, same server, same messages.

On a shared machine the rates move with other load; ``CPU ms`` moves least, and ``1000 / CPU ms`` is
the rollouts/s one free core allows. Goal: runner >= 0.9 of ideal at (200 ms, 64) and (50 ms, 256), and
>= 1,000 rollouts/s at 0 ms, on 2 cores. (50 ms, 256) asks for 5,120 rollouts/s: under 0.2 ms of CPU per
rollout for the client on one core (and for the server on the other), out of reach of the ``openai``
client, whose own share is 0.7 ms or more per request.
Prints a table and writes the figures as JSON (``--json``).

    python benchmarks/harness_overhead.py                       # ~1 min on 2 cores
    python benchmarks/harness_overhead.py --configs 0:64 --quiet
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pty
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

MODEL = "bench-model"


def sv(*args: str) -> list[str]:
    return [sys.executable, "-m", "security_verifiers.cli", *args]


# -- the server ------------------------------------------------------------------------------------
def _answers(items_path: Path) -> dict[str, str]:
    """The user message of every item's prompt → the correct answer's JSON (reward 1.0 when scored)."""
    from security_verifiers.core.datasets import read_jsonl
    from security_verifiers.envs.network_logs import NetworkLogs

    env = NetworkLogs()
    answers = {}
    for item in read_jsonl(items_path, dataset_id="bench").items:
        malicious = item.target["label"] == "Malicious"
        answers[env.prompt(item)[-1].content] = json.dumps(
            {"label": item.target["label"], "p_malicious": 1.0 if malicious else 0.0})
    return answers


class _ChatCompletions(asyncio.Protocol):
    """HTTP/1.1 keep-alive, Content-Length bodies only (what the openai client sends); anything else is a 400."""

    def __init__(self, answers: dict[str, str], latency_s: float) -> None:
        self.answers = answers
        self.latency_s = latency_s
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.count = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = bytes(self.buffer[:end]).decode("latin-1").lower()
            length = next((int(line.split(":", 1)[1]) for line in head.split("\r\n")
                           if line.startswith("content-length:")), None)
            if length is None or not head.startswith("post /v1/chat/completions "):
                self._send(400, {"error": {"message": "expected POST /v1/chat/completions with Content-Length"}})
                self.buffer.clear()
                return
            if len(self.buffer) < end + 4 + length:
                return  # the rest of the body is still on its way
            body = json.loads(bytes(self.buffer[end + 4:end + 4 + length]))
            del self.buffer[:end + 4 + length]
            reply = self._completion(body)
            if self.latency_s:
                asyncio.get_running_loop().call_later(self.latency_s, self._send, 200, reply)
            else:
                self._send(200, reply)

    def _completion(self, request: dict[str, Any]) -> dict[str, Any]:
        self.count += 1
        content = self.answers.get(request["messages"][-1]["content"], "no such item")
        return {"id": f"chatcmpl-{self.count}", "object": "chat.completion", "created": int(time.time()),
                "model": request["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912}}

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        data = json.dumps(payload).encode()
        self.transport.write(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                             % (status, b"OK" if status == 200 else b"Bad Request", len(data), data))


def serve(items_path: Path, latency_s: float) -> None:
    """Serve on a free loopback port; print the port on stdout, then serve until killed."""
    answers = _answers(items_path)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _ChatCompletions(answers, latency_s), "127.0.0.1", 0, backlog=4096)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    asyncio.run(main())


class Server:
    """The server process for one latency; ``base_url`` once started."""

    def __init__(self, items_path: Path, latency_s: float) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "serve", "--items", str(items_path),
                                      "--latency-ms", str(latency_s * 1000)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        port = self.proc.stdout.readline().strip()
        if not port.isdigit():
            self.proc.kill()
            raise SystemExit("the benchmark server did not start")
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


# -- the two clients -----------------------------------------------------------------------------
def _drain(fd: int, sink: bytearray) -> None:
    """Read a pseudo-terminal until its other side is closed (the progress bar's output)."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        sink.extend(chunk)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_sv_eval(data: Path, base_url: str, concurrency: int, out: Path, label: str, quiet: bool) -> dict[str, Any]:
    argv = sv("eval", "network-logs", "--model", MODEL, "--base-url", base_url, "--data", str(data), "--out",
              str(out), "--run-id", label, "--no-cache", "--concurrency", str(concurrency))
    screen = bytearray()
    cpu0 = _children_cpu_s()
    if quiet:
        t0 = time.perf_counter()
        proc = subprocess.run([*argv, "--quiet"], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        stderr = proc.stderr
    else:
        master, slave = pty.openpty()  # rich draws its live progress bar only on a terminal
        reader = threading.Thread(target=_drain, args=(master, screen), daemon=True)
        reader.start()
        t0 = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=slave)
        wall = time.perf_counter() - t0
        os.close(slave)
        reader.join(timeout=5)
        os.close(master)
        stderr = screen.decode(errors="replace")
    cpu = _children_cpu_s() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"sv eval failed ({proc.returncode}): {stderr[-3000:]}")
    run_dir = next(out.glob(f"evals/*/{label}"))
    meta = json.loads((run_dir / "metadata.json").read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    n = meta["rollouts"]["total"]
    return {"n": n, "seconds": round(wall, 3), "rollouts_per_s": round(n / wall, 1),
            "runner_seconds": meta["seconds"], "runner_rollouts_per_s": round(n / meta["seconds"], 1),
            "cpu_seconds": round(cpu, 3), "cpu_ms_per_rollout": round(1000 * cpu / n, 3),
            "runner_cpu_ms_per_rollout": round(1000 * meta["cpu_seconds"] / n, 3) if "cpu_seconds" in meta else None,
            "errors": summary["counts"]["errors"], "reward_mean": summary["metrics"]["reward_mean"],
            "terminal_bytes": len(screen)}


async def _raw_client(base_url: str, bodies: list[list[dict[str, Any]]], concurrency: int,
                      transport: str) -> tuple[float, float]:
    import openai

    http_client = openai.DefaultAioHttpClient() if transport == "aiohttp" else openai.DefaultAsyncHttpxClient()
    client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", http_client=http_client, timeout=120.0,
                                max_retries=4)
    queue = iter(bodies)

    async def worker() -> None:
        for messages in queue:
            response = await client.chat.completions.create(model=MODEL, messages=messages,  # type: ignore[arg-type]
                                                            temperature=0.0, max_tokens=1024)
            assert response.choices[0].message.content
    try:
        t0, cpu0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - t0, time.process_time() - cpu0
    finally:
        await client.close()


def run_raw_client(data: Path, base_url: str, concurrency: int, transport: str) -> dict[str, Any]:
    from security_verifiers.core.datasets import read_jsonl
    from security_verifiers.envs.network_logs import NetworkLogs

    env = NetworkLogs()
    bodies = [[m.to_openai() for m in env.prompt(item)] for item in read_jsonl(data, dataset_id="bench").items]
    seconds, cpu = asyncio.run(_raw_client(base_url, bodies, concurrency, transport))
    return {"transport": transport, "seconds": round(seconds, 3), "rollouts_per_s": round(len(bodies) / seconds, 1),
            "cpu_ms_per_rollout": round(1000 * cpu / len(bodies), 3)}


# -- main ------------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode")
    srv = sub.add_parser("serve", help="(internal) run the fake endpoint")
    srv.add_argument("--items", type=Path, required=True)
    srv.add_argument("--latency-ms", type=float, required=True)
    parser.add_argument("--n", type=int, default=2000, help="Generated items (one rollout each).")
    parser.add_argument("--seed", type=int, default=7, help="Generator seed of the items.")
    parser.add_argument("--configs", default="200:64,50:256,0:64",
                        help="Comma-separated LATENCY_MS:CONCURRENCY pairs to measure.")
    parser.add_argument("--raw-transport", choices=("aiohttp", "httpx"), default="aiohttp",
                        help="Transport of the raw openai client (the one the harness uses).")
    parser.add_argument("--quiet", action="store_true", help="Run sv eval with --quiet (no progress bar).")
    parser.add_argument("--json", type=Path, default=Path("outputs/benchmarks/harness_overhead.json"),
                        help="Where to write the figures.")
    args = parser.parse_args()
    if args.mode == "serve":
        serve(args.items, args.latency_ms / 1000)
        return 0

    configs = [(float(lat), int(conc)) for lat, conc in (pair.split(":") for pair in args.configs.split(","))]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp, "items.jsonl")
        subprocess.run(sv("data", "build", "network-logs", "--split", "dev", "--n", str(args.n), "--seed",
                          str(args.seed), "--out", str(data)), check=True, capture_output=True)
        for latency_ms, concurrency in configs:
            server = Server(data, latency_ms / 1000)
            try:
                label = f"l{latency_ms:g}-c{concurrency}"
                harness = run_sv_eval(data, server.base_url, concurrency, Path(tmp, "runs"), label, args.quiet)
                raw = run_raw_client(data, server.base_url, concurrency, args.raw_transport)
            finally:
                server.close()
            ideal = concurrency / (latency_ms / 1000) if latency_ms else None
            rows.append({"latency_ms": latency_ms, "concurrency": concurrency,
                         "ideal_rollouts_per_s": ideal, "sv_eval": harness, "raw_openai_client": raw,
                         "achieved_over_ideal": round(harness["rollouts_per_s"] / ideal, 3) if ideal else None,
                         "runner_over_ideal": round(harness["runner_rollouts_per_s"] / ideal, 3) if ideal else None,
                         "raw_over_ideal": round(raw["rollouts_per_s"] / ideal, 3) if ideal else None})
            print(f"measured L={latency_ms:g} ms C={concurrency}", file=sys.stderr)
    result = {"n": args.n, "cpus": os.cpu_count(), "progress_bar": not args.quiet, "rows": rows}
    print(_table(rows))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


def _table(rows: list[dict[str, Any]]) -> str:
    def ratio(x: float | None) -> str:
        return "—" if x is None else f"{x:.2f}"

    def ms(x: float | None) -> str:
        return "—" if x is None else f"{x:.2f}"

    lines = [f"{'L ms':>5} {'C':>4} {'ideal/s':>8} | {'sv eval/s':>9} {'÷ideal':>6} | {'runner/s':>8} {'÷ideal':>6} "
             f"{'CPU ms':>6} | {'raw client/s':>12} {'÷ideal':>6} {'CPU ms':>6} | errors reward"]
    for r in rows:
        h, raw = r["sv_eval"], r["raw_openai_client"]
        ideal = "∞" if r["ideal_rollouts_per_s"] is None else f"{r['ideal_rollouts_per_s']:.0f}"
        lines.append(f"{r['latency_ms']:>5g} {r['concurrency']:>4} {ideal:>8} | {h['rollouts_per_s']:>9.1f} "
                     f"{ratio(r['achieved_over_ideal']):>6} | {h['runner_rollouts_per_s']:>8.1f} "
                     f"{ratio(r['runner_over_ideal']):>6} {ms(h['runner_cpu_ms_per_rollout']):>6} | "
                     f"{raw['rollouts_per_s']:>12.1f} {ratio(r['raw_over_ideal']):>6} "
                     f"{ms(raw['cpu_ms_per_rollout']):>6} | {h['errors']:>6} {h['reward_mean']:.3f}")
    lines.append("sv eval/s: the whole process, start to exit; runner/s: the runner's own seconds (metadata.json). "
                 "CPU ms: CPU time per rollout of\nthe runner (its process, during the run) and of the raw client, "
                 "the figure least moved by other load on the machine.")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
