"""The judge of one E3 run: it sets up the program's world, runs the task's test module against the program from
outside, and reports what it observed. Runs in the judge sandbox (``engines/sandbox/judged.py``):

    python3 -I -B /judge/driver.py   < control document (JSON)   > observations (JSON lines)

What it does, in order:

1. Writes the program's files and fixtures into ``/work`` (the program's project directory, at a path drawn per
   run), generates the program's /etc (who it is, its host names, its CA bundle), opens the entropy pipe, watches
   ``/work`` for created names, and starts the world's servers if the task has a network (``world.py``).
2. Runs the test module's top level (its *setup*) against a live program (``serve.py`` in a program sandbox), with
   the program's packages importable as proxies (``remote.py``). Every request is recorded.
3. Runs each probe (``probe_<id>(ctx)``) in a random order against the live program and reports its observation
   (the value it returned, or what the program raised, or that the program hung or was gone) with the effects seen
   meanwhile (marker names created, the world's records, changed fixtures). A program that hung or died is killed and
   a fresh one started, its setup replayed, for the next probe. A probe marked ``runs: 3`` (fresh entropy) runs in
   three fresh programs, fed the same bytes, the same bytes, and other bytes at its own steps.
4. Replays each exploit probe whose effect did not already show against a *plain script* compiled from what the
   probe asked (``remote.ScriptCaller``), in a fresh program: the way a user would call the program, with no request
   loop in its process. Its observation and effects are reported too; the host counts an exploit when either run
   shows it, or when the program answered the two callers differently.
5. When an exploit that shows itself by a marker left none, runs a control command (a shell started as the payloads
   start theirs, in a fresh program holding none of the judged code): if its marker does not show either, the
   machine failed the run (no process could be started) and the run is an infrastructure error, judged again by the
   host, instead of a blocked exploit.

The judge decides nothing: the host compares the observations with the expectations it kept (``verdict.py``). All
the judge's secrets (the canary, the marker names, the test code) stay in this process and namespace.
"""

import base64
import builtins
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import entropy  # noqa: E402
import markers  # noqa: E402
import programs  # noqa: E402
import remote  # noqa: E402

WORK = "/work"
PRIVATE = "/run/judge"
#: The code of a program that will run a script: it reads the script (its length, a newline, the text) from stdin,
#: then runs it as its main module. It is started ahead, while the live program is probed, and holds nothing.
LOADER = """import os
def _read(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            raise SystemExit(0)
        data += chunk
    return data
_size = b""
while not _size.endswith(b"\\n"):
    _size += _read(1)
exec(compile(_read(int(_size)).decode(), "<script>", "exec"))
"""
#: The modes of the directories the judge shares with its programs, restored after every run: a program that made
#: its project directory unwritable would otherwise make every later run's payloads unable to leave a marker there.
MODES = {WORK: 0o755, "/tmp": 0o1777, PRIVATE: 0o755}
#: Seconds a program may go on working after a phase's last probe before it is killed (see ``Judge.late``).
GRACE_S = 0.5
#: Longest observation kept (characters of JSON), as before the judge moved out.
MAX_OBSERVATION = 65536
#: Seconds the control command may take (see ``Judge.control``): a loaded machine is slow, not broken.
CONTROL_S = 20.0


def _load(program, script):
    """Give a program running :data:`LOADER` the script it will run (its length, a newline, the text)."""
    data = script.encode()
    program.proc.stdin.write(f"{len(data)}\n".encode() + data)
    program.proc.stdin.flush()


def emit(event):
    sys.stdout.write(json.dumps(event, default=repr, ensure_ascii=True) + "\n")
    sys.stdout.flush()


def _state(path):
    try:
        st = os.lstat(path)
        content = b""
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as handle:
                content = handle.read()
        return [st.st_mode, base64.b64encode(content).decode()]
    except OSError:
        return None


