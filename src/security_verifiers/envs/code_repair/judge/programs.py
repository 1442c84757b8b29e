"""One judged program running in its own sandbox, as the judge sees it: started, spoken to line by line, timed,
measured and killed from outside.

The command line comes from the host (``engines/sandbox/judged.py``: a nested user and PID namespace, a project
path and uid drawn per run, the entropy pipe at /dev/urandom, ``getrandom`` off); the judge fills in the seccomp
descriptor and the code to run (the serve loop, or a compiled script). The program's PID namespace is a child of the
judge's, so every process the program starts is visible here and nowhere else: the CPU it used is read from
``/proc`` and killing the sandbox's bubblewrap takes all of them down (``--die-with-parent``).
"""

import ast
import os
import select
import signal
import subprocess
import threading
import time

#: What the sandbox's shell prints before it runs the program (engines/sandbox/command.py's START_MARKER).
START_MARKER = b"sv-sandbox:started\n"
#: Longest line read from a program (a reply is cut at 256 KiB by the caller; more is a broken channel).
MAX_LINE = 1 << 20
_TICK_S = 0.005
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
#: How far a starved program's deadline may move: this many times the time it was allowed (plus a second).
STARVED_LIMIT = 4


class Gone(BaseException):
    """The program's process is gone or its channel broke (it exited, crashed, was killed, printed garbage).

    A BaseException: a test's ``except Exception`` must not turn the end of the program into a value."""


class Hung(Gone):
    """A request outlived its deadline; the program was killed."""


class SandboxFailed(Exception):
    """The program's sandbox did not start: the judge's infrastructure, not the program."""


class MachineFailed(SandboxFailed):
    """The machine could not do what a payload needs (start a process) at a moment of the run: likely to pass when
    the run is judged again."""


