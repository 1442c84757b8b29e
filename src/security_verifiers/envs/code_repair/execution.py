"""Run a task's probes against a version of its files (vulnerable, reference fix, or a model's patch), judged from
outside the program.

The host draws what makes one run unguessable (:class:`RunSecrets`: the canary, in a length and alphabet of its own,
the marker name, the probe order, the entropy, and the program's identity: project path, uid, user and host name)
and hands the judge (``judge/driver.py``, in the judge sandbox of ``engines/sandbox/judged.py``) one document: the
program's files, the fixtures with the canary in them, the hidden test module, the probes, the world. The judge
starts the program in a sandbox of its own, calls it from outside, and reports per probe what it observed, live and
replayed as a plain script (:class:`Execution`). Nothing of that document is ever in the program's process or on its
filesystem view; :mod:`.verdict` then decides on the host.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import json
import random
import secrets
import string
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.engines.sandbox import SandboxLimits, check_available
from security_verifiers.engines.sandbox.judged import Identity, JudgeProcess, program_argv
from security_verifiers.engines.sandbox.seccomp import getrandom_enosys
from security_verifiers.envs.code_repair.callers import callers
from security_verifiers.envs.code_repair.program import Program
from security_verifiers.envs.code_repair.sites import site_dir, sites_root

JUDGE_DIR = Path(__file__).with_name("judge")
#: Seconds the program's modules may take to import (these programs import in milliseconds).
IMPORT_S = 1.0
#: Seconds one request to the program may take (a probe that tests a hang has its own, shorter limit).
REQUEST_S = 5.0
#: Times a run is judged again when the judge found that the machine, not the program, failed it (its control
#: command could not start a process either), and the pause before each.
AGAIN = 2
AGAIN_AFTER_S = 1.0
#: Limits of every program sandbox the judge starts.
PROGRAM_LIMITS = SandboxLimits(timeout=3600, cpu_s=10, memory_mb=768, max_processes=32, file_mb=16, open_files=128,
                               output_bytes=512 * 1024, tmp_mb=32)

#: Canary alphabets: a canary's form is drawn per run too, so no shape can be scrubbed from what a program returns.
_ALPHABETS = (string.hexdigits[:16], string.ascii_lowercase + string.digits, string.ascii_uppercase + "234567",
              string.ascii_letters + string.digits, string.ascii_letters + string.digits + "-_",
              string.ascii_lowercase, string.digits + string.ascii_uppercase)


def draw_canary(rng: random.Random) -> str:
    """A secret of 12 to 40 symbols of a random alphabet (hex, base32, base64url, letters...)."""
    alphabet = rng.choice(_ALPHABETS)
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(12, 40)))


@dataclass(frozen=True)
class RunSecrets:
    """What makes one run's effects unguessable: drawn fresh for every run, never stored in an item."""

    canary: str
    marker: str
    order_seed: int
    entropy_seed: int
    identity: Identity

    @classmethod
    def draw(cls) -> RunSecrets:
        rng = random.Random(secrets.randbits(128))
        return cls(canary=draw_canary(rng), marker=rng.choice(("", ".", "_")) + secrets.token_hex(rng.randint(5, 9)),
                   order_seed=rng.getrandbits(32), entropy_seed=rng.getrandbits(64), identity=Identity.draw(rng))


@dataclass
class ProbeRun:
    """One run of one probe: what it returned (``value``), raised, or why there is nothing (``hung``, ``gone``,
    ``diverged``, ``setup_failed``), and the effects seen meanwhile (marker names, changed fixtures, world records)."""

    observation: dict[str, Any]
    effects: dict[str, Any]


@dataclass
class Execution:
    """What one judged run showed, per probe: its live runs and, for exploits, its replays as a plain script."""

    serve: dict[str, list[ProbeRun]]
    script: dict[str, list[ProbeRun]]
    canary: str
    wall_s: float
    setup_error: dict[str, Any] | None = None
    #: Per phase, what showed after the probes: markers of any probe created at any time (``markers``: probe ids)
    #: and the world's internal connections after the last probe (``internal``: a count).
    late: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    judge_stderr: str = ""

    @property
    def import_error(self) -> str | None:
        """The program's own error when its setup (imports, configuration) failed."""
        if self.setup_error is None:
            return None
        return f"{self.setup_error.get('raised')}: {self.setup_error.get('message', '')}"[:500]

    @property
    def timed_out(self) -> bool:
        return any("hung" in r.observation for runs in self.serve.values() for r in runs)


def guarded_paths(program: Program) -> list[str]:
    """The fixtures holding the canary, the directories above them, and the project directory itself: a program that
    deletes, rewrites or re-permissions them blocks an exploit by breaking the test, not the weakness."""
    guarded = {"."}
    for relative, text in program.fixtures.items():
        if "{canary}" not in text:
            continue
        parts = Path(relative).parts
        guarded.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return sorted(guarded)


