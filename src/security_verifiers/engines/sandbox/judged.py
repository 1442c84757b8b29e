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

from security_verifiers.core.errors import ConfigError
from security_verifiers.engines.sandbox.command import (
    SANDBOX_ENV,
    SHM_BYTES,
    START_MARKER,
    _readable_parents,
)
from security_verifiers.engines.sandbox.config import MIB, SandboxLimits, SandboxResult
from security_verifiers.engines.sandbox.host import ETC_FILES, SANDBOX_GID, SANDBOX_UID, SYSTEM_DIRS, Host
from security_verifiers.engines.sandbox.runner import _memfd, _Prepared, check_available, run_prepared

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

    @classmethod
    def draw(cls, rng: random.Random) -> Identity:
        user = rng.choice(_USERS)
        word = rng.choice(_WORDS)
        top = rng.choice(_TOPS)
        tail = f"{word}-{''.join(rng.choices(string.ascii_lowercase + string.digits, k=rng.randint(3, 6)))}"
        root = f"/home/{user}/{tail}" if top == "/home" else f"{top}/{tail}"
        uid = rng.randint(1000, 59999)
        host = f"{rng.choice(_WORDS)}-{rng.randint(1, 99):02d}"
        return cls(root=root, uid=uid, user=user, hostname=host)

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


async def run_judge_async(judge_code: Path | str, argv: Sequence[str], stdin: bytes, limits: SandboxLimits,
                          extra_ro: Sequence[Path | str] = ()) -> SandboxResult:
    """Run the judge ``argv`` (inside: ``python3 /judge/...``) with ``stdin`` as its whole input. ``judge_code`` is the
    host directory shown read-only at ``/judge``; ``extra_ro`` are host paths the judge may show its programs (at the
    same path). The result is the judge's: its stdout holds its observations."""
    import os

    found = check_available()
    code = Path(judge_code).resolve()
    extra = []
    for path in extra_ro:
        resolved = Path(path).resolve()
        if not resolved.exists():
            raise ConfigError(f"judged sandbox: {path} does not exist")
        extra.append(str(resolved))
    prepared = _Prepared()
    try:
        prepared.status_read, status_write = os.pipe()
        prepared.passed.append(status_write)
        command, options = judge_command(found, str(code), argv, limits, extra, status_write)
        args_fd = _memfd("sv-judge-options", options)
        prepared.passed.append(args_fd)
        prepared.command = [str(args_fd) if part == "{args_fd}" else part for part in command]
        return await run_prepared(prepared, limits, stdin)
    finally:
        prepared.close()


def program_argv(found: Host, identity: Identity, limits: SandboxLimits, argv: Sequence[str], *,
                 entropy: str, etc_dir: str, site_dirs: Sequence[str] = (), extra_ro: Sequence[str] = ()) -> list[str]:
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
             "--bind", entropy, "/dev/urandom",
             "--bind", SHARED_TMP, "/tmp"]
    args += _readable_parents([identity.root], made) + ["--bind", SHARED_WORK, identity.root]
    args += _readable_parents(["/etc/passwd", "/etc/ssl/certs/ca-certificates.crt"], made)
    for name in ("passwd", "group", "hostname", "hosts", "nsswitch.conf"):
        args += ["--ro-bind", f"{etc_dir}/{name}", f"/etc/{name}"]
    args += ["--ro-bind", f"{etc_dir}/ssl-certs.crt", "/etc/ssl/certs/ca-certificates.crt"]
    env = {**SANDBOX_ENV, "PATH": found.path, "HOME": identity.root, "USER": identity.user,
           "LOGNAME": identity.user}
    args += ["--remount-ro", "/", "--chdir", identity.root, "--clearenv",
             *[a for k, v in env.items() for a in ("--setenv", k, v)], "--seccomp", SECCOMP_FD, "--"]
    return args + _limits_and_start(found, limits) + list(argv)
