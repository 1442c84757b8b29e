"""The driver that runs one E3 task's probes inside the sandbox (standard library only; copied in, never imported).

    python -I -B driver.py RUNDIR

It reads ``RUNDIR/run.json`` (written by the host for this run only) and deletes it before any code of the task
is imported, so the run's nonce, canary and probe order are in this function's locals only. It then imports the
hidden test module (which imports the task's modules), calls each ``probe_<id>(ctx)`` in the given order, and
writes one line per probe to a copy of stdout taken before the task's code ran::

    NONCE <TAB> PROBE_ID <TAB> {"value": ...} | {"raised": "TypeError", "message": "..."} | {"hung": true}

The host keeps the first line per probe that carries the nonce; what the task's code prints has no nonce and is
ignored. The driver judges nothing: the host compares the observations with the expectations it kept.
Importing the program may take ``import_s`` seconds (an alarm ends it then). Probes listed under ``hang`` run in a
forked child that is killed after their limit (a regular expression
stuck in C cannot be interrupted in-process).
"""

import json
import os
import select
import signal
import sys
import time

#: Longest observation kept (characters of JSON); the rest is cut, and the observation says so.
MAX_OBSERVATION = 65536


def _observe(call, ctx):
    try:
        value = call(dict(ctx))
    except BaseException as error:  # noqa: B902 - SystemExit and KeyboardInterrupt from the task are observations too
        return {"raised": type(error).__name__, "message": str(error)[:4000]}
    return {"value": value}


def _encode(observation, dumps):
    try:
        text = dumps(observation, ensure_ascii=True, sort_keys=True, default=repr)
    except (ValueError, TypeError, RecursionError) as error:
        text = dumps({"unencodable": repr(error)[:200]})
    if len(text) > MAX_OBSERVATION:
        text = dumps({"truncated": text[:MAX_OBSERVATION]})
    return text


def _isolated(call, ctx, seconds, dumps, clock):
    """Run one probe in a forked child and wait at most ``seconds`` for its observation."""
    read_end, write_end = os.pipe()
    started = clock()
    pid = os.fork()
    if pid == 0:  # the child: observe, send, and leave without running any cleanup of the task
        os.close(read_end)
        data = _encode(_observe(call, ctx), dumps).encode()
        try:
            while data:
                data = data[os.write(write_end, data):]
        finally:
            os._exit(0)
    os.close(write_end)
    received = bytearray()
    deadline = started + seconds
    while True:
        left = deadline - clock()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_end)
            return {"hung": True}
        ready, _, _ = select.select([read_end], [], [], left)
        if ready:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            received += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    try:
        return json.loads(received.decode()) if received else {"raised": "ChildExited", "message": ""}
    except ValueError:
        return {"raised": "ChildExited", "message": "unreadable observation"}


def main():
    rundir = sys.argv[1]
    path = os.path.join(rundir, "run.json")
    with open(path, encoding="utf-8") as handle:
        run = json.load(handle)
    os.unlink(path)
    nonce, order, ctx, hang = run["nonce"], run["order"], run["ctx"], run["hang"]
    out = os.dup(1)
    write, dumps, clock = os.write, json.dumps, time.perf_counter

    def emit(probe_id, text):
        data = f"{nonce}\t{probe_id}\t{text}\n".encode()
        try:
            while data:
                data = data[write(out, data):]
        except OSError:
            pass

    def too_slow(signum, frame):
        raise TimeoutError(f"importing the program took more than {run['import_s']} s")

    sys.path[:0] = [run["src"], rundir]
    signal.signal(signal.SIGALRM, too_slow)  # a program that sleeps or spins at import fails now, not at the timeout
    signal.setitimer(signal.ITIMER_REAL, run["import_s"])
    try:
        tests = __import__(run["tests_module"])
    except BaseException as error:  # noqa: B902 - an import that exits or fails is reported, then nothing runs
        signal.setitimer(signal.ITIMER_REAL, 0)
        emit("__import__", dumps({"raised": type(error).__name__, "message": str(error)[:4000]}))
        return
    signal.setitimer(signal.ITIMER_REAL, 0)
    for probe_id in order:
        call = getattr(tests, "probe_" + probe_id)
        probe_ctx = dict(ctx, marker=ctx["marker"] + "-" + probe_id)  # each probe's own marker: effects are its own
        if probe_id in hang:
            observation = _isolated(call, probe_ctx, hang[probe_id], dumps, clock)
        else:
            observation = _observe(call, probe_ctx)
        emit(probe_id, _encode(observation, dumps))
    emit("__done__", "{}")


if __name__ == "__main__":
    main()
