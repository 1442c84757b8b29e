"""What a capture records: the resolution of its timestamps and the conn fields it lacks.

Real datasets are not Zeek's conn.log: CIC-IDS-2017 writes its timestamps to the minute and has no service
or history, UNSW-NB15's raw files count whole seconds and have no history, and the ML-ready CSVs of both
have no timestamps or addresses at all. Every item carries its capture's description,
``{"ts_resolution": seconds or None, "unrecorded": [fields]}``, so that what needs finer timing than the
capture has, or a field it lacks, is marked unavailable (features become NaN, the prompt says so) instead
of being computed from placeholder values.
"""

from __future__ import annotations

import math
from typing import Any

#: The fields of a conn record, in the order the prompt shows them.
FIELDS = ("ts", "id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "proto", "service", "duration",
          "orig_bytes", "resp_bytes", "conn_state", "history", "orig_pkts", "resp_pkts")
#: Intervals between connections are read only from captures whose clock is at least this fine (seconds):
#: a flood's or a page load's connections come well under a second apart.
FINE_TIMING_S = 0.01
#: Zeek's conn.log (the generator and IoT-23): microsecond timestamps, every field.
ZEEK: dict[str, Any] = {"ts_resolution": 1e-06, "unrecorded": []}


def capture(item_input: dict[str, Any]) -> dict[str, Any]:
    """The item's capture description; items without one are from before it existed, an error."""
    value = item_input.get("capture")
    if not isinstance(value, dict) or set(value) != {"ts_resolution", "unrecorded"}:
        raise ValueError("item input lacks its capture description {'ts_resolution': ..., 'unrecorded': [...]}")
    return value


def timing_known(item_input: dict[str, Any]) -> bool:
    """Whether intervals between this host's connections can be read from the timestamps."""
    resolution = capture(item_input)["ts_resolution"]
    return resolution is not None and resolution <= FINE_TIMING_S


def recorded(item_input: dict[str, Any], field: str) -> bool:
    return field not in capture(item_input)["unrecorded"]


def prompt_notes(item_input: dict[str, Any]) -> list[str]:
    """What the prompt says about a capture that records less than Zeek does (nothing for Zeek captures).

    >>> prompt_notes({"capture": {"ts_resolution": 60.0, "unrecorded": ["service", "history"]}})[1]
    'This capture does not record service, history: they are shown as -.'
    """
    cap, notes = capture(item_input), []
    resolution = cap["ts_resolution"]
    if resolution is None:
        notes.append("This capture has no timestamps (ts is shown as -): the connections are in the capture's "
                     "order and the time between them is unknown.")
    elif resolution > FINE_TIMING_S:
        notes.append(f"This capture's timestamps are rounded down to {resolution:g} s: connections in the same "
                     f"{resolution:g} s are listed in capture order, and shorter intervals between connections "
                     "are unknown.")
    missing = [f for f in cap["unrecorded"] if f != "ts"]
    if missing:
        notes.append(f"This capture does not record {', '.join(missing)}: they are shown as -.")
    return notes


#: What a loader writes for a field its dataset lacks (and what :func:`coarsened` writes too).
PLACEHOLDERS: dict[str, Any] = {"ts": None, "id.orig_h": "unknown", "id.orig_p": 0, "id.resp_h": "unknown",
                                "id.resp_p": 0, "service": None, "history": ""}


def coarsened(item_input: dict[str, Any], resolution: float | None, unrecorded: tuple[str, ...]) -> dict[str, Any]:
    """The item's input as a coarser capture would have recorded it: timestamps rounded down to
    ``resolution`` (``None``: no timestamps) and the ``unrecorded`` fields replaced by their placeholders.

    Used to train baselines for real captures (the generator writes Zeek-like items only)."""
    def flow(f: dict[str, Any]) -> dict[str, Any]:
        out = {**f, **{k: PLACEHOLDERS[k] for k in unrecorded}}
        if resolution is None:
            out["ts"] = None
        elif "ts" not in unrecorded:
            out["ts"] = round(math.floor(f["ts"] / resolution) * resolution, 6)
        return out

    missing = sorted(set(unrecorded) | ({"ts"} if resolution is None else set()), key=FIELDS.index)
    return {**item_input, "flow": flow(item_input["flow"]), "window": [flow(w) for w in item_input["window"]],
            "capture": {"ts_resolution": resolution, "unrecorded": missing}}
