"""Run a task's probes against a version of its files (vulnerable, reference fix, or a model's patch) in the sandbox.

The host prepares a fresh work directory per run: the task's files under ``src/``, the fixtures (with this run's
canary), and, after the files, the driver and the hidden test module in a directory of their own with
``run.json`` (nonce, canary, marker name, probe order, all random per run). A patch has already been applied
and checked by then, so it can neither change the tests nor add a file the interpreter would pick up. The
sandbox runs ``python -I -B driver.py``; the host then reads the observations (lines with the nonce) and
checks the work directory for the marker file, and :mod:`.verdict` decides.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import shutil
import tempfile
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.engines.sandbox import SandboxLimits, run_async, sandbox_python
from security_verifiers.envs.code_repair.program import Program

T = TypeVar("T")
#: Seconds the program's modules (and the test module) may take to import: these programs import in milliseconds.
IMPORT_S = 1.0
DRIVER = Path(__file__).with_name("sandbox_driver.py")
#: Resource limits of one run besides its wall-clock timeout (the program's own ``timeout_s``).
LIMITS = dict(cpu_s=10, memory_mb=768, max_processes=32, file_mb=16, open_files=128, output_bytes=512 * 1024,
              tmp_mb=32)


@dataclass(frozen=True)
class RunSecrets:
    """What makes one run's effects unguessable: drawn fresh for every run, never stored in an item."""

    nonce: str
    canary: str
    marker: str
    order_seed: int

    @classmethod
    def draw(cls) -> RunSecrets:
        return cls(nonce=secrets.token_hex(12), canary="cn" + secrets.token_hex(10),
                   marker="mk" + secrets.token_hex(8), order_seed=secrets.randbits(32))


@dataclass
class Execution:
    """What one run showed: observations by probe id, which probes' marker files appeared, how the sandbox ended."""

    observations: dict[str, dict[str, Any]]
    markers_created: list[str]  # the marker probes whose own marker file exists after the run
    canary: str
    exit_code: int
    timed_out: bool
    wall_s: float
    import_error: str | None = None
    finished: bool = False
    #: Canary fixtures (or directories above them) the program deleted, changed or re-permissioned.
    tampered: list[str] = field(default_factory=list)
    stderr_tail: str = ""


def _write(base: Path, relative: str, text: str) -> None:
    path = base / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def prepare(workdir: Path, program: Program, files: Mapping[str, str], run: RunSecrets) -> list[str]:
    """Fill ``workdir`` for one run; returns the sandbox command."""
    for relative, text in files.items():
        _write(workdir / "src", relative, text)
    for relative, text in program.fixtures.items():
        _write(workdir, relative, text.replace("{canary}", run.canary))
    rundir_name = "run_" + secrets.token_hex(6)
    tests_module = "t_" + secrets.token_hex(6)
    rundir = workdir / rundir_name
    rundir.mkdir()
    shutil.copyfile(DRIVER, rundir / "driver.py")
    (rundir / f"{tests_module}.py").write_text(program.tests, encoding="utf-8")
    order = [p.id for p in program.probes]
    random.Random(run.order_seed).shuffle(order)
    inside = "/work"
    ctx = {"canary": run.canary, "marker": f"{inside}/{run.marker}", "work": inside}
    hang = {p.id: p.detect.seconds for p in program.exploits() if p.detect is not None and p.detect.kind == "hang"}
    (rundir / "run.json").write_text(json.dumps({
        "nonce": run.nonce, "order": order, "ctx": ctx, "hang": hang, "src": f"{inside}/src", "import_s": IMPORT_S,
        "tests_module": tests_module}), encoding="utf-8")
    return [sandbox_python(), "-I", "-B", f"{inside}/{rundir_name}/driver.py", f"{inside}/{rundir_name}"]