def phase_budget(program: Program) -> float:
    """Seconds each phase (live, replayed) may spend waiting on the program, in all: a bound on a run, not a verdict
    (each request has its own limit). Four times the program's ``timeout_s``, and twice each probe's hang limit,
    so that a busy machine (which slows every program) or a program that hangs where a hang is tested does not
    exhaust it before the last probe."""
    hangs = sum(p.detect.seconds for p in program.exploits() if p.detect is not None and p.detect.kind == "hang")
    return 4 * program.timeout_s + 2 * hangs


@cache
def _seccomp() -> str:
    return base64.b64encode(getrandom_enosys()).decode()


def control(program: Program, files: Mapping[str, str], run: RunSecrets,
            phases: Sequence[Literal["serve", "script"]] = ("serve", "script"),
            only: Literal["all", "functional"] = "all") -> dict[str, Any]:
    """The judge's whole input for one run."""
    found = check_available()
    sites = [str(site_dir(program.site, program.requirements))] if program.site else []
    # the entropy pipe only where a probe needs it (it is one more thing a patch could tell a test by)
    controlled = any(p.detect is not None and p.detect.kind == "entropy" for p in program.probes)
    argv = program_argv(found, run.identity, PROGRAM_LIMITS, [found.python],
                        entropy="{entropy}" if controlled else None, etc_dir="/run/judge/etc", site_dirs=sites)
    probes = [p for p in program.probes if only == "all" or p.kind == "functional"]
    etc = {name.rsplit("/", 1)[-1]: data.decode() for name, data in run.identity.etc_files().items()}
    etc["hosts"] = "127.0.0.1 localhost\n::1 localhost\n"
    etc["ssl-certs.crt"] = ""
    world = None
    if program.world is not None:
        from security_verifiers.envs.code_repair.world_spec import judge_world

        world, hosts, ca = judge_world(program.world)
        etc["hosts"] += hosts
        etc["ssl-certs.crt"] = ca
    return {
        "identity": vars(run.identity), "argv": argv, "seccomp": _seccomp() if controlled else None,
        "files": dict(files),
        "fixtures": {path: {"text": text.replace("{canary}", run.canary)} for path, text in program.fixtures.items()},
        "guarded": guarded_paths(program), "tests": program.tests,
        "secrets": sorted(path for path, text in program.fixtures.items() if "{canary}" in text),
        "packages": sorted(program.packages()),
        "probes": [{"id": p.id, "kind": p.kind, "detect": p.detect.model_dump(mode="json") if p.detect else None,
                    "hang": p.detect.seconds if p.detect is not None and p.detect.kind == "hang" else None,
                    "runs": 3 if p.detect is not None and p.detect.kind == "entropy" else 1}
                   for p in probes if p.detect is None or p.detect.kind != "static"],
        "order_seed": run.order_seed, "entropy_seed": run.entropy_seed,
        "ctx": {"canary": run.canary, "marker": run.marker},
        "budget_s": phase_budget(program), "import_s": IMPORT_S, "request_s": REQUEST_S,
        "phases": list(phases), "etc": etc, "world": world, "callers": callers(run.order_seed), "site_dirs": sites,
        "t0": time.time(),
    }


@cache
def judge_code() -> Path:
    """The judge's code, compiled: a copy of ``judge/`` with its bytecode, made once per process (the judge sandbox
    shows it read-only, where Python could not write bytecode, and compiling it on every run costs ~10 ms)."""
    import compileall
    import shutil
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="sv-judge-"))
    atexit.register(shutil.rmtree, directory, True)
    for source in JUDGE_DIR.glob("*.py"):
        shutil.copy2(source, directory / source.name)
    if not compileall.compile_dir(str(directory), quiet=2, legacy=False):
        raise InfraError(ErrorKind.SANDBOX, f"the judge's code does not compile ({directory})")
    directory.chmod(0o755)
    for path in directory.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return directory


#: Limits of a judge sandbox (its own process; each program it starts has :data:`PROGRAM_LIMITS`).
JUDGE_LIMITS = SandboxLimits(timeout=3600, cpu_s=3600, memory_mb=1024, max_processes=128, file_mb=64,
                             open_files=512, output_bytes=8 * 1024 * 1024, tmp_mb=64)


