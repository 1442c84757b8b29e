"""Two levels of sandbox: a judge that holds everything secret, and the judged programs it starts, which see none of it.

Why two: a judge that shares a process, a uid or a filesystem view with the program it judges can be read, rewired or
outrun by that program (measured: appended code that cleaned the judge's markers at exit or rewired its driver
through a frame won most of a repair reward without repairing anything). So the judge lives outside:

* The **judge sandbox** (:func:`run_judge_async`) is started by the host. Its process runs as uid 0 of a user
  namespace of its own with every capability there (none on the host), in its own PID and network namespaces. With
  them it can set up the judged program's world: its loopback answers every address (``ip route add local ...``),
  it binds the ports a program's clients expect (25, 80, 443...), and it watches the program's files. Its writable
  directories are tmpfs: ``/work`` (what the program will see as its project directory), ``/tmp`` (the program's
  /tmp) and ``/run/judge`` (the judge's own, never shown to a program). Read-only: the system, the Python runtime
  (standard library only), and the judge's code at ``/judge``. Its input is one document on stdin; its output, its
  observations, on stdout. A judge is trusted code, but the document may carry a dataset's test module, so it is
  confined like any program; it cannot see the host.
* A **program sandbox** (:func:`program_argv`) is started by the judge, as many times as it needs (a run that hung
  is killed and a fresh one started). It is the sandbox of ``command.py`` with these differences: a nested user
  namespace with a uid drawn per run (no capabilities, no further user namespaces), its own PID namespace (the judge
  is not visible, so neither signals nor /proc reach it), the judge's network namespace (its servers are the
  program's network), ``/work`` bound at a project path drawn per run, a generated ``/etc`` (passwd, group, hosts,
  the world's CA bundle), and ``/dev/urandom`` a pipe the judge feeds, with ``getrandom`` turned off
  (``seccomp.py``), so that the program's entropy is an input like its files.

Why the identity is drawn per run (:class:`Identity`): a patch that behaves only when it finds ``/work/src``, uid
65534 or a fixed host name cannot tell a test from a normal run when every run has another project path, uid and
host name, drawn from the same distribution whether the judge is testing it or replaying what a user would do.

Root mode (``host.py``) starts the judge as in ``command.py`` (bubblewrap as root, ``setpriv`` to uid 65534, a second
unprivileged bubblewrap for the namespaces), with one change: the first bubblewrap shows the host's /proc, unused,
so that the kernel lets the unprivileged levels below mount /proc files of their own (it allows that only where a
whole /proc is already visible; the second bubblewrap's root does not contain it).
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError
from security_verifiers.engines.sandbox.command import (
    SANDBOX_ENV,
    SHM_BYTES,
    START_MARKER,
    _readable_parents,
)
from security_verifiers.engines.sandbox.config import MIB, SandboxLimits
from security_verifiers.engines.sandbox.host import ETC_FILES, SANDBOX_GID, SANDBOX_UID, SYSTEM_DIRS, Host
from security_verifiers.engines.sandbox.runner import _memfd, check_available

#: Inside the judge sandbox: the judge's code (read-only), its private writable directory, and the two directories
#: it shares with the programs it starts.
JUDGE_CODE = "/judge"
JUDGE_PRIVATE = "/run/judge"
SHARED_WORK = "/work"
SHARED_TMP = "/tmp"
#: Placeholder of the seccomp descriptor in :func:`program_argv` (the judge opens it, then fills the number in).
SECCOMP_FD = "{seccomp_fd}"

_USERS = ("app", "deploy", "svc", "www", "runner", "builder", "ops", "web", "worker", "service", "site", "backend")
_TOPS = ("/srv", "/opt", "/home", "/var/lib", "/var/www", "/app")
_WORDS = ("atlas", "beacon", "cobalt", "delta", "ember", "falcon", "granite", "harbor", "iris", "juno", "keystone",
          "lumen", "meridian", "nova", "orchid", "pioneer", "quill", "raven", "summit", "tango", "umber", "vertex",
          "willow", "zenith")


@dataclass(frozen=True)
class Identity:
    """Who and where a judged program is in one run: its project directory, uid, user name and host name."""

    root: str
    uid: int
    user: str
    hostname: str
    #: PYTHONHASHSEED of every program of the run: the same for both callers (so that a set of strings iterates
    #: alike under the two), another in every run (so that it tells nothing), and none read from /dev/urandom.
    hash_seed: int = 1

    @classmethod
    def draw(cls, rng: random.Random) -> Identity:
        user = rng.choice(_USERS)
        word = rng.choice(_WORDS)
        top = rng.choice(_TOPS)
        tail = f"{word}-{''.join(rng.choices(string.ascii_lowercase + string.digits, k=rng.randint(3, 6)))}"
        root = f"/home/{user}/{tail}" if top == "/home" else f"{top}/{tail}"
        uid = rng.randint(1000, 59999)
        host = f"{rng.choice(_WORDS)}-{rng.randint(1, 99):02d}"
        return cls(root=root, uid=uid, user=user, hostname=host, hash_seed=rng.randint(1, 2**32 - 1))

    def etc_files(self) -> dict[str, bytes]:
        """The generated /etc files that say who this is (the world adds hosts and the CA bundle)."""
        return {
            "/etc/passwd": (f"root:x:0:0:root:/root:/usr/sbin/nologin\n{self.user}:x:{self.uid}:{self.uid}:"
                            f"{self.user}:{self.root}:/bin/sh\n").encode(),
            "/etc/group": f"root:x:0:\n{self.user}:x:{self.uid}:\n".encode(),
            "/etc/hostname": f"{self.hostname}\n".encode(),
            "/etc/nsswitch.conf": b"passwd: files\ngroup: files\nhosts: files\n",
        }


def _system_view(found: Host, extra_ro: Sequence[str], made: set[str]) -> list[str]:
    """The read-only system every level shows: /usr and its links, the runtime with site-packages covered, the
    loader cache, and ``extra_ro`` (host paths shown at the same path)."""
    args: list[str] = []
    for top in SYSTEM_DIRS:
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    for directory in (*found.runtime_dirs, *extra_ro):
        args += _readable_parents([directory], made) + ["--ro-bind", directory, directory]
    for directory in found.hidden_dirs:
        args += ["--perms", "0755", "--size", "4096", "--tmpfs", directory, "--remount-ro", directory]
    etc_files = [f for f in ETC_FILES if Path(f).exists()]
    args += _readable_parents(etc_files, made)
    for name in etc_files:
        args += ["--ro-bind", name, name]
    return args


def _judge_view(found: Host, judge_code: str, extra_ro: Sequence[str], limits: SandboxLimits) -> list[str]:
    """What the judge sees (built by its last, unprivileged bubblewrap)."""
    made: set[str] = set()
    args = _system_view(found, extra_ro, made)
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    for directory in (SHARED_WORK, SHARED_TMP, JUDGE_PRIVATE):
        args += _readable_parents([directory], made)
        args += ["--perms", "1777" if directory == SHARED_TMP else "0755", "--size", str(limits.tmp_mb * MIB),
                 "--tmpfs", directory]
    args += _readable_parents([JUDGE_CODE], made) + ["--ro-bind", judge_code, JUDGE_CODE]
    env = {"PATH": found.path, "HOME": JUDGE_PRIVATE, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONHASHSEED": "0"}
    args += ["--remount-ro", "/", "--chdir", JUDGE_PRIVATE, "--clearenv"]
    return args + [a for k, v in env.items() for a in ("--setenv", k, v)]


_JUDGE_NAMESPACES = ["--unshare-user", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                     "--unshare-cgroup-try", "--hostname", "judge", "--uid", "0", "--gid", "0", "--cap-add", "ALL",
                     "--die-with-parent", "--new-session"]


def _limits_and_start(found: Host, limits: SandboxLimits) -> list[str]:
    rlimits = [found.prlimit, f"--cpu={limits.cpu_s}", f"--as={limits.memory_mb * MIB}",
               f"--nproc={limits.max_processes}", f"--fsize={limits.file_mb * MIB}",
               f"--nofile={limits.open_files}", "--core=0", "--"]
    marker = START_MARKER.decode().replace("\n", "\\n")
    return rlimits + [found.sh, "-c", f"printf '{marker}' && exec \"$@\"", "sv-judge"]


def judge_command(found: Host, judge_code: str, argv: Sequence[str], limits: SandboxLimits,
                  extra_ro: Sequence[str], status_fd: int) -> tuple[list[str], bytes]:
    """The host's command line and the options read from an ``--args`` descriptor (returned as bytes)."""
    # in root mode the judge's bubblewrap builds its view from the first one's, where the code is at /judge already
    view = _judge_view(found, JUDGE_CODE if found.as_root else judge_code, extra_ro, limits)
    if not found.as_root:
        options = [*_JUDGE_NAMESPACES, *view, "--json-status-fd", str(status_fd)]
        return [found.bwrap, "--args", "{args_fd}", "--", *_limits_and_start(found, limits), *argv], \
            b"".join(o.encode() + b"\0" for o in options)
    made: set[str] = set()
    first = ["--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
             "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
             *_system_view(found, extra_ro, made), "--bind", "/proc", "/proc", "--dev", "/dev",
             *_readable_parents([JUDGE_CODE], made), "--ro-bind", judge_code, JUDGE_CODE,
             *_readable_parents([SHARED_WORK, SHARED_TMP, JUDGE_PRIVATE], made),
             "--dir", SHARED_WORK, "--dir", SHARED_TMP, "--dir", JUDGE_PRIVATE,
             "--remount-ro", "/", "--chdir", "/", "--clearenv", "--json-status-fd", str(status_fd)]
    drop = [found.setpriv, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    second = [found.bwrap, *_JUDGE_NAMESPACES, *view, "--"]
    command = [found.bwrap, "--args", "{args_fd}", "--", *drop, *second, *_limits_and_start(found, limits), *argv]
    return command, b"".join(o.encode() + b"\0" for o in first)


class JudgeProcess:
    """One judge sandbox kept running: it takes one document at a time (its length, a newline, the bytes) on stdin
    and answers JSON lines on stdout up to a line whose event is ``end``. The judge forks a child per document, so
    nothing of one run's judging is left for the next; keeping the sandbox saves starting it (two bubblewraps and
    an interpreter, about half of a short run). Used by one thread at a time."""

    def __init__(self, judge_code: Path | str, argv: Sequence[str], limits: SandboxLimits,
                 extra_ro: Sequence[Path | str] = ()) -> None:
        import os
        import subprocess

        found = check_available()
        code = Path(judge_code).resolve()
        extra = []
        for path in extra_ro:
            resolved = Path(path).resolve()
            if not resolved.exists():
                raise ConfigError(f"judged sandbox: {path} does not exist")
            extra.append(str(resolved))
        status_read, status_write = os.pipe()
        command, options = judge_command(found, str(code), argv, limits, extra, status_write)
        args_fd = _memfd("sv-judge-options", options)
        try:
            self.proc = subprocess.Popen([str(args_fd) if p == "{args_fd}" else p for p in command],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         pass_fds=[args_fd, status_write], env={}, start_new_session=True)
        except OSError as error:
            raise InfraError(ErrorKind.SANDBOX, f"bubblewrap could not be started: {error}") from error
        finally:
            os.close(args_fd)
            os.close(status_write)
        self.status_read = status_read
        self.stderr = bytearray()
        self.buffer = b""
        self.limits = limits
        self.started = False
        #: The root of the site directories of imported cases it shows, if any (set by its owner).
        self.sites: Path | None = None
        import threading

        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):  # type: ignore[union-attr,attr-defined]
            self.stderr += chunk
            del self.stderr[:-8192]

    def _read(self, deadline: float) -> bytes | None:
        import os
        import select
        import time

        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        return os.read(fd, 1 << 16) or None

    def _fail(self, what: str) -> InfraError:
        self.close()
        tail = bytes(self.stderr[-1500:]).decode("utf-8", "replace").strip()
        return InfraError(ErrorKind.SANDBOX, f"the judge {what}" + (f": {tail}" if tail else ""))

    def judge(self, document: bytes, timeout: float) -> list[bytes]:
        """Send ``document``; the JSON lines answered for it (without the ``end`` line). An InfraError when the judge
        did not answer within ``timeout`` seconds, or ended (the process is then closed: start a new one)."""
        import time

        deadline = time.monotonic() + timeout
        if not self.started:
            while not self.buffer.startswith(START_MARKER):
                if len(self.buffer) >= len(START_MARKER):
                    raise self._fail(f"printed {self.buffer[:80]!r} before starting")
                chunk = self._read(deadline)
                if chunk is None:
                    raise self._fail("sandbox did not start")
                self.buffer += chunk
            self.buffer = self.buffer[len(START_MARKER):]
            self.started = True
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(f"{len(document)}\n".encode() + document)
            self.proc.stdin.flush()
        except OSError as error:
            raise self._fail(f"does not take input ({error})") from error
        lines: list[bytes] = []
        size = 0
        while True:
            while b"\n" not in self.buffer:
                chunk = self._read(deadline)
                if chunk is None:
                    raise self._fail("did not finish in time" if time.monotonic() >= deadline else "ended")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.startswith(b'{"event": "end"'):
                return lines
            size += len(line)
            if size > self.limits.output_bytes:
                raise self._fail(f"wrote more than {self.limits.output_bytes} bytes for one run")
            lines.append(line)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Kill the judge sandbox (bubblewrap's process group; --die-with-parent takes the namespaces down)."""
        import os
        import signal

        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a judge that will not die is reported by the next start, not here
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            os.close(self.status_read)
        except OSError:
            pass


def program_argv(found: Host, identity: Identity, limits: SandboxLimits, argv: Sequence[str], *,
                 entropy: str | None, etc_dir: str, site_dirs: Sequence[str] = (),
                 extra_ro: Sequence[str] = ()) -> list[str]:
    """The command line, run by the judge, of one program sandbox (see the module doc). ``entropy`` is the judge's
    pipe shown as /dev/urandom and /dev/random; ``etc_dir`` holds the generated /etc files (every file there is shown
    at /etc/<name>, plus ``ssl-certs.crt`` as the system CA bundle); ``site_dirs`` are read-only package directories
    (at the same path). The seccomp descriptor is :data:`SECCOMP_FD`, filled in by the judge."""
    made: set[str] = set()
    args = [found.bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--disable-userns", "--uid", str(identity.uid), "--gid", str(identity.uid),
            "--hostname", identity.hostname, "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    args += _system_view(found, [*site_dirs, *extra_ro], made)
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
             "--bind", SHARED_TMP, "/tmp"]
    if entropy is not None:
        args += ["--bind", entropy, "/dev/urandom"]
    args += _readable_parents([identity.root], made) + ["--bind", SHARED_WORK, identity.root]
    args += _readable_parents(["/etc/passwd", "/etc/ssl/certs/ca-certificates.crt"], made)
    for name in ("passwd", "group", "hostname", "hosts", "nsswitch.conf"):
        args += ["--ro-bind", f"{etc_dir}/{name}", f"/etc/{name}"]
    args += ["--ro-bind", f"{etc_dir}/ssl-certs.crt", "/etc/ssl/certs/ca-certificates.crt"]
    env = {**SANDBOX_ENV, "PATH": found.path, "HOME": identity.root, "USER": identity.user,
           "LOGNAME": identity.user, "PYTHONHASHSEED": str(identity.hash_seed)}
    args += ["--remount-ro", "/", "--chdir", identity.root, "--clearenv",
             *[a for k, v in env.items() for a in ("--setenv", k, v)],
             *(["--seccomp", SECCOMP_FD] if entropy is not None else []), "--"]
    return args + _limits_and_start(found, limits) + list(argv)
