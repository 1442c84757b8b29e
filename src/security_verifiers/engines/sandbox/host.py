"""What the sandbox needs from this machine: bubblewrap, two util-linux tools, sh, and the Python runtime.

Found once per process (:func:`host`). Anything missing is a :class:`SandboxUnavailable` naming the Debian
package that provides it: code that must run sandboxed never runs without the sandbox.

Two modes, chosen by who runs ``sv``:

* **user** (any uid but 0): bubblewrap makes a user namespace in which the command runs as uid 65534; on the
  host its processes are the caller's.
* **root**: bubblewrap's user namespace would map uid 65534 inside to host uid 0, and the kernel does not
  enforce RLIMIT_NPROC on uid 0, so a fork bomb would be unbounded. Instead bubblewrap runs as root without a
  user namespace (so it can bind a runtime under a private directory such as ``/root/.pyenv``, which uid
  65534 could not reach: bubblewrap 0.8 resolves bind sources as the sandbox's user and has no
  ``--bind-fd``), ``setpriv`` drops to host uid/gid 65534 with no capabilities, and a second bubblewrap,
  unprivileged, puts the command in fresh user namespaces over the same view, as in user mode, so
  RLIMIT_NPROC counts only this sandbox's processes, not every uid-65534 process on the host. The work
  directory is lent to uid 65534 for the run (``workdir.py``).

The Python runtime is the interpreter running ``sv`` (``sys.base_prefix``, never the virtualenv): it is
bound read-only at its own path when it lives outside ``/usr``, and its site-packages directories are
covered by empty directories, so a sandboxed program sees the standard library only, whatever is installed
on the host.
"""

from __future__ import annotations

import os
import shutil
import site
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from security_verifiers.core.errors import EngineUnavailable

#: The uid and gid the command runs as inside the sandbox (and, in root mode, on the host): ``nobody``.
SANDBOX_UID = 65534
SANDBOX_GID = 65534
#: Directories searched for the tools that run inside the sandbox; all of them are visible there.
SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
#: Top-level system paths made visible (read-only, or as the same symlink on merged-/usr systems).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Host files of /etc a program may need (dynamic loader cache, Debian alternatives), read-only when present.
ETC_FILES = ("/etc/ld.so.cache", "/etc/alternatives")


class SandboxUnavailable(EngineUnavailable):
    """The sandbox cannot run on this machine (a tool is missing, or bubblewrap cannot create namespaces).

    Never caught to run the code unsandboxed instead."""


@dataclass(frozen=True)
class Host:
    """The tools and runtime the sandbox command line is built from (absolute paths)."""

    bwrap: str
    prlimit: str
    sh: str
    setpriv: str
    as_root: bool
    #: The interpreter inside the sandbox (the one running ``sv``, found at the same path).
    python: str
    #: Runtime directories outside /usr, bound read-only at the same path.
    runtime_dirs: tuple[str, ...]
    #: Site-packages directories of the runtime, covered by empty read-only directories.
    hidden_dirs: tuple[str, ...]
    #: PATH inside the sandbox: the runtime's bin first, then the system's.
    path: str


def _tool(name: str, package: str) -> str:
    """A tool that runs inside the sandbox: it must live in a system directory, which the sandbox shows."""
    found = shutil.which(name, path=SYSTEM_PATH)
    if found is None:
        raise SandboxUnavailable(f"`{name}` was not found in {SYSTEM_PATH}: install the Debian package {package} "
                                 f"(apt-get install {package}); the sandbox needs it")
    return found


def _under(path: Path, root: str) -> bool:
    return path == Path(root) or Path(root) in path.parents


@cache
def host() -> Host:
    """The sandbox's tools and runtime on this machine; :class:`SandboxUnavailable` when one is missing."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (`bwrap`) is not installed: install the Debian package bubblewrap "
                                 "(apt-get install bubblewrap; `make test` does it). Code that must run sandboxed is "
                                 "never run without it")
    base = Path(os.path.realpath(sys.base_prefix))
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    executable = Path(os.path.realpath(sys.executable))
    python = executable if base in executable.parents else base / "bin" / version
    if not python.is_file():
        raise SandboxUnavailable(f"the Python runtime was not found at {python} (sys.base_prefix {sys.base_prefix})")
    in_system = any(_under(base, d) for d in SYSTEM_DIRS)
    hidden = sorted({os.path.realpath(d) for d in site.getsitepackages([str(base)]) if Path(d).is_dir()})
    bin_dirs = ([] if in_system else [str(base / "bin")]) + ["/usr/local/bin", "/usr/bin", "/bin"]
    return Host(
        bwrap=bwrap,
        prlimit=_tool("prlimit", "util-linux"),
        sh=_tool("sh", "dash"),
        setpriv=_tool("setpriv", "util-linux"),
        as_root=os.geteuid() == 0,
        python=str(python),
        runtime_dirs=() if in_system else (str(base),),
        hidden_dirs=tuple(hidden),
        path=":".join(dict.fromkeys(bin_dirs)),
    )