class Program:
    """One program sandbox running ``code`` (``python -I -B -c code *args``)."""

    def __init__(self, argv_template, seccomp_fd, code, args, entropy, on_wait=None):
        argv = [str(seccomp_fd) if part == "{seccomp_fd}" else part for part in argv_template]
        passed = [seccomp_fd] if seccomp_fd is not None else []
        self.entropy = entropy
        self.on_wait = on_wait
        self.buffer = b""
        self.stderr = bytearray()
        self.started = time.monotonic()
        self.proc = subprocess.Popen([*argv, "-P", "-s", "-S", "-B", "-c", code, *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=passed,
                                     start_new_session=True, close_fds=True)
        self.alive = True
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()

    def _drain_stderr(self):
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self.stderr += chunk
            del self.stderr[:-16384]

    def wait_started(self, deadline):
        """Wait for the sandbox's start marker; SandboxFailed when it never came."""
        while len(self.buffer) < len(START_MARKER):
            chunk = self._read(deadline)
            if chunk is None:
                tail = bytes(self.stderr[-600:]).decode("utf-8", "replace")
                raise SandboxFailed(f"the program's sandbox did not start: {tail}")
            self.buffer += chunk
        if not self.buffer.startswith(START_MARKER):
            raise SandboxFailed(f"the program's sandbox printed {self.buffer[:80]!r} before starting")
        self.buffer = self.buffer[len(START_MARKER):]

    def _read(self, deadline):
        """Some bytes of stdout, or None at end of file or past the deadline (then the program is killed)."""
        fd = self.proc.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, _TICK_S))
            if ready:
                data = os.read(fd, 65536)
                return data or None
            if self.entropy is not None:
                self.entropy.waiting()
            if self.on_wait is not None:
                self.on_wait()

    def send(self, line):
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as error:
            self.kill()
            raise Gone(f"the program's input is closed: {error}") from None

    def read_json(self, deadline, want=None):
        """The next line that is a JSON object (with ``id`` equal to ``want``, when given): the program's output in
        between (a script's prints) is skipped. Raises Hung past the deadline and Gone at end of file.

        The deadline is in the program's own time: the time it spent waiting for a CPU while the machine was busy
        (its run queue delay, from /proc) moves the deadline back, up to :data:`STARVED_LIMIT` times the time allowed.
        A program that computes or sleeps past its limit has hung; one that the machine did not run has not, so a
        loaded machine does not turn a fix into a hang."""
        started, delay = time.monotonic(), self.run_delay()
        cap = started + STARVED_LIMIT * max(deadline - started, 0.0) + 1.0
        while True:
            while b"\n" not in self.buffer:
                if len(self.buffer) > MAX_LINE:
                    self.kill()
                    raise Gone("the program wrote a line of more than 1 MiB on its reply channel")
                chunk = self._read(deadline)
                if chunk is None and time.monotonic() >= deadline and self.alive:
                    moved = min(deadline + self.run_delay() - delay, cap)
                    if moved > time.monotonic():  # starved, not hung: wait for the time it was not run
                        deadline, delay = moved, self.run_delay()
                        continue
                if chunk is None:
                    if time.monotonic() >= deadline:
                        self.kill()
                        raise Hung("no reply before the deadline")
                    raise Gone("the program ended" + self._ended())
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            try:
                message = ast.literal_eval(line.decode("ascii"))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, UnicodeDecodeError):
                continue
            if isinstance(message, dict) and (want is None or message.get("id") == want):
                return message

    def _ended(self):
        """Why the program's reply channel closed, the same on every run: its exit status once it has exited by
        itself (a second at most; a program that closed its output but runs on is killed and said to have closed it)
        and the end of everything it wrote on stderr. Read before the exit, both would depend on timing, and the
        same patch would get two verdict notes."""
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        self.kill()
        self._stderr_thread.join(timeout=1.0)
        tail = bytes(self.stderr[-300:]).decode("utf-8", "replace").strip()
        state = f" (exit status {code})" if code is not None else " (it closed its reply channel)"
        return state + (f": {tail}" if tail else "")

    def run_delay(self):
        """Seconds the program's processes have waited on a run queue (runnable, but not run) so far."""
        mine, _ = self._tree()
        total = 0
        for pid in mine:
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    total += int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[1])
            except (OSError, ValueError, IndexError):
                continue
        return total / 1e9

    def busy(self):
        """Whether the program has more going on than the one thread that answers the caller: other threads, or
        processes it started (its sandbox has bubblewrap, bubblewrap's init and the interpreter)."""
        mine, _ = self._tree()
        threads = 0
        for pid in mine:
            try:
                threads += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                continue
        return len(mine) > 3 or threads > 3

    def _tree(self):
        parents, stats = {}, {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                fields = open(f"/proc/{name}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(name)] = int(fields[1])
            stats[int(name)] = fields
        mine, frontier = set(), {self.proc.pid}
        while frontier:
            mine |= frontier
            frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in mine}
        return mine & set(stats), stats

    def cpu_seconds(self):
        """CPU time used so far by this program's sandbox: every process descending from its bubblewrap (read from
        the judge's /proc: the program's PID namespace is a child of the judge's), reaped children included."""
        mine, stats = self._tree()
        total = 0.0
        for pid in mine:
            fields = stats[pid]
            total += (int(fields[13]) + int(fields[14])) / _CLOCK_TICKS  # children already reaped
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    total += int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[0]) / 1e9
            except (OSError, ValueError, IndexError):
                continue
        return total

    def kill(self, wait=False):
        """Kill the sandbox (its bubblewrap; the kernel then empties its PID namespace). Waiting for it is left to
        :meth:`reap` unless ``wait``: the judge goes on meanwhile."""
        if self.alive:
            self.alive = False
            for send in (lambda: os.killpg(self.proc.pid, signal.SIGKILL), self.proc.kill):
                try:
                    send()
                except (ProcessLookupError, PermissionError):
                    pass
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        if wait:
            self.reap()

    def reap(self):
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
