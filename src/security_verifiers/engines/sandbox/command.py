"""The bubblewrap command line of one sandboxed run, and why each part is there.

Isolation (bubblewrap):

* ``--unshare-pid --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup-try`` (plus a user namespace,
  see ``host.py``): no network but a private loopback, no view of host processes, and a fresh PID namespace
  whose init is bubblewrap's; when the command exits or the parent kills that init, the kernel kills every
  process left in the namespace, ``setsid`` daemons included.
* ``--die-with-parent``: if ``sv`` dies, so does the sandbox. ``--new-session``: the command cannot push
  keystrokes into the caller's terminal (TIOCSTI).
* ``--cap-drop ALL`` (root mode keeps SETUID, SETGID and SETPCAP for ``setpriv`` alone, which drops them before
  the command runs); ``--disable-userns``, so the command cannot make user namespaces of its own (and with
  them the capabilities that open much of the kernel's attack surface).
* Filesystem: an empty read-only root with ``/usr`` (and the merged-/usr links), the Python runtime, the
  dynamic-loader cache and ``/etc/alternatives`` read-only; small generated ``/etc/passwd``, ``group``,
  ``hosts`` and ``nsswitch.conf`` (so ``localhost`` and uid 65534 resolve); ``--proc``, ``--dev``, a size-capped
  private ``/tmp`` and ``/dev/shm``; and one writable directory, the work directory, at ``/work``. No home, no
  project checkout, no host /tmp. All mounts are nosuid; binds are nodev. What stays readable: the host paths
  of the bound directories, in /proc/self/mountinfo (so work directories should have meaningless names).
* ``--clearenv`` and a fixed environment (:data:`SANDBOX_ENV`): nothing of the caller's environment leaks in.

Inside, a short launcher chain runs before the command: (root mode: ``setpriv`` to uid 65534 with no
capabilities, an empty bounding set and no_new_privs, then a second, unprivileged bubblewrap that only adds
the user namespaces: ``--unshare-user --disable-userns`` over the same view), ``prlimit`` setting every
limit as soft and hard limit, and ``sh`` writing :data:`START_MARKER` to stdout before it ``exec``\\ s the
command. The marker is how the parent tells "the sandbox never started" (an infrastructure error) from "the
command failed" (the command's own result): it is written after every setup step succeeded and before the
command exists, so the command can neither forge its absence nor suppress it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from security_verifiers.engines.sandbox.config import MIB, SandboxLimits
from security_verifiers.engines.sandbox.host import ETC_FILES, SANDBOX_GID, SANDBOX_UID, SYSTEM_DIRS, Host

#: Where the work directory appears inside the sandbox (also the command's HOME and working directory).
WORKDIR = "/work"
#: The first bytes of stdout of every sandbox that started; removed before the output is returned.
START_MARKER = b"sv-sandbox:started\n"
#: /dev/shm is a tmpfs too; a small one keeps it from becoming unlimited memory.
SHM_BYTES = 8 * MIB
#: The whole environment of the command (PATH is added from the host's runtime).
SANDBOX_ENV: dict[str, str] = {
    "HOME": WORKDIR,
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONNOUSERSITE": "1",  # HOME is writable: no user site-packages a program could plant for a later one
}
#: The user namespace the command runs in: uid/gid 65534, and no further user namespaces from inside.
USER_NAMESPACE = ["--unshare-user", "--disable-userns", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID)]
#: Files generated for /etc inside the sandbox: who uid 65534 is, and that localhost is the loopback.
ETC_DATA: dict[str, bytes] = {
    "/etc/passwd": f"nobody:x:{SANDBOX_UID}:{SANDBOX_GID}:nobody:{WORKDIR}:/usr/sbin/nologin\n".encode(),
    "/etc/group": f"nogroup:x:{SANDBOX_GID}:\n".encode(),
    "/etc/hosts": b"127.0.0.1 localhost\n::1 localhost\n",
    "/etc/nsswitch.conf": b"passwd: files\ngroup: files\nhosts: files\n",
}


def _parents(path: str) -> list[str]:
    """The directories above ``path``, top first ('/a/b/c' -> ['/a', '/a/b'])."""
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _readable_parents(paths: Sequence[str], done: set[str]) -> list[str]:
    """``--dir`` with mode 0755 for every parent not made yet: bubblewrap would make them 0700 (root's), which
    uid 65534 could not cross."""
    args: list[str] = []
    for path in paths:
        for parent in _parents(path):
            if parent not in done:
                done.add(parent)
                args += ["--perms", "0755", "--dir", parent]
    return args


def filesystem_args(host: Host, workdir: Path, extra_ro: Sequence[Path], data_fds: dict[str, int],
                    limits: SandboxLimits) -> list[str]:
    """Mount options: what the sandbox sees, in the order bubblewrap must make it."""
    args: list[str] = []
    for top in SYSTEM_DIRS:
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    # the private /tmp first, so that a runtime or extra path under the host's /tmp is bound on top of it
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
             "--perms", "1777", "--size", str(limits.tmp_mb * MIB), "--tmpfs", "/tmp"]
    made: set[str] = set()
    for directory in (*host.runtime_dirs, *map(str, extra_ro)):
        args += _readable_parents([directory], made) + ["--ro-bind", directory, directory]
    for directory in host.hidden_dirs:
        args += ["--perms", "0755", "--size", "4096", "--tmpfs", directory, "--remount-ro", directory]
    etc_files = [f for f in ETC_FILES if Path(f).exists()]
    args += _readable_parents([*etc_files, *data_fds], made)
    for name in etc_files:
        args += ["--ro-bind", name, name]
    for name, fd in data_fds.items():
        args += ["--perms", "0644", "--ro-bind-data", str(fd), name]
    args += ["--bind", str(workdir), WORKDIR,
             "--remount-ro", "/", "--chdir", "/"]  # the launcher enters WORKDIR: in root mode only uid 65534 may
    return args


def namespace_args(host: Host) -> list[str]:
    """Namespaces, capabilities and the uid, by mode (see ``host.py``)."""
    common = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
              "--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if host.as_root:  # the user namespaces come from the second bubblewrap of the launcher
        return common + ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    return common + USER_NAMESPACE


def launcher(host: Host, limits: SandboxLimits) -> list[str]:
    """The chain that runs inside the sandbox before the command: drop to uid 65534 and enter the user namespaces
    (root mode), set limits, write the start marker, exec the command."""
    drop: list[str] = []
    if host.as_root:
        drop = [host.setpriv, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
                host.bwrap, *USER_NAMESPACE, "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--die-with-parent",
                "--"]  # (--bind alone would make /dev/null unusable: bubblewrap binds nodev)
    rlimits = [host.prlimit, f"--cpu={limits.cpu_s}", f"--as={limits.memory_mb * MIB}",
               f"--nproc={limits.max_processes}", f"--fsize={limits.file_mb * MIB}",
               f"--nofile={limits.open_files}", "--core=0", "--"]
    marker = START_MARKER.decode().replace("\n", "\\n")
    start = [host.sh, "-c", f"cd {WORKDIR} && unset OLDPWD PWD && printf '{marker}' && exec \"$@\"", "sv-sandbox"]
    return drop + rlimits + start


def sandbox_options(host: Host, workdir: Path, limits: SandboxLimits, extra_ro: Sequence[Path],
                    data_fds: dict[str, int], status_fd: int) -> list[str]:
    """bubblewrap's options. They reach it through ``--args FD``, not its command line: the sandbox's init is a fork
    of bubblewrap, and its /proc/1/cmdline would otherwise show the command every host path it binds."""
    env = {"PATH": host.path, **SANDBOX_ENV}
    env_args = ["--clearenv"] + [a for k, v in env.items() for a in ("--setenv", k, v)]
    return [*namespace_args(host), *filesystem_args(host, workdir, extra_ro, data_fds, limits), *env_args,
            "--json-status-fd", str(status_fd)]


def sandbox_command(host: Host, options_fd: int, argv: Sequence[str], limits: SandboxLimits) -> list[str]:
    """The full command line: bubblewrap reading its options from ``options_fd``, the launcher chain, ``argv``."""
    return [host.bwrap, "--args", str(options_fd), "--", *launcher(host, limits), *argv]