def read_observations(stdout: bytes, nonce: str) -> dict[str, dict[str, Any]]:
    """The first observation per probe among the lines that carry the run's nonce."""
    found: dict[str, dict[str, Any]] = {}
    prefix = nonce + "\t"
    for raw in stdout.decode("utf-8", "replace").splitlines():
        if not raw.startswith(prefix):
            continue
        parts = raw.split("\t", 2)
        if len(parts) != 3 or parts[1] in found:
            continue
        try:
            value = json.loads(parts[2])
        except ValueError:
            continue
        if isinstance(value, dict):
            found[parts[1]] = value
    return found


async def execute_async(program: Program, files: Mapping[str, str], run: RunSecrets | None = None) -> Execution:
    """Run every probe of ``program`` against ``files`` once, in a fresh sandbox and work directory."""
    run = run or RunSecrets.draw()
    with tempfile.TemporaryDirectory(prefix="sv-code-repair-") as tmp:
        workdir = Path(tmp)
        command = prepare(workdir, program, files, run)
        guarded = _guarded_state(workdir, program)
        limits = SandboxLimits(timeout=program.timeout_s, **LIMITS)
        result = await run_async(command, workdir, limits)
        markers = [p.id for p in program.exploits() if p.detect is not None and p.detect.kind == "marker"
                   and ((workdir / f"{run.marker}-{p.id}").exists() or (workdir / f"{run.marker}-{p.id}").is_symlink())]
        tampered = [path for path, state in guarded.items() if _state(workdir / path) != state]
    observations = read_observations(result.stdout, run.nonce)
    imported = observations.pop("__import__", None)
    finished = observations.pop("__done__", None) is not None
    import_error = None if imported is None else f"{imported.get('raised')}: {imported.get('message', '')}"[:500]
    return Execution(observations=observations, markers_created=markers, canary=run.canary,
                     exit_code=result.exit_code, timed_out=result.timed_out, wall_s=result.wall_s,
                     import_error=import_error, finished=finished, tampered=sorted(tampered),
                     stderr_tail=result.stderr.decode("utf-8", "replace")[-800:])


def _state(path: Path) -> tuple[int, bytes] | None:
    """A path's type and permission bits, and a file's content; None when it is gone."""
    try:
        st = path.lstat()
        return st.st_mode, path.read_bytes() if path.is_file() and not path.is_symlink() else b""
    except OSError:
        return None


def _guarded_state(workdir: Path, program: Program) -> dict[str, tuple[int, bytes] | None]:
    """The fixtures that hold the canary and the directories above them, as they are before the run: a program
    that deletes, rewrites, re-permissions or replaces them (with a link) blocks an exploit by breaking the test,
    not the weakness, and the run's exploits then count as successful."""
    guarded: dict[str, tuple[int, bytes] | None] = {}
    for relative, text in program.fixtures.items():
        if "{canary}" not in text:
            continue
        parts = Path(relative).parts
        for depth in range(1, len(parts) + 1):
            path = "/".join(parts[:depth])
            guarded[path] = _state(workdir / path)
    return guarded


def _run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion from synchronous code: in this thread when no event loop runs here, else in a
    thread of its own (a scorer called from inside a coroutine must not need one of its own)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def execute(program: Program, files: Mapping[str, str], run: RunSecrets | None = None) -> Execution:
    """:func:`execute_async` for synchronous callers."""
    return _run_sync(execute_async(program, files, run))


def execute_many(jobs: Sequence[tuple[Program, Mapping[str, str]]], parallel: int = 2) -> list[Execution | InfraError]:
    """Run several (program, files) pairs, ``parallel`` sandboxes at a time, in the order given. A run whose sandbox
    failed (or whose preparation did) is an :class:`InfraError` in its place; the others still count."""

    async def all_runs() -> list[Execution | InfraError]:
        gate = asyncio.Semaphore(parallel)

        async def one(program: Program, files: Mapping[str, str]) -> Execution | InfraError:
            async with gate:
                try:
                    return await execute_async(program, files)
                except InfraError as error:
                    return error
                except OSError as error:  # the host could not prepare the run: not the program's doing
                    return InfraError(ErrorKind.SANDBOX, f"preparing a sandboxed run failed: {error}")

        return list(await asyncio.gather(*(one(p, f) for p, f in jobs)))

    return _run_sync(all_runs())
