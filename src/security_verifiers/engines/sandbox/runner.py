"""Run a command in the sandbox: :func:`run_async` for the asyncio harness, :func:`run` for everything else.

The parent enforces what the kernel cannot: the wall-clock timeout and the output cap. On timeout it sends
SIGKILL to the sandbox's init (bubblewrap's PID 1, whose host pid ``--json-status-fd`` reports, held as a
pidfd); the kernel then kills every process of the PID namespace. Whether the command exited or was killed,
the parent waits for that init to exit, which happens only once its namespace is empty, so when a run
returns nothing it started is left, daemons included. Output is read in chunks as
it comes; past the cap it is read and dropped, so a program printing without end neither blocks on a full
pipe nor grows the parent's memory.

Outcomes: a :class:`SandboxResult` whenever the command started (whatever it then did: that is the
command's result and, for a model's code, its score), an :class:`InfraError` of kind ``sandbox`` when this
run's sandbox did not start, and :class:`SandboxUnavailable` when the sandbox cannot run on this machine
at all (checked once per process by :func:`check_available`, a real run of ``python -c pass``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError
from security_verifiers.engines.sandbox.command import ETC_DATA, START_MARKER, sandbox_command, sandbox_options
from security_verifiers.engines.sandbox.config import EXIT_TIMEOUT, SandboxLimits, SandboxResult
from security_verifiers.engines.sandbox.host import Host, SandboxUnavailable, host
from security_verifiers.engines.sandbox.workdir import check_workdir, lent

#: Seconds to wait for the sandbox to be gone after its init was killed, and for its output pipes to close.
KILL_GRACE_S = 10.0
#: Bytes read from a pipe at a time.
CHUNK = 64 * 1024
#: How much of bubblewrap's stderr an infrastructure error quotes.
ERROR_TAIL = 600


@dataclass
class _Prepared:
    """One bubblewrap invocation: its command line, the descriptors it inherits, and the read end of its JSON
    status (whose first line names the sandbox's init). Owns every descriptor it lists."""

    command: list[str] = field(default_factory=list)
    passed: list[int] = field(default_factory=list)
    status_read: int = -1

    def close_passed(self) -> None:
        """Close our copies of what bubblewrap inherited (once it started: the status pipe must see only its end)."""
        while self.passed:
            os.close(self.passed.pop())

    def close(self) -> None:
        self.close_passed()
        if self.status_read >= 0:
            os.close(self.status_read)
            self.status_read = -1


def _memfd(name: str, data: bytes) -> int:
    """An anonymous in-memory file holding ``data``, positioned at its start (bubblewrap reads it to the end)."""
    fd = os.memfd_create(name)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def _prepared(found: Host, argv: Sequence[str], workdir: Path, limits: SandboxLimits,
              extra_ro: Sequence[Path]) -> Iterator[_Prepared]:
    """The command and its descriptors, all closed on exit. The generated /etc files and bubblewrap's options are
    memfds, so their size never blocks a pipe."""
    prepared = _Prepared()
    try:
        prepared.status_read, status_write = os.pipe()
        prepared.passed.append(status_write)
        data: dict[str, int] = {}
        for name, content in ETC_DATA.items():
            data[name] = _memfd(name, content)
            prepared.passed.append(data[name])
        options = sandbox_options(found, workdir, limits, extra_ro, data, status_write)
        options_fd = _memfd("sv-sandbox-options", b"".join(o.encode() + b"\0" for o in options))
        prepared.passed.append(options_fd)
        prepared.command = sandbox_command(found, options_fd, argv, limits)
        yield prepared
    finally:
        prepared.close()


def _quote_stderr(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace").strip()
    return text[-ERROR_TAIL:] if text else "(no message)"


def _unavailable(stderr: bytes, as_root: bool) -> SandboxUnavailable:
    text = _quote_stderr(stderr)
    hint = ("bubblewrap runs as root without a user namespace, then the command switches to uid 65534 in a new one: "
            "a container must allow mount namespaces and user namespaces (e.g. Docker's default seccomp profile "
            "forbids them; --security-opt seccomp=unconfined or --privileged allows them)" if as_root else
            "bubblewrap needs unprivileged user namespaces: check `sysctl user.max_user_namespaces` (must be > 0), "
            "kernel.unprivileged_userns_clone (Debian, must be 1) and kernel.apparmor_restrict_unprivileged_userns "
            "(Ubuntu, must be 0), or a container's seccomp profile")
    return SandboxUnavailable(f"the sandbox cannot start on this machine: {text}. {hint}. Code that must run "
                              "sandboxed is never run without the sandbox")


@cache
def check_available() -> Host:
    """The host, once a sandbox has really started here (``python -c pass`` with the default limits); otherwise
    :class:`SandboxUnavailable` with bubblewrap's own message and what usually causes it. Run once per process
    (it blocks for a few tens of milliseconds)."""
    found = host()
    with tempfile.TemporaryDirectory(prefix="sv-sandbox-probe-") as tmp, lent(Path(tmp), found.as_root), \
            _prepared(found, [found.python, "-c", "pass"], Path(tmp), SandboxLimits(), ()) as prepared:
        try:
            done = subprocess.run(prepared.command, stdin=subprocess.DEVNULL, capture_output=True,
                                  pass_fds=prepared.passed, env={}, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise SandboxUnavailable(f"the sandbox cannot start on this machine: {err}") from err
    if done.returncode != 0 or done.stdout != START_MARKER:
        raise _unavailable(done.stderr, found.as_root)
    return found


def _check_extra(path: Path | str) -> Path:
    resolved = Path(path).resolve()
    if not resolved.exists():
        raise ConfigError(f"sandbox read-only path {path}: no such file or directory")
    return resolved


async def _drain(stream: asyncio.StreamReader | None, cap: int) -> tuple[bytes, bool]:
    """Everything ``stream`` yields until it closes, keeping the first ``cap`` bytes; (kept, truncated)."""
    assert stream is not None
    kept = bytearray()
    truncated = False
    while chunk := await stream.read(CHUNK):
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        truncated = truncated or len(chunk) > room
    return bytes(kept), truncated


async def _readable(fd: int) -> None:
    """Wait until ``fd`` polls readable (data, end of file, or a pidfd whose process has exited)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def _sandbox_init(status_read: int, bwrap_pid: int) -> int | None:
    """A pidfd of the sandbox's init (bubblewrap's PID 1), from the first line of bubblewrap's JSON status; None
    when bubblewrap stopped before making it, or it is already gone. It is opened while the init is still
    bubblewrap's child (checked), so the descriptor cannot name a recycled pid; with it the parent can kill the
    whole namespace, and wait for it to be empty."""
    os.set_blocking(status_read, False)
    status = bytearray()
    while b"\n" not in status:
        await _readable(status_read)
        try:
            chunk = os.read(status_read, 65536)
        except BlockingIOError:
            continue
        if not chunk:
            return None
        status += chunk
    line = status.split(b"\n", 1)[0]
    try:
        pid = json.loads(line)["child-pid"]
    except (ValueError, KeyError, TypeError) as error:
        raise InfraError(ErrorKind.SANDBOX, f"bubblewrap's status is not understood: {line[:200]!r}") from error
    try:
        pidfd = os.pidfd_open(pid)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return None
    if int(stat.rsplit(")", 1)[1].split()[1]) != bwrap_pid:
        os.close(pidfd)
        return None
    return pidfd


async def _kill(proc: asyncio.subprocess.Process, init: asyncio.Task[int | None]) -> None:
    """Kill the whole sandbox: its init, which takes every process of the namespace with it."""
    pidfd = init.result() if init.done() and not init.cancelled() and init.exception() is None else None
    if pidfd is not None:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    else:  # killed before bubblewrap made its init: --die-with-parent takes the sandbox down with bubblewrap
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


async def _ended(proc: asyncio.subprocess.Process, init: asyncio.Task[int | None]) -> None:
    """Wait for bubblewrap and for the sandbox's init. The init exits only once every other process of its PID
    namespace is gone, so after this nothing the command started is running (bubblewrap's outer process can exit
    a moment before its init does)."""
    await proc.wait()
    pidfd = await init
    if pidfd is not None:
        await _readable(pidfd)


async def _release(init: asyncio.Task[int | None], *tasks: asyncio.Task[tuple[bytes, bool]]) -> None:
    """Stop whatever is still pending and close the init's pidfd, if one was opened."""
    for task in (init, *tasks):
        task.cancel()
    await asyncio.gather(init, *tasks, return_exceptions=True)
    if not init.cancelled() and init.exception() is None and (pidfd := init.result()) is not None:
        os.close(pidfd)


async def _run_started(found: Host, argv: list[str], workdir: Path, limits: SandboxLimits,
                       extra_ro: list[Path]) -> SandboxResult:
    with _prepared(found, argv, workdir, limits, extra_ro) as prepared:
        return await run_prepared(prepared, limits)


async def run_prepared(prepared: _Prepared, limits: SandboxLimits, stdin: bytes | None = None) -> SandboxResult:
    """Run a prepared bubblewrap command (it owns ``prepared``'s descriptors until it returns) under ``limits``'
    wall-clock timeout and output caps; ``stdin`` is given whole (as an in-memory file, so a large input never
    blocks on a pipe), or is empty."""
    stdin_fd = _memfd("sv-sandbox-stdin", stdin) if stdin is not None else None
    try:
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *prepared.command, stdin=subprocess.DEVNULL if stdin_fd is None else stdin_fd,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=prepared.passed, env={}, start_new_session=True)
        except OSError as error:
            raise InfraError(ErrorKind.SANDBOX, f"bubblewrap could not be started: {error}") from error
        prepared.close_passed()
        init = asyncio.create_task(_sandbox_init(prepared.status_read, proc.pid))
        out = asyncio.create_task(_drain(proc.stdout, limits.output_bytes + len(START_MARKER)))
        err = asyncio.create_task(_drain(proc.stderr, limits.output_bytes))
        timed_out = False
        try:
            try:
                await asyncio.wait_for(proc.wait(), limits.timeout)
            except TimeoutError:
                timed_out = True
                await _kill(proc, init)
            except BaseException:  # cancelled: leave nothing running, then let the cancellation through
                await _kill(proc, init)
                with suppress(TimeoutError):
                    await asyncio.wait_for(_ended(proc, init), KILL_GRACE_S)
                raise
            try:
                await asyncio.wait_for(_ended(proc, init), KILL_GRACE_S)
                wall_s = time.monotonic() - started
                (stdout, stdout_cut), (stderr, stderr_cut) = await asyncio.wait_for(asyncio.gather(out, err),
                                                                                    KILL_GRACE_S)
            except TimeoutError as error:
                with suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                raise InfraError(ErrorKind.SANDBOX, f"the sandbox was still running {KILL_GRACE_S:g} s after it "
                                 "ended or was killed") from error
        finally:
            await _release(init, out, err)
    finally:
        if stdin_fd is not None:
            os.close(stdin_fd)
    if not stdout.startswith(START_MARKER):
        what = f"did not start within {limits.timeout:g} s" if timed_out else "could not start"
        raise InfraError(ErrorKind.SANDBOX, f"bubblewrap {what}: {_quote_stderr(stderr)}")
    code = proc.returncode
    assert code is not None
    if timed_out:
        code, signum = EXIT_TIMEOUT, None
    elif code < 0:  # bubblewrap itself was killed from outside
        code, signum = 128 - code, -code
    else:
        signum = code - 128 if 128 < code < 128 + signal.NSIG else None
    return SandboxResult(exit_code=code, timed_out=timed_out, killed=signum is not None, signal=signum,
                         stdout=stdout[len(START_MARKER):], stderr=stderr,
                         stdout_truncated=stdout_cut, stderr_truncated=stderr_cut, wall_s=round(wall_s, 4))


async def run_async(argv: Sequence[str], workdir: Path | str, limits: SandboxLimits | None = None,
                    extra_ro: Sequence[Path | str] = ()) -> SandboxResult:
    """Run ``argv`` in the sandbox with ``workdir`` as its only writable directory (``/work`` inside, also the
    working directory and HOME); ``extra_ro`` are host paths to show read-only at the same path (nothing else of
    the host is visible). stdin is empty. ``argv[0]`` is looked up on the sandbox's PATH (the runtime's bin,
    then /usr/local/bin, /usr/bin, /bin); :func:`sandbox_python` is the interpreter's full path."""
    if not argv:
        raise ConfigError("sandbox: no command to run")
    found = check_available()
    directory = check_workdir(Path(workdir))
    extra = [_check_extra(p) for p in extra_ro]
    with lent(directory, found.as_root):
        return await _run_started(found, list(argv), directory, limits or SandboxLimits(), extra)


def run(argv: Sequence[str], workdir: Path | str, limits: SandboxLimits | None = None,
        extra_ro: Sequence[Path | str] = ()) -> SandboxResult:
    """:func:`run_async` for callers without an event loop (it starts one)."""
    return asyncio.run(run_async(argv, workdir, limits, extra_ro))


def sandbox_python() -> str:
    """The Python interpreter inside the sandbox: the one running this process, at the same path."""
    return check_available().python
