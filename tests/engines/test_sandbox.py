"""The sandbox: what a program can do inside it, and escape attempts that must leave the host untouched.

Every escape test acts on the host (a server, a file, a directory) and checks the host afterwards, not only what
the program reports. These tests run the real bubblewrap sandbox: without bwrap they fail with the error that
names the package, as the scorer would (no skip, no fallback).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError
from security_verifiers.engines.sandbox import (
    EXIT_KILLED,
    EXIT_TIMEOUT,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
    check_available,
    run,
    run_async,
    sandbox_python,
)
from security_verifiers.engines.sandbox import host as host_module
from security_verifiers.engines.sandbox import runner as run_module

REPO = Path(__file__).resolve().parents[2]
AS_ROOT = os.geteuid() == 0


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def py(workdir: Path, code: str, *args: str, **limits: float) -> SandboxResult:
    """Run ``code`` as /work/main.py with the sandbox's Python."""
    (workdir / "main.py").write_text(code)
    return run(["python3", "main.py", *args], workdir, SandboxLimits(**limits))


def json_out(result: SandboxResult) -> dict:
    assert result.exit_code == 0, result.stderr.decode()
    return json.loads(result.stdout)


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker`` (reads /proc: every process on the host)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


# -- what a program can do --------------------------------------------------------------------------------------
def test_python_runs_a_script_in_workdir_and_the_host_sees_what_it_writes(workdir: Path) -> None:
    result = py(workdir, "import os\nopen('out.txt', 'w').write(os.getcwd())\nprint('done')\n")
    assert result.ok and result.stdout == b"done\n" and result.stderr == b""
    assert (workdir / "out.txt").read_text() == "/work"
    # as root the new file is handed back to the directory's owner
    assert (workdir / "out.txt").stat().st_uid == workdir.stat().st_uid == os.geteuid()


@pytest.mark.parametrize(("code", "exit_code", "signal"), [
    ("import sys; sys.exit(3)", 3, None),  # the program's own status
    ("raise ValueError('boom')", 1, None),  # an uncaught exception
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", 139, 11),  # a crash: 128 + signal, killed
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", EXIT_KILLED, 9),
])
def test_the_exit_status_propagates(workdir: Path, code: str, exit_code: int, signal: int | None) -> None:
    result = py(workdir, code)
    assert (result.exit_code, result.signal, result.killed, result.timed_out) == (
        exit_code, signal, signal is not None, False)


def test_stdin_is_empty(workdir: Path) -> None:
    assert py(workdir, "import sys; print(repr(sys.stdin.read()))").stdout == b"''\n"


def test_the_environment_is_fixed_and_the_user_is_nobody(workdir: Path) -> None:
    seen = json_out(py(workdir, "import json, os, pwd, socket\n"
                       "print(json.dumps({'env': dict(os.environ), 'ids': [os.getuid(), os.getgid(), os.getgroups()],"
                       " 'user': pwd.getpwuid(os.getuid()).pw_name, 'host': socket.gethostname(),"
                       " 'localhost': socket.gethostbyname('localhost')}))"))
    assert set(seen["env"]) == {"PATH", "HOME", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
                                "PYTHONNOUSERSITE"}
    assert (seen["env"]["HOME"], seen["env"]["LANG"], seen["env"]["PYTHONHASHSEED"]) == ("/work", "C.UTF-8", "0")
    assert seen["ids"][:2] == [65534, 65534] and set(seen["ids"][2]) <= {65534}  # no host group
    assert seen["user"] == "nobody"
    assert (seen["host"], seen["localhost"]) == ("sandbox", "127.0.0.1")


def test_the_command_has_no_capabilities_and_cannot_make_namespaces(workdir: Path) -> None:
    seen = json_out(py(workdir, """
import json, os, subprocess
caps = {l.split(':')[0]: int(l.split()[1], 16) for l in open('/proc/self/status') if l.startswith('Cap')}
tries = {ns: subprocess.run(['unshare', ns, 'true'], capture_output=True).returncode for ns in ('--user', '--mount',
         '--net')}
try:
    os.setuid(0)
    setuid = 'became root'
except OSError:  # EPERM, or EINVAL: uid 0 does not even exist in the sandbox's user namespace
    setuid = 'refused'
open('/dev/null', 'w').write('devices still work')
print(json.dumps({'caps': caps, 'unshare': tries, 'setuid': setuid}))
"""))
    assert seen["caps"] == {"CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapBnd": 0, "CapAmb": 0}
    assert all(code != 0 for code in seen["unshare"].values()), seen["unshare"]  # no user namespace of its own
    assert seen["setuid"] == "refused"