class Judge:
    def __init__(self, control):
        self.c = control
        self.root = control["identity"]["root"]
        self.probes = {p["id"]: p for p in control["probes"]}
        self.serve_code = control["callers"]["serve"]
        self.encoder = control["callers"]["encoder"]
        self.trace = remote.Trace()
        self.program = None
        self.caller = None
        self.deadline = 0.0
        self.request_limit = control["request_s"]
        self.current = None  # (probe id, variant, block start) while a probe runs
        self.world = None
        self.launches = 0
        self.spare = None
        self.killed = []
        #: Exploit probes whose marker showed (in a probe's window or late), "?" names included.
        self.marked = set()
        self.control_spare = None
        boot = round(1000 * (time.time() - control.get("t0", 0)), 1)
        self.stats = {"launches": 0, "scripts": 0, "ms": {"boot": boot}}
        self.t0 = time.monotonic()

    # -- setting up -------------------------------------------------------------------------------------------------
    def prepare(self):
        for relative, text in self.c["files"].items():
            self._write(relative, text.encode())
        for relative, spec in self.c["fixtures"].items():
            self._write(relative, base64.b64decode(spec["b64"]) if "b64" in spec else spec["text"].encode())
        self.guarded = {path: _state(os.path.join(WORK, path)) for path in self.c.get("guarded", [])}
        self.work_mode = os.stat(WORK).st_mode
        etc = os.path.join(PRIVATE, "etc")
        os.makedirs(etc, exist_ok=True)
        for name, text in self.c["etc"].items():
            with open(os.path.join(etc, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        self.watch = markers.Watch(WORK)
        self.watch.watch_opens([os.path.join(WORK, path) for path in self.c.get("secrets", [])])
        self.seccomp = None
        if self.c.get("seccomp"):  # this program's entropy is controlled (a fresh-entropy probe)
            self.seccomp = os.memfd_create("seccomp", 0)
            os.write(self.seccomp, base64.b64decode(self.c["seccomp"]))
        if self.c.get("world"):
            import world

            self.world = world.World(self.c["world"])
            self.world.start()

    def _write(self, relative, data):
        path = os.path.join(WORK, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)

    def tampered(self):
        """The canary fixtures a program changed, and its project directory when it changed that directory's mode
        (made unwritable, no payload's marker could be created there)."""
        changed = [path for path, state in self.guarded.items() if _state(os.path.join(WORK, path)) != state]
        if os.stat(WORK).st_mode != self.work_mode:
            changed.append(".")
        return sorted(changed)

    # -- programs -----------------------------------------------------------------------------------------------------
    def _next_deadline(self, op="call"):
        """When the next request must be answered: an import within ``import_s`` (these programs import in
        milliseconds), a request of a probe that tests a hang within its limit, any other within ``request_s``;
        none after the run's budget."""
        limit = self.c["import_s"] if op == "import" else self.request_limit
        if self.current is not None and self.probes[self.current[0]].get("hang"):
            limit = self.probes[self.current[0]]["hang"]
        return min(self.deadline, time.monotonic() + limit)

    def _entropy_key(self, step):
        if step < self.trace.setup_end or self.current is None:
            return ("setup", step)
        probe, variant, start = self.current
        return (f"{probe}:{variant}", step - start)

    def _start(self, code):
        """A new program sandbox running ``code``, with an entropy pipe of its own (not yet the current program)."""
        self.launches += 1
        feed = None
        if self.seccomp is not None:
            feed = entropy.Entropy(os.path.join(PRIVATE, f"entropy-{self.launches}"), self.c["entropy_seed"])
            feed.begin("start", 0)
            os.lseek(self.seccomp, 0, os.SEEK_SET)
        argv = [feed.path if part == "{entropy}" else part for part in self.c["argv"]]
        program = programs.Program(argv, self.seccomp, code, self.c.get("site_dirs", []), feed)
        self.stats["launches"] = self.launches
        try:
            program.wait_started(time.monotonic() + 30)
        except programs.SandboxFailed:
            program.kill()
            raise
        return program

    def _launch(self, code):
        self.kill()
        self.program = self._start(code)
        return self.program

    def _script_program(self, script):
        """A program running ``script``: the one started ahead (see :meth:`prepare_script`), or a new one."""
        self.kill()
        program, self.spare = self.spare or self._start(LOADER), None
        self.program = program
        try:
            _load(program, script)
        except (OSError, ValueError):
            program.kill()
            raise programs.Gone("the script's program closed its input") from None
        return program

    def prepare_script(self, probe_id):
        """Start the program that will run a script now, while the live program is being probed; and, for an exploit
        shown by a marker, the one that may run the control command (see :meth:`control`)."""
        if self.spare is None and "script" in self.c["phases"]:
            self.spare = self._start(LOADER)
        if self.control_spare is None and (self.probes[probe_id].get("detect") or {}).get("kind") == "marker":
            self.control_spare = self._start(LOADER)

    def serve(self, fresh=False):
        """A live program with the setup done: the current one, or a new one."""
        live = self.program is not None and self.program.alive and isinstance(self.caller, remote.ServeCaller)
        if live and not fresh:
            return self.caller
        program = self._launch(self.serve_code)
        self.mark("launched")
        program.read_json(min(self.deadline, time.monotonic() + self.c["import_s"] + 5))  # {"ready": true}
        if program.entropy is not None:
            program.entropy.drain()
        self.mark("ready")
        self.caller = remote.ServeCaller(program, self.trace, self._entropy_key, self._next_deadline)
        remote.ACTIVE[0] = self.caller
        self.caller.replay(self.trace.setup_end)
        return self.caller

    def kill(self):
        if self.program is not None:
            self.program.kill()
            self.killed.append(self.program)
            self.program = None

    def close(self):
        self.kill()
        for spare in (self.spare, self.control_spare):
            if spare is not None:
                spare.kill()
                self.killed.append(spare)
        self.spare = self.control_spare = None
        for program in self.killed:
            program.reap()
            if program.entropy is not None:
                program.entropy.close()

    def program_cpu(self):
        """CPU seconds the running program has used so far (all its processes), read from outside."""
        return self.program.cpu_seconds() if self.program is not None else 0.0

    # -- the test module --------------------------------------------------------------------------------------------
    def load_tests(self):
        packages = set(self.c["packages"])
        real_import = builtins.__import__

        def program_import(name, globals=None, locals=None, fromlist=(), level=0):
            if level == 0 and name.split(".")[0] in packages:
                module = remote.ACTIVE[0].request({"op": "import", "module": name})
                if fromlist or "." not in name:
                    return module
                return remote.ACTIVE[0].request({"op": "import", "module": name.split(".")[0]})
            return real_import(name, globals, locals, fromlist, level)

        names = dict(vars(builtins))
        names["__import__"] = program_import
        self.namespace = {"__name__": "tests", "__builtins__": names, "ROOT": self.root, "WORK": WORK, "TMP": "/tmp",
                          "world": self.world, "program_cpu": self.program_cpu, "method_call": remote.method_call,
                          "ref": remote.ref, "program_module": remote.program_module,
                          "Gone": programs.Gone}
        code = compile(self.c["tests"], "<tests>", "exec")
        self.deadline = time.monotonic() + self.c["budget_s"]
        try:
            self.serve()
            exec(code, self.namespace)
            self.trace.setup_end = len(self.trace.steps)
            return None
        except programs.SandboxFailed:
            raise
        except BaseException as error:  # noqa: B902 - the program's import, or the setup, failed: every probe fails
            self.trace.setup_end = len(self.trace.steps)
            return {"raised": type(error).__name__, "message": str(error)[:4000],
                    "gone": isinstance(error, programs.Gone), "program": isinstance(error, remote.RemoteError)}

    # -- probes -------------------------------------------------------------------------------------------------------
    def ctx(self, probe_id):
        return {"canary": self.c["ctx"]["canary"], "marker": f"{self.root}/{self.c['ctx']['marker']}-{probe_id}",
                "root": self.root, "work": self.root, "tmp": "/tmp"}

    def observe(self, probe_id, variant, caller_for, block_start=None, block_end=None):
        """Run one probe once: its observation and the effects seen while it ran. ``block_start`` is None against a
        live program (the probe's requests extend the trace) and the recorded block's first step against a script."""
        function = self.namespace.get("probe_" + probe_id)
        began = time.monotonic()
        seen = len(self.watch.poll())
        opened = len(self.watch.opened)
        records = self.world.mark() if self.world else 0
        start = len(self.trace.steps) if block_start is None else block_start
        try:
            caller = caller_for()
            start = len(self.trace.steps) if block_start is None else block_start
            self.current = (probe_id, variant, start)
            observation = {"value": function(self.ctx(probe_id))}
            if isinstance(caller, remote.ScriptCaller) and caller.pending and caller.pending[0] < block_end:
                caller.program.kill()
                observation = {"diverged": "the probe asked the script less than it asked the live program"}
        except programs.Hung:
            observation = {"hung": True}
        except remote.Diverged as error:
            observation = {"diverged": str(error)}
        except programs.Gone as error:
            observation = {"gone": str(error)[:500]}
        except programs.SandboxFailed:
            raise
        except BaseException as error:  # noqa: B902 - what the program raised and the probe did not catch
            observation = {"raised": type(error).__name__, "message": str(error)[:4000],
                           "program": isinstance(error, remote.RemoteError)}
        finally:
            self.current = None
        text = json.dumps(observation, default=repr, ensure_ascii=True, sort_keys=True)
        observation = {"truncated": text[:MAX_OBSERVATION]} if len(text) > MAX_OBSERVATION else json.loads(text)
        marker = f"{self.c['ctx']['marker']}-{probe_id}"
        made = sorted({n for n in self.watch.poll()[seen:] if n == marker})
        if made or self.watch.overflowed:
            self.marked.add(probe_id)
        read = sorted({os.path.relpath(p, WORK) for p in self.watch.opened[opened:]})
        effects = {"markers": made or (["?"] if self.watch.overflowed else []), "secrets_read": read,
                   "tampered": self.tampered()}
        if self.world:
            effects["world"] = self.world.since(records)
        end = len(self.trace.steps) if block_start is None else None
        key = f"{probe_id}{'' if block_start is None else ' (script)'}"
        self.stats.setdefault("probe_ms", {})[key] = round(1000 * (time.monotonic() - began), 1)
        return {"observation": observation, "effects": effects}, (start, end)

    def run_probe(self, probe):
        """The probe against the live program (three fresh ones for a fresh-entropy probe)."""
        runs, blocks = [], []
        for run in range(probe.get("runs", 1)):
            if self.setup_error is not None:
                runs.append({"observation": {"setup_failed": True, **self.setup_error},
                             "effects": {"markers": [], "tampered": []}})
                continue
            fresh = probe.get("runs", 1) > 1
            result, block = self.observe(probe["id"], "v1" if run == 2 else "v0",
                                         lambda fresh=fresh: self.serve(fresh=fresh))
            runs.append(result)
            blocks.append(block)
        return runs, blocks

    def replay(self, todo):
        """The exploit probes of ``todo`` (id -> recorded block) again, against plain scripts compiled from what they
        asked the live program: one script for all of them, a new one (of the rest) after a run that broke. A
        fresh-entropy probe gets three scripts of its own."""
        order = list(todo)
        while order:
            probe = self.probes[order[0]]
            group = [order[0]] if probe.get("runs", 1) > 1 else \
                [p for p in order if self.probes[p].get("runs", 1) == 1]
            steps = list(range(self.trace.setup_end)) + [s for p in group for s in range(*todo[p])]
            script = remote.compile_script(self.trace, steps, self.encoder, self.c["order_seed"] + 1)
            results = {p: [] for p in group}
            for run in range(probe.get("runs", 1)):
                pending = list(group)
                while pending:
                    self.stats["scripts"] += 1
                    rest = list(range(self.trace.setup_end)) + [s for p in pending for s in range(*todo[p])]
                    program = self._script_program(script if pending == group else remote.compile_script(
                        self.trace, rest, self.encoder, self.c["order_seed"] + 1))
                    self.caller = remote.ScriptCaller(program, self.trace, steps, self._entropy_key,
                                                      self._next_deadline)
                    self.caller.pending = list(range(self.trace.setup_end)) + [s for p in pending
                                                                                for s in range(*todo[p])]
                    remote.ACTIVE[0] = self.caller
                    try:
                        self.caller.run_setup(self.trace.setup_end)
                    except programs.Gone as error:
                        for p in pending:
                            results[p].append({"observation": {"gone": f"setup: {str(error)[:300]}"},
                                               "effects": {"markers": [], "tampered": self.tampered()}})
                        break
                    seen = len(self.watch.poll())
                    while pending and self.program is not None and self.program.alive:
                        probe_id = pending.pop(0)
                        start, end = todo[probe_id]
                        self.caller.pending = [s for s in self.caller.pending if s >= start]
                        result, _ = self.observe(probe_id, "v1" if run == 2 else "v0", lambda: self.caller,
                                                 block_start=start, block_end=end)
                        results[probe_id].append(result)
                    self.late("script", seen, self.world.mark() if self.world else 0)
                    self.kill()
            for probe_id in group:
                emit({"event": "probe", "probe": probe_id, "phase": "script", "runs": results[probe_id]})
                order.remove(probe_id)

    def control(self, unmarked):
        """An exploit that shows itself by a marker left none: prove that this run could have shown one, or fail it.

        A payload's marker comes from a shell it starts (``os.system``, ``popen``, a pickle's ``system``): when the
        machine cannot start a process at that moment (no memory for a fork, the process table full) the shell never
        runs, the program reports an ordinary error, and a vulnerable program would read as repaired. So a fresh
        program, holding none of the judged code, starts the shell the same way in the project directory; if its
        marker does not show either, the run is the machine's failure (``SandboxFailed``, an infrastructure error for
        the host, which runs it again), never a blocked exploit. The program under judgement does not run in the
        check; what it can leave behind in its directory that would fail it (an unwritable mode) is tampering, and a
        run that shows tampering skips the check."""
        self.kill()
        name = f"{self.c['ctx']['marker']}~control"
        seen = len(self.watch.poll())
        program, self.control_spare = self.control_spare or self._start(LOADER), None
        self.program = program
        try:
            _load(program, f"import os\nos.system({f'touch {self.root}/{name}'!r})\n")
            program.proc.stdin.close()
            program.proc.wait(timeout=CONTROL_S)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        self.kill()
        if name not in self.watch.poll()[seen:]:
            raise programs.MachineFailed(
                f"no marker of {', '.join(unmarked)} showed, and the control command could not create one either: the "
                "machine could not start a process (memory, process limits) or the watch failed; the run says nothing "
                "of the program")

    # -- the run ------------------------------------------------------------------------------------------------------
    def mark(self, what):
        self.stats["ms"][what] = round(1000 * (time.monotonic() - self.t0), 1)

    def late(self, phase, seen, records):
        """After a phase's last probe: let the program finish what it deferred (while it has other threads or
        processes than the one that answers, at most :data:`GRACE_S`), then report each marker created at any time
        of the phase (an exploit whose effect a thread of the program performed later, inside another probe's
        window or after the last) and the world's internal connections made after the last probe."""
        if self.program is not None and self.program.alive:
            end = time.monotonic() + GRACE_S
            while time.monotonic() < end and self.program.busy():
                time.sleep(0.02)
        names = set(self.watch.poll()[seen:])
        markers = sorted(p for p in self.probes if f"{self.c['ctx']['marker']}-{p}" in names)
        self.marked.update(markers)
        late = {"event": "late", "phase": phase, "markers": markers}
        if self.world:
            self.world.sync()
            late["internal"] = len([r for r in self.world.since(records) if r.get("internal")])
        emit(late)

    def run(self):
        self.mark("start")
        self.prepare()
        self.mark("prepared")
        self.setup_error = self.load_tests()
        self.mark("setup")
        if self.setup_error is not None:
            emit({"event": "setup", **self.setup_error})
        order = [p["id"] for p in self.c["probes"]]
        random.Random(self.c["order_seed"]).shuffle(order)
        blocks = {}
        seen = len(self.watch.poll())
        for probe_id in order:
            runs, blocks[probe_id] = self.run_probe(self.probes[probe_id])
            emit({"event": "probe", "probe": probe_id, "phase": "serve", "runs": runs})
            if self.probes[probe_id]["kind"] == "exploit":
                if settled(self.probes[probe_id], runs, self.c["ctx"]):
                    blocks[probe_id] = []
                elif self.setup_error is None:
                    self.prepare_script(probe_id)
        self.late("serve", seen, self.world.mark() if self.world else 0)
        self.kill()
        self.mark("serve")
        if "script" in self.c["phases"] and self.setup_error is None:
            self.deadline = time.monotonic() + self.c["budget_s"]
            self.replay({p: blocks[p][0] for p in order if self.probes[p]["kind"] == "exploit" and blocks[p]})
        self.mark("script")
        unmarked = [p for p in order if self.probes[p]["kind"] == "exploit"
                    and (self.probes[p].get("detect") or {}).get("kind") == "marker" and p not in self.marked]
        if unmarked and self.setup_error is None and not self.tampered():  # tampering: every exploit counts anyway
            self.control(unmarked)
            self.mark("control")
        self.close()
        emit({"event": "done", "stats": self.stats})


def settled(probe, runs, ctx):
    """Whether the live run already shows the exploit plainly (no need to replay it as a script): the program hung,
    was gone, created the marker, changed a guarded fixture, returned the canary as it is, or the value the probe
    reports an exploit with. The host decides in any case; this only saves a replay."""
    detect = probe.get("detect") or {}
    for run in runs:
        observation, effects = run["observation"], run["effects"]
        if any(k in observation for k in ("hung", "gone", "setup_failed", "diverged", "truncated")):
            return True
        if effects.get("markers") or effects.get("tampered"):
            return True
        if detect.get("kind") == "equals" and observation.get("value") == detect.get("value"):
            return True
        if detect.get("kind") == "contains" and ctx["canary"].lower() in json.dumps(observation).lower():
            return True
    return False


def judge_one(control):
    judge = Judge(control)
    try:
        judge.run()
    except programs.SandboxFailed as error:
        emit({"event": "infra", "message": str(error), "again": isinstance(error, programs.MachineFailed)})
    except BaseException:  # noqa: B902 - the judge's own failure is an infrastructure error, reported whole
        import traceback

        emit({"event": "infra", "message": traceback.format_exc()[-3000:]})
    finally:
        judge.close()


def _read_exactly(fd, n):
    data = bytearray()
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


def _empty(directory):
    """Remove everything a run left in ``directory`` (the judge may: it is uid 0 of the namespace that owns it)."""
    import shutil

    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if os.path.isdir(path) and not os.path.islink(path):
            for root, dirs, _files in os.walk(path):
                for entry in dirs:
                    try:
                        os.chmod(os.path.join(root, entry), 0o700)
                    except OSError:
                        pass
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def main():
    """Judge documents one after another: each is ``<length>\\n<JSON>`` on stdin, judged in a child process of its
    own; a line ``{"event": "end"}`` follows the child's events. The directories it shares with the programs are
    emptied between runs."""
    while True:
        size = b""
        try:
            while not size.endswith(b"\n"):
                size += _read_exactly(0, 1)
            document = _read_exactly(0, int(size))
        except (EOFError, ValueError):
            return
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            try:
                judge_one(json.loads(document))
                sys.stdout.flush()
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            emit({"event": "infra", "message": f"the judge's run ended with status {status}"})
        for directory in (WORK, "/tmp", PRIVATE):
            _empty(directory)
            os.chmod(directory, MODES[directory])  # a program may have changed its project directory's mode
        emit({"event": "end"})


if __name__ == "__main__":
    main()
