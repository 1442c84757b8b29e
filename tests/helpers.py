"""Scripted policies and hand-made items shared by the tests."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from security_verifiers.core.datasets import write_jsonl
from security_verifiers.core.types import Completion, Item, Message, ToolCall

FLOW = {"ts": 1.0, "id.orig_h": "10.0.0.5", "id.orig_p": 5555, "id.resp_h": "10.0.0.9", "id.resp_p": 23,
        "proto": "tcp", "service": None, "duration": None, "orig_bytes": 0, "resp_bytes": 0,
        "conn_state": "S0", "history": "S", "orig_pkts": 1, "resp_pkts": 0}


def e1_item(i: int, label: str = "Malicious", split: str = "test") -> Item:
    flow = {**FLOW, "ts": float(i)}
    return Item(id=f"nl-test{i:04d}", split=split,
                input={"host": {"ip": "10.0.0.5", "role": "iot_camera"}, "flow": flow, "window": [],
                       "capture": {"ts_resolution": 1e-06, "unrecorded": []}},
                target={"label": label, "family": "telnet_bruteforce" if label == "Malicious" else "benign_dns",
                        "p_malicious": 1.0 if label == "Malicious" else 0.0})


def e1_data_file(path: Path, n: int, mixed: bool = True) -> Path:
    """A dataset file of ``n`` E1 items at ``path`` (every third one Benign when ``mixed``, else all Malicious)."""
    write_jsonl([e1_item(i, "Malicious" if not mixed or i % 3 else "Benign") for i in range(n)], path)
    return path


class ScriptedPolicy:
    """A policy whose reply is a function of the item; it may also raise or sleep, to simulate endpoints."""

    def __init__(self, reply: Callable[[Item], Any], name: str = "scripted", delay: float = 0.0) -> None:
        self.reply = reply
        self.name = name
        self.delay = delay
        self.calls = 0

    def describe(self) -> dict[str, Any]:
        return {"kind": "scripted", "name": self.name}

    async def respond(self, item: Item, messages: list[Message], tools: Any, sample: int) -> Completion:
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        out = self.reply(item)
        if isinstance(out, Exception):
            raise out
        if isinstance(out, Completion):
            return out
        return Completion(text=out if isinstance(out, str) else json.dumps(out))


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "c1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))


def figure_problems(fig: Any) -> list[str]:
    """What makes a report figure hard to read: an axis without a label (an x axis whose tick labels are hidden,
    the upper panel of a shared x, needs none), or a legend drawn over an axes' plotting area. Empty when fine."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for number, ax in enumerate(fig.axes):
        if not ax.get_ylabel():
            problems.append(f"axes {number}: no y label")
        if not ax.get_xlabel() and any(t.get_visible() and t.get_text() for t in ax.get_xticklabels()):
            problems.append(f"axes {number}: no x label")
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for number, ax in enumerate(fig.axes):
            if box.overlaps(ax.get_window_extent(renderer)):
                problems.append(f"a legend covers axes {number}")
    return problems


def assert_recorded_values_kept(before: Any, after: Any, where: str) -> None:
    """Every value the fixture recorded is still there and exactly equal. Keys added to the metrics since (the
    constant floor, intervals of more metrics, each breakdown row's reward interval and small-group flag) are report
    additions, not changed arithmetic; a key that disappeared or a value that moved fails."""
    if isinstance(before, dict):
        assert isinstance(after, dict), where
        for k, value in before.items():
            assert k in after, f"{where}: {k} is gone"
            assert_recorded_values_kept(value, after[k], f"{where}.{k}")
    else:
        assert after == before, where


@contextmanager
def served(env: str, *args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``sv serve ENV --port 0`` in a subprocess: (its URL, the process); stopped with SIGTERM on exit unless the
    caller stopped it (to read its last words through ``process.communicate``)."""
    proc = subprocess.Popen([sys.executable, "-m", "security_verifiers.cli", "serve", env, "--port", "0", *args],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = ""
        while "listening on" not in line:
            line = proc.stderr.readline()
            assert line, "sv serve exited before listening"
        match = re.search(r"http://\S+", line)
        assert match is not None
        yield match.group(0), proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