def test_the_runtime_is_this_interpreter_with_the_standard_library_only(workdir: Path) -> None:
    seen = json_out(py(workdir, "import json, sys, importlib.util\n"
                       "print(json.dumps({'version': sys.version, 'executable': sys.executable,"
                       " 'pydantic': importlib.util.find_spec('pydantic') is not None,"
                       " 'pytest': importlib.util.find_spec('pytest') is not None}))"))
    assert seen["version"] == sys.version and Path(seen["executable"]).resolve() == Path(sandbox_python())
    # the project's packages (in the virtualenv) and the runtime's own site-packages are not visible
    assert not seen["pydantic"] and not seen["pytest"]


def test_an_extra_read_only_path_is_visible_and_stays_read_only(workdir: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helper.py").write_text("ANSWER = 42\n")
    (lib / "helper.py").chmod(0o666)  # writable by anyone: only the read-only mount stops the write
    (workdir / "main.py").write_text(
        f"import sys; sys.path.insert(0, {str(lib)!r}); import helper; print(helper.ANSWER)\n"
        f"try:\n    open({str(lib / 'helper.py')!r}, 'a').write('x')\nexcept OSError as e:\n    print(e.strerror)\n")
    result = run(["python3", "main.py"], workdir, extra_ro=[lib])
    assert result.stdout == b"42\nRead-only file system\n"
    assert (lib / "helper.py").read_text() == "ANSWER = 42\n"


def test_async_runs_proceed_side_by_side(tmp_path: Path) -> None:
    dirs = [tmp_path / f"w{i}" for i in range(3)]
    for i, d in enumerate(dirs):
        d.mkdir()
        (d / "main.py").write_text(f"import time; time.sleep(0.5); print({i})")

    async def both() -> list[SandboxResult]:
        return await asyncio.gather(*(run_async(["python3", "main.py"], d) for d in dirs))

    start = time.monotonic()
    results = asyncio.run(both())
    assert [r.stdout for r in results] == [b"0\n", b"1\n", b"2\n"]
    assert time.monotonic() - start < 1.4  # concurrent: not three sleeps in a row


# -- escapes: network -------------------------------------------------------------------------------------------
class _Listener:
    """A TCP server on the host's loopback counting the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[_Listener]:
    server = _Listener()
    yield server
    server.close()


def test_the_hosts_loopback_server_and_the_network_are_unreachable(workdir: Path, listener: _Listener) -> None:
    abstract = f"\0sv-sandbox-test-{uuid.uuid4().hex}"  # an abstract unix socket: shared by a network namespace
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(abstract)
    unix.listen()
    unix.settimeout(0.5)
    try:
        seen = json_out(py(workdir, f"""
import json, socket
def attempt(family, address):
    s = socket.socket(family)
    s.settimeout(2)
    try:
        s.connect(address)
        return 'connected'
    except OSError as e:
        return type(e).__name__ + ': ' + str(e.strerror)
print(json.dumps({{'loopback': attempt(socket.AF_INET, ('127.0.0.1', {listener.port})),
    'localhost': attempt(socket.AF_INET, ('localhost', {listener.port})),
    'internet': attempt(socket.AF_INET, ('1.1.1.1', 53)),
    'abstract': attempt(socket.AF_UNIX, {abstract!r}),
    'interfaces': [name for _, name in socket.if_nameindex()]}}))
"""))
        with pytest.raises(TimeoutError):
            unix.accept()  # nothing reached the host's abstract socket
    finally:
        unix.close()
    assert seen["loopback"].startswith("ConnectionRefusedError") and seen["localhost"].startswith("Connection")
    assert seen["internet"] == "OSError: Network is unreachable"
    assert seen["abstract"].startswith("ConnectionRefusedError")
    assert seen["interfaces"] == ["lo"]
    assert listener.accepted == 0  # the host's server saw nothing


def test_the_callers_environment_and_paths_do_not_leak_into_the_sandbox(workdir: Path, monkeypatch) -> None:
    canary = f"sv-canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("SV_SANDBOX_CANARY", canary)  # as an API key in the caller's environment would be
    seen = py(workdir, """
import os
for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
    for name in ('environ', 'cmdline'):
        try:
            print(pid, name, open(f'/proc/{pid}/{name}', 'rb').read())
        except OSError as e:
            print(pid, name, e.strerror)
""")
    assert seen.ok and b"/proc" not in seen.stderr
    assert canary.encode() not in seen.stdout and str(workdir).encode() not in seen.stdout


# -- escapes: the file system -----------------------------------------------------------------------------------
def test_files_outside_workdir_are_not_visible(workdir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.txt"  # a sibling of the work directory
    secret.parent.mkdir()
    secret.write_text("host secret")
    home_secret = Path.home() / f".sv-sandbox-canary-{uuid.uuid4().hex}"
    home_secret.write_text("home secret")
    virtualenv = [Path(sys.prefix)] if sys.prefix != sys.base_prefix else []
    paths = [secret, secret.parent, home_secret, REPO / "pyproject.toml", Path(__file__), *virtualenv,
             Path("/etc/shadow"), Path("/etc/hostname"), Path("/etc/os-release"), Path(tmp_path)]
    try:
        seen = json_out(py(workdir, f"""
import json, os
seen = {{}}
for path in {[str(p) for p in paths]!r}:
    try:
        with open(path) as f:
            seen[path] = 'read: ' + f.read(20)
    except OSError as e:
        seen[path] = 'visible' if os.path.lexists(path) else 'absent'
procs = [p for p in os.listdir('/proc') if p.isdigit()]
cmdlines = [open(f'/proc/{{p}}/cmdline', 'rb').read().decode(errors='replace') for p in procs]
print(json.dumps({{'paths': seen, 'root': sorted(os.listdir('/')), 'procs': cmdlines}}))
"""))
    finally:
        home_secret.unlink()
    assert seen["paths"] == {str(p): "absent" for p in paths}
    assert seen["root"] == sorted(["bin", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr", "work",
                                   *{Path(d).parts[1] for d in host_module.host().runtime_dirs}])
    assert not any("pytest" in c for c in seen["procs"]) and len(seen["procs"]) <= 3  # init, sh/python


def test_writes_outside_workdir_do_not_reach_the_host(workdir: Path, tmp_path: Path) -> None:
    name = f"sv-sandbox-{uuid.uuid4().hex}"
    outside = tmp_path / "outside"
    outside.mkdir()
    targets = [f"/tmp/{name}", f"/dev/shm/{name}", f"/{name}", f"/usr/{name}", f"/etc/{name}", str(outside / name),
               str(Path.home() / name), f"{sys.base_prefix}/{name}", f"/work/../{name}"]
    seen = json_out(py(workdir, f"""
import json
seen = {{}}
for path in {targets!r}:
    try:
        open(path, 'w').write('escaped')
        seen[path] = 'written'
    except OSError as e:
        seen[path] = e.strerror
print(json.dumps(seen))
"""))
    # the private /tmp and /dev/shm take writes; everything else is read-only or absent
    assert seen[f"/tmp/{name}"] == seen[f"/dev/shm/{name}"] == "written"
    assert all(v != "written" for k, v in seen.items() if not k.startswith(("/tmp/", "/dev/shm/")))
    for target in [*targets, f"/dev/shm/{name}", str(tmp_path / name)]:
        assert not Path(target).exists(), target  # the host sees none of them
    assert sorted(p.name for p in workdir.iterdir()) == ["main.py"]


def test_a_file_larger_than_the_file_limit_is_cut(workdir: Path) -> None:
    result = py(workdir, "try:\n    open('big', 'wb').write(b'x' * (3 << 20))\nexcept OSError as e:\n"
                "    print(e.strerror)\n", file_mb=1)
    assert result.stdout == b"File too large\n"
    assert (workdir / "big").stat().st_size <= 1 << 20


# -- escapes: processes and resources ---------------------------------------------------------------------------
DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # the daemon: no parent, no session, no terminal, no inherited output pipes
        null = os.open('/dev/null', os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        while True:
            with open('/work/heartbeat', 'a') as f:
                f.write('.')
            time.sleep(0.1)
    os._exit(0)
while not os.path.exists('/work/heartbeat') or os.path.getsize('/work/heartbeat') < 3:
    time.sleep(0.05)
if sys.argv[2] == 'spin':
    while True:
        pass
"""


@pytest.mark.parametrize("after", ["exit", "spin"])  # the program exits at once, or runs into the timeout
def test_a_setsid_daemon_is_gone_when_run_returns(workdir: Path, after: str) -> None:
    marker = f"sv-daemon-{uuid.uuid4().hex}"
    result = py(workdir, DAEMON, marker, after, timeout=2)
    assert processes_with(marker) == []  # at once: run waited for the namespace to be empty
    assert result.timed_out == (after == "spin")
    beats = (workdir / "heartbeat").stat().st_size
    assert beats >= 3  # the daemon did run
    time.sleep(0.5)
    assert (workdir / "heartbeat").stat().st_size == beats  # and stopped with the run
    assert processes_with(marker) == []


def test_a_cancelled_run_leaves_nothing_running(workdir: Path) -> None:
    marker = f"sv-cancelled-{uuid.uuid4().hex}"
    (workdir / "main.py").write_text(DAEMON)

    async def cancel() -> None:
        with pytest.raises(TimeoutError):  # the caller gives up first (the sandbox's own timeout is 10 s)
            await asyncio.wait_for(run_async(["python3", "main.py", marker, "spin"], workdir), 1.5)

    asyncio.run(cancel())
    assert processes_with(marker) == []
    assert (workdir / "heartbeat").stat().st_size >= 3


def test_a_fork_bomb_is_bounded_by_the_process_limit_and_the_host_is_fine(workdir: Path) -> None:
    marker = f"sv-forkbomb-{uuid.uuid4().hex}"
    result = py(workdir, """
import os, time
while True:
    try:
        os.fork()
    except OSError:
        count = sum(1 for p in os.listdir('/proc') if p.isdigit())
        fd = os.open('/work/peaks', os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, f'{count}\\n'.encode())
        os.close(fd)
        time.sleep(0.05)
""", marker, timeout=3, max_processes=16)
    assert result.timed_out and result.exit_code == EXIT_TIMEOUT
    assert result.wall_s < 3 + 3
    peaks = [int(n) for n in (workdir / "peaks").read_text().split()]
    assert peaks and max(peaks) <= 16 + 2  # the limit, plus bubblewrap's init (and root mode's own count)
    assert processes_with(marker) == []
    assert run(["true"], workdir).ok  # the host, and the next sandbox, can still start processes


def test_a_fork_bomb_does_not_starve_a_sandbox_beside_it(tmp_path: Path) -> None:
    bomb, honest = tmp_path / "bomb", tmp_path / "honest"
    for d in (bomb, honest):
        d.mkdir()
    (bomb / "main.py").write_text("import os, time\nwhile True:\n    try:\n        os.fork()\n"
                                  "    except OSError:\n        time.sleep(0.05)\n")
    (honest / "main.py").write_text("import subprocess, time\ntime.sleep(0.5)\n"
                                    "print(sum(subprocess.run(['true']).returncode == 0 for _ in range(8)))\n")
    limits = SandboxLimits(timeout=3, max_processes=16)

    async def both() -> list[SandboxResult]:
        return await asyncio.gather(run_async(["python3", "main.py"], bomb, limits),
                                    run_async(["python3", "main.py"], honest, limits))

    bombed, fine = asyncio.run(both())
    assert bombed.timed_out
    assert fine.ok and fine.stdout == b"8\n"  # the limit counts each sandbox's own processes


def test_a_memory_bomb_fails_at_the_memory_limit(workdir: Path) -> None:
    result = py(workdir, "chunks = []\ntry:\n    while True:\n        chunks.append(bytearray(16 << 20))\n"
                "except MemoryError:\n    print(len(chunks) * 16)\n", memory_mb=256, timeout=20)
    assert result.ok and int(result.stdout) < 256  # MemoryError before 256 MiB
    assert result.wall_s < 10


def test_an_infinite_loop_times_out_with_124(workdir: Path) -> None:
    result = py(workdir, "while True:\n    pass\n", timeout=1)
    assert (result.exit_code, result.timed_out, result.killed) == (EXIT_TIMEOUT, True, False)
    assert 1 <= result.wall_s < 1 + 3


def test_the_cpu_limit_kills_with_137(workdir: Path) -> None:
    result = py(workdir, "while True:\n    pass\n", cpu_s=1, timeout=20)
    assert (result.exit_code, result.signal, result.killed, result.timed_out) == (EXIT_KILLED, 9, True, False)
    assert result.wall_s < 10


def test_huge_output_is_cut_at_the_cap_in_bounded_memory(workdir: Path) -> None:
    (workdir / "main.py").write_text("import sys\nfor _ in range(512):\n    sys.stdout.write('o' * 65536)\n"
                                     "    sys.stderr.write('e' * 65536)\n")  # 32 MiB on each stream
    tracemalloc.start()
    try:
        result = run(["python3", "main.py"], workdir, SandboxLimits(output_bytes=65536))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.ok and result.stdout_truncated and result.stderr_truncated
    assert result.stdout == b"o" * 65536 and result.stderr == b"e" * 65536
    assert peak < 4 << 20  # the parent never held the 64 MiB the program wrote


# -- infrastructure failures are not the program's --------------------------------------------------------------
def test_a_program_imitating_a_bubblewrap_failure_is_still_its_own_failure(workdir: Path) -> None:
    result = py(workdir, "import sys\nsys.stderr.write(\"bwrap: Can't find source path /x: No such file\\n\")\n"
                "sys.exit(1)\n")
    assert result.exit_code == 1 and result.stderr.startswith(b"bwrap:")


def test_a_sandbox_that_cannot_start_is_an_infrastructure_error(workdir: Path, monkeypatch) -> None:
    real = run_module.sandbox_command

    def broken(*args, **kwargs) -> list[str]:
        command = real(*args, **kwargs)
        return [command[0], "--ro-bind", "/nonexistent-sv-sandbox", "/x", *command[1:]]

    check_available()
    monkeypatch.setattr(run_module, "sandbox_command", broken)
    with pytest.raises(InfraError) as caught:
        run(["true"], workdir)
    assert caught.value.kind is ErrorKind.SANDBOX and "Can't find source path" in caught.value.message


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    host_module.host.cache_clear()
    run_module.check_available.cache_clear()
    yield
    host_module.host.cache_clear()
    run_module.check_available.cache_clear()


def test_a_missing_bwrap_is_a_clear_error_naming_the_package(fresh_probe: None, workdir: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(workdir))  # bwrap is looked up on PATH
    with pytest.raises(SandboxUnavailable, match=r"apt-get install bubblewrap"):
        run(["true"], workdir)


def test_a_sandbox_that_cannot_start_here_fails_the_probe_with_bwraps_reason(fresh_probe: None, workdir: Path,
                                                                             monkeypatch) -> None:
    real = run_module.sandbox_command
    monkeypatch.setattr(run_module, "sandbox_command", lambda *a, **k: [real(*a, **k)[0], "--no-such-option"])
    with pytest.raises(SandboxUnavailable, match=r"cannot start on this machine: bwrap: Unknown option"):
        run(["true"], workdir)


@pytest.mark.parametrize(("path", "problem"), [
    ("missing", "no such directory"),
    ("main.py", "not a directory"),
    ("/", "the whole host"),
])
def test_the_work_directory_is_checked(workdir: Path, path: str, problem: str) -> None:
    (workdir / "main.py").write_text("")
    with pytest.raises(ConfigError, match=problem):
        run(["true"], workdir / path)


@pytest.mark.skipif(not AS_ROOT, reason="root mode only: a user's sandbox writes as the user, nothing is lent")
def test_root_mode_lends_the_work_directory_and_hands_it_back(workdir: Path, tmp_path: Path) -> None:
    target = tmp_path / "outside-target"  # a host file a planted link points at
    target.write_text("")
    os.chown(target, 4321, 4321)
    (workdir / "theirs.txt").write_text("")
    os.chown(workdir / "theirs.txt", 1234, 1234)
    result = py(workdir, f"""
import os
open('theirs.txt', 'a').write('edited')  # lent: uid 65534 may write it
os.symlink({str(target)!r}, 'link')
os.mkdir('made')
open('made/new.txt', 'w').write('new')
print(os.stat('theirs.txt').st_uid)
""")
    assert result.ok and result.stdout == b"65534\n"
    owners = {p.name: (p.lstat().st_uid, p.lstat().st_gid) for p in [*workdir.rglob("*"), workdir]}
    assert owners == {"work": (0, 0), "main.py": (0, 0), "theirs.txt": (1234, 1234), "link": (0, 0),
                      "made": (0, 0), "new.txt": (0, 0)}
    assert (target.stat().st_uid, target.stat().st_gid) == (4321, 4321)  # the link was not followed
