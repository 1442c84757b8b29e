"""E1's label-preserving rewrites (the ``robust`` split, :mod:`..kits.robust`): the same traffic under other
addresses and at another time.

- ``address_renumbering``: every IPv4 address renumbered by one bijection per item that maps each /24 to another
  /24 of the same kind (an RFC 1918 network to an RFC 1918 network, an Internet one to an Internet one) and keeps
  the host byte; multicast and broadcast addresses, and anything that is not an IPv4 address, stay as they are.
  Which flows share a server, and whether a server is inside the site, are unchanged.
- ``time_shift``: every timestamp moved by the same whole number of days (1 to 400, either way), so intervals and
  the time of day are unchanged.
- ``field_order``, ``timestamp_format``, ``duration_unit``: the same records spelled as other tools write them
  (:mod:`.presentation`): the columns in another order, ISO 8601 times in UTC instead of epoch seconds, durations
  in milliseconds.

The check (:func:`rewrite_problem`): the features the baselines read (:func:`.features.features`) are identical,
so a model that reads what the baselines read has nothing new to go on, and the label, which the generator gave by
what the traffic does, stands; and the prompt, in either style, reads back (:func:`.presentation.read_tables`) into
the same values as the same item in Zeek's layout, so a presentation changes spellings and nothing else.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from security_verifiers.core.types import Item
from security_verifiers.envs.kits.robust import Rewrite
from security_verifiers.envs.network_logs.features import features
from security_verifiers.envs.network_logs.presentation import DEFAULT, presentation, read_tables
from security_verifiers.envs.network_logs.sites import is_internal

_ADDRESS_FIELDS = ("id.orig_h", "id.resp_h")
_DAY = 86_400.0


def _is_ipv4(value: Any) -> bool:
    parts = value.split(".") if isinstance(value, str) else []
    return len(parts) == 4 and all(p.isdigit() and int(p) <= 255 for p in parts)


def _new_prefix(internal: bool, rng: random.Random) -> tuple[int, int, int]:
    if internal:
        return rng.choice(((10, rng.randrange(256), rng.randrange(256)),
                           (172, rng.randrange(16, 32), rng.randrange(256)), (192, 168, rng.randrange(256))))
    while True:
        first = rng.randrange(1, 224)
        prefix = (first, rng.randrange(256), rng.randrange(256))
        if first not in (10, 127, 169, 172, 192) and not is_internal(".".join(map(str, (*prefix, 1)))):
            return prefix


def renumber_addresses(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    prefixes: dict[tuple[int, ...], tuple[int, int, int]] = {}
    used: set[tuple[int, int, int]] = set()

    def renumbered(address: Any) -> Any:
        if not _is_ipv4(address) or int(address.split(".")[0]) >= 224:
            return address
        octets = tuple(int(p) for p in address.split("."))
        old = octets[:3]
        if old not in prefixes:
            new = _new_prefix(is_internal(address), rng)
            while new in used:
                new = _new_prefix(is_internal(address), rng)
            prefixes[old] = new
            used.add(new)
        return ".".join(map(str, (*prefixes[old], octets[3])))

    host = item_input.get("host") or {}
    if "ip" in host:
        host["ip"] = renumbered(host["ip"])
    for flow in [item_input["flow"], *item_input.get("window", [])]:
        for field in _ADDRESS_FIELDS:
            if field in flow:
                flow[field] = renumbered(flow[field])
    return item_input


def shift_time(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    offset = rng.choice((-1, 1)) * rng.randint(1, 400) * _DAY
    for flow in [item_input["flow"], *item_input.get("window", [])]:
        if isinstance(flow.get("ts"), int | float):
            flow["ts"] = round(flow["ts"] + offset, 6)
    return item_input


def _presented(**change: Any) -> Any:
    def apply(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        item_input["presentation"] = {**presentation(item_input), **change}
        return item_input
    return apply


def reorder_fields(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    order = list(DEFAULT["field_order"])
    while order == DEFAULT["field_order"]:
        rng.shuffle(order)
    return _presented(field_order=order)(item_input, rng)


REWRITES = (
    Rewrite("address_renumbering", "every IPv4 address renumbered, /24 by /24, inside to inside and outside to "
            "outside", renumber_addresses),
    Rewrite("time_shift", "every timestamp moved by the same whole number of days", shift_time),
    Rewrite("field_order", "the columns in another order", reorder_fields),
    Rewrite("timestamp_format", "timestamps in ISO 8601 (UTC) instead of epoch seconds",
            _presented(ts_format="iso8601")),
    Rewrite("duration_unit", "durations in milliseconds (the column named duration_ms)",
            _presented(duration_unit="ms")),
)


def _read_back(item: Item, render: Callable[[Item], list[str]]) -> list[tuple[list[str], list[dict[str, Any]]]]:
    """The item's prompts (``render``: the user message in each prompt style) read back into their prose and the
    values of their tables."""
    return [read_tables(text) for text in render(item)]


def rewrite_problem(original: Item, rewritten: Item, render: Callable[[Item], list[str]]) -> str | None:
    before, after = features(original.input), features(rewritten.input)
    if before != after:
        changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        return (f"features {changed[:5]} change ({[before[i] for i in changed[:5]]} -> "
                f"{[after[i] for i in changed[:5]]})")
    if rewritten.input.get("presentation") is not None:
        as_zeek = rewritten.model_copy(update={"input": {**rewritten.input, "presentation": None}})
        if _read_back(rewritten, render) != _read_back(as_zeek, render):
            return "its prompt does not read back into the values it shows in Zeek's layout"
    return None