class JudgePool:
    """Judge sandboxes kept running, one per thread that judges at a time (``JudgeProcess``): a run takes an idle
    one or starts one, and gives it back unless it failed (then it is closed; the next run starts another)."""

    def __init__(self) -> None:
        self.idle: list[JudgeProcess] = []
        self.lock = threading.Lock()

    def _new(self) -> JudgeProcess:
        extra = [sites_root()] if sites_root().is_dir() else []
        process = JudgeProcess(judge_code(), [check_available().python, "-I", "-S", "-B", "/judge/driver.py"],
                               JUDGE_LIMITS, extra_ro=extra)
        process.sites = extra[0] if extra else None
        return process

    def judge(self, document: bytes, timeout: float, site_dirs: Sequence[str]) -> list[bytes]:
        with self.lock:
            process = self.idle.pop() if self.idle else None
        # a judge shows the site directories' root it found when it started: one that lacks the current one cannot
        # show an item's packages
        if process is not None and (not process.alive or (site_dirs and process.sites != sites_root())):
            process.close()
            process = None
        if process is None:
            process = self._new()
        try:
            lines = process.judge(document, timeout)
        except InfraError:
            process.close()
            raise
        with self.lock:
            self.idle.append(process)
        return lines

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for process in idle:
            process.close()


_POOL = JudgePool()
atexit.register(_POOL.close)


def read_events(stdout: bytes) -> list[dict[str, Any]]:
    events = []
    for line in stdout.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and "event" in event:
            events.append(event)
    return events


def execute(program: Program, files: Mapping[str, str], run: RunSecrets | None = None,
            phases: Sequence[Literal["serve", "script"]] = ("serve", "script"),
            only: Literal["all", "functional"] = "all") -> Execution:
    """Judge ``files`` (a version of ``program``'s modules) once: every probe, live and, for exploits, as a script."""
    run = run or RunSecrets.draw()
    document = control(program, files, run, phases, only)
    started = time.monotonic()
    for attempt in range(1 + AGAIN):
        lines = _POOL.judge(json.dumps(document).encode(), 2 * document["budget_s"] + 60, document["site_dirs"])
        events = read_events(b"\n".join(lines))
        infra = [e for e in events if e["event"] == "infra"]
        if not (infra and infra[0].get("again") and attempt < AGAIN):
            break
        time.sleep(AGAIN_AFTER_S)  # the machine could not start a process: judged again once it had a moment
    if infra:
        raise InfraError(ErrorKind.SANDBOX, f"the judge failed: {infra[0].get('message', '')[-1500:]}")
    if not any(e["event"] == "done" for e in events):
        raise InfraError(ErrorKind.SANDBOX, "the judge ended a run without finishing it")
    execution = Execution(serve={}, script={}, canary=run.canary, wall_s=round(time.monotonic() - started, 4))
    for event in events:
        if event["event"] == "probe":
            runs = [ProbeRun(r["observation"], r["effects"]) for r in event["runs"]]
            (execution.serve if event["phase"] == "serve" else execution.script)[event["probe"]] = runs
        elif event["event"] == "setup":
            execution.setup_error = {k: v for k, v in event.items() if k != "event"}
        elif event["event"] == "late":
            execution.late.append({k: v for k, v in event.items() if k != "event"})
        elif event["event"] == "done":
            execution.stats = event.get("stats", {})
    return execution


async def execute_async(program: Program, files: Mapping[str, str], run: RunSecrets | None = None,
                        phases: Sequence[Literal["serve", "script"]] = ("serve", "script"),
                        only: Literal["all", "functional"] = "all") -> Execution:
    """:func:`execute` from a coroutine (in a thread: judging blocks on the judge's pipes)."""
    return await asyncio.to_thread(execute, program, files, run, phases, only)


def execute_many(jobs: Sequence[tuple[Program, Mapping[str, str]]], parallel: int = 2,
                 phases: Sequence[Literal["serve", "script"]] = ("serve", "script"),
                 only: Literal["all", "functional"] = "all") -> list[Execution | InfraError]:
    """Run several (program, files) pairs, ``parallel`` judges at a time, in the order given. A run whose sandbox
    failed is an :class:`InfraError` in its place; the others still count."""

    def one(job: tuple[Program, Mapping[str, str]]) -> Execution | InfraError:
        try:
            return execute(job[0], job[1], phases=phases, only=only)
        except InfraError as error:
            return error
        except OSError as error:  # the host could not prepare the run: not the program's doing
            return InfraError(ErrorKind.SANDBOX, f"preparing a judged run failed: {error}")

    if not jobs:
        return []
    # the longest first (a program allowed more time takes more: key derivations), so none is left running alone
    # at the end while the other workers idle
    order = sorted(range(len(jobs)), key=lambda k: -jobs[k][0].timeout_s)
    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(jobs)))) as pool:
        done = dict(zip(order, pool.map(one, [jobs[k] for k in order]), strict=True))
    return [done[k] for k in range(len(jobs))]
