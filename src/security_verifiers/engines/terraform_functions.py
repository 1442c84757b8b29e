"""Terraform's built-in functions that a file alone determines, with Terraform's semantics.

Only pure functions are here: their result follows from their arguments. Functions that read the host
(``file``, ``templatefile``), the clock (``timestamp``) or randomness (``uuid``, ``bcrypt``) are absent on
purpose: the evaluator treats any function it does not know as an unknown value, never as a guess.

A function raises :class:`TerraformError` where Terraform would refuse the configuration (a string that
does not convert to a bool, an index out of range); the evaluator records that as an invalid file.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import re
from collections.abc import Callable
from typing import Any


class TerraformError(ValueError):
    """What Terraform itself would reject at plan time (a type error, a bad argument)."""


# --------------------------------------------------------------------------------------------- conversions
def to_bool(value: Any) -> bool:
    """Terraform's conversion to bool: a bool, or exactly the strings "true" / "false".

    >>> to_bool("true"), to_bool(False)
    (True, False)
    >>> to_bool("TRUE")
    Traceback (most recent call last):
    ...
    security_verifiers.engines.terraform_functions.TerraformError: a bool is required, got string "TRUE"
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("true", "false"):
        return value == "true"
    raise TerraformError(f"a bool is required, got {describe(value)}")


def to_number(value: Any) -> int | float:
    """Terraform's conversion to number: a number, or a string holding a decimal number."""
    if isinstance(value, bool) or value is None:
        raise TerraformError(f"a number is required, got {describe(value)}")
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text):
            number = float(text)
            return int(number) if number.is_integer() and re.fullmatch(r"-?\d+", text) else number
    raise TerraformError(f"a number is required, got {describe(value)}")


def to_string(value: Any) -> str:
    """Terraform's conversion to string (templates and string arguments): primitives only, never null."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number_text(value)
    raise TerraformError(f"a string is required, got {describe(value)}")


def number_text(number: int | float) -> str:
    """A number as Terraform prints it: ``2`` not ``2.0``."""
    if isinstance(number, float):
        if math.isinf(number) or math.isnan(number):
            raise TerraformError("numbers must be finite")
        if number.is_integer() and abs(number) < 2**63:
            return str(int(number))
        return repr(number)
    return str(number)


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"bool {'true' if value else 'false'}"
    if isinstance(value, str):
        return f'string "{value[:40]}"'
    if isinstance(value, int | float):
        return f"number {number_text(value)}"
    if isinstance(value, list):
        return "a list"
    return "an object"


def normalise_number(number: int | float) -> int | float:
    """Integral results stay integers (Terraform has one number type; checks compare with ints)."""
    if isinstance(number, float) and number.is_integer() and abs(number) < 2**63:
        return int(number)
    return number


# --------------------------------------------------------------------------------------------- JSON
def _json_value(value: Any) -> Any:
    if isinstance(value, float):
        return normalise_number(value)
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in sorted(value.items())}
    return value


def jsonencode(value: Any) -> str:
    """Terraform's ``jsonencode``: compact, object keys sorted, ``<``, ``>`` and ``&`` escaped as Go does."""
    text = json.dumps(_json_value(value), separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def jsondecode(text: Any) -> Any:
    try:
        return json.loads(to_string(text))
    except json.JSONDecodeError as err:
        raise TerraformError(f"jsondecode: invalid JSON: {err.msg}") from err


# --------------------------------------------------------------------------------------------- networks
def cidrsubnet(prefix: Any, newbits: Any, netnum: Any) -> str:
    """``cidrsubnet("10.0.0.0/16", 8, 2)`` = ``"10.0.2.0/24"``; ``cidrsubnet("0.0.0.0/0", 0, 0)`` = ``"0.0.0.0/0"``."""
    try:
        network = ipaddress.ip_network(to_string(prefix), strict=False)
    except ValueError as err:
        raise TerraformError(f"cidrsubnet: invalid prefix: {err}") from err
    bits, number = int(to_number(newbits)), int(to_number(netnum))
    new_prefix = network.prefixlen + bits
    if bits < 0 or new_prefix > network.max_prefixlen or not 0 <= number < 2**bits:
        raise TerraformError("cidrsubnet: the new subnet does not fit in the prefix")
    size = 2 ** (network.max_prefixlen - new_prefix)
    address = int(network.network_address) + number * size
    return f"{ipaddress.ip_address(address) if network.version == 4 else ipaddress.IPv6Address(address)}/{new_prefix}"


def cidrhost(prefix: Any, hostnum: Any) -> str:
    try:
        network = ipaddress.ip_network(to_string(prefix), strict=False)
    except ValueError as err:
        raise TerraformError(f"cidrhost: invalid prefix: {err}") from err
    number = int(to_number(hostnum))
    if number < 0:
        number += network.num_addresses
    if not 0 <= number < network.num_addresses:
        raise TerraformError("cidrhost: host number out of range")
    return str(network.network_address + number)


def cidrnetmask(prefix: Any) -> str:
    try:
        return str(ipaddress.IPv4Network(to_string(prefix), strict=False).netmask)
    except ValueError as err:
        raise TerraformError(f"cidrnetmask: {err}") from err


# --------------------------------------------------------------------------------------------- strings
def _format(spec: Any, *args: Any) -> str:
    """``format`` with the verbs configs use: %s, %d, %v, %q, %%, %f (width/precision flags are rare: refused)."""
    text = to_string(spec)
    out: list[str] = []
    values = list(args)
    i = 0
    while i < len(text):
        char = text[i]
        if char != "%":
            out.append(char)
            i += 1
            continue
        verb = text[i + 1: i + 2]
        i += 2
        if verb == "%":
            out.append("%")
            continue
        if verb not in ("s", "d", "v", "q", "f") or not values:
            raise TerraformError(f"format: unsupported verb or missing argument at %{verb}")
        value = values.pop(0)
        if verb == "d":
            out.append(str(int(to_number(value))))
        elif verb == "f":
            out.append(f"{float(to_number(value)):f}")
        elif verb == "q":
            out.append(json.dumps(to_string(value)))
        else:
            out.append(to_string(value) if not isinstance(value, list | dict) else jsonencode(value))
    return "".join(out)


def _replace(text: Any, search: Any, replacement: Any) -> str:
    text, search, replacement = to_string(text), to_string(search), to_string(replacement)
    if len(search) > 1 and search.startswith("/") and search.endswith("/"):
        try:
            pattern = re.compile(search[1:-1])
        except re.error as err:
            raise TerraformError(f"replace: invalid regular expression: {err}") from err
        return pattern.sub(re.sub(r"\$\{?(\d+)\}?", r"\\\1", replacement), text)
    return text.replace(search, replacement)


def _substr(text: Any, offset: Any, length: Any) -> str:
    value, start, count = to_string(text), int(to_number(offset)), int(to_number(length))
    if start < 0:
        start += len(value)
    if not 0 <= start <= len(value):
        raise TerraformError("substr: offset out of range")
    return value[start:] if count < 0 else value[start:start + count]


def _base64decode(text: Any) -> str:
    try:
        return base64.b64decode(to_string(text), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as err:
        raise TerraformError(f"base64decode: {err}") from err


# --------------------------------------------------------------------------------------------- collections
def _list(value: Any, name: str) -> list[Any]:
    if isinstance(value, list):
        return value
    raise TerraformError(f"{name}: a list is required, got {describe(value)}")


def _map(value: Any, name: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    raise TerraformError(f"{name}: a map or object is required, got {describe(value)}")


def _element(items: Any, index: Any) -> Any:
    values = _list(items, "element")
    if not values:
        raise TerraformError("element: the list is empty")
    return values[int(to_number(index)) % len(values)]


def _lookup(mapping: Any, key: Any, *default: Any) -> Any:
    values = _map(mapping, "lookup")
    name = to_string(key)
    if name in values:
        return values[name]
    if default:
        return default[0]
    raise TerraformError(f"lookup: no key {name!r} and no default")


def _merge(*maps: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mapping in maps:
        if mapping is not None:
            out.update(_map(mapping, "merge"))
    return out


def _flatten(items: Any) -> list[Any]:
    out: list[Any] = []
    for item in _list(items, "flatten"):
        out.extend(_flatten(item) if isinstance(item, list) else [item])
    return out


def _coalesce(*values: Any) -> Any:
    for value in values:
        if value is not None and value != "":
            return value
    raise TerraformError("coalesce: no non-null, non-empty argument")


def _distinct(items: Any) -> list[Any]:
    out: list[Any] = []
    for item in _list(items, "distinct"):
        if item not in out:
            out.append(item)
    return out


def _toset(items: Any) -> list[Any]:
    """Sets are unordered in Terraform; a sorted list of distinct elements is what a check can read."""
    values = _distinct(items)
    try:
        return sorted(values, key=lambda v: (str(type(v)), v))
    except TypeError:
        return values


def _slice(items: Any, start: Any, end: Any) -> list[Any]:
    values = _list(items, "slice")
    first, last = int(to_number(start)), int(to_number(end))
    if not 0 <= first <= last <= len(values):
        raise TerraformError("slice: indices out of range")
    return values[first:last]


def _range(*args: Any) -> list[int | float]:
    numbers = [to_number(a) for a in args]
    start, stop, step = (0, numbers[0], 1) if len(numbers) == 1 else (numbers[0], numbers[1],
                                                                       numbers[2] if len(numbers) > 2 else 1)
    if step == 0 or abs((stop - start) / step) > 1024:
        raise TerraformError("range: too many elements")
    out = []
    value = start
    while (step > 0 and value < stop) or (step < 0 and value > stop):
        out.append(normalise_number(value))
        value += step
    return out


def _one(items: Any) -> Any:
    values = _list(items, "one")
    if len(values) > 1:
        raise TerraformError("one: the list has more than one element")
    return values[0] if values else None


def _index(items: Any, value: Any) -> int:
    values = _list(items, "index")
    if value not in values:
        raise TerraformError("index: the value is not in the list")
    return values.index(value)


def _zipmap(keys: Any, values: Any) -> dict[str, Any]:
    names, items = _list(keys, "zipmap"), _list(values, "zipmap")
    if len(names) != len(items):
        raise TerraformError("zipmap: lists of different lengths")
    return {to_string(k): v for k, v in zip(names, items, strict=True)}


def _length(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list | dict):
        return len(value)
    raise TerraformError(f"length: a string, list or map is required, got {describe(value)}")


def _tomap(value: Any) -> dict[str, Any]:
    return dict(_map(value, "tomap"))


def _tonumber(value: Any) -> int | float | None:
    return None if value is None else to_number(value)


def _tostring(value: Any) -> str | None:
    return None if value is None else to_string(value)


def _tobool(value: Any) -> bool | None:
    return None if value is None else to_bool(value)


def _minmax(pick: Callable[..., Any]) -> Callable[..., Any]:
    def call(*values: Any) -> Any:
        if not values:
            raise TerraformError("at least one number is required")
        return pick(to_number(v) for v in values)

    return call


#: name -> implementation (arguments are evaluated, known values).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lower": lambda s: to_string(s).lower(),
    "upper": lambda s: to_string(s).upper(),
    "title": lambda s: to_string(s).title(),
    "trimspace": lambda s: to_string(s).strip(),
    "trim": lambda s, chars: to_string(s).strip(to_string(chars)),
    "trimprefix": lambda s, p: to_string(s).removeprefix(to_string(p)),
    "trimsuffix": lambda s, p: to_string(s).removesuffix(to_string(p)),
    "chomp": lambda s: to_string(s).rstrip("\r\n"),
    "strrev": lambda s: to_string(s)[::-1],
    "startswith": lambda s, p: to_string(s).startswith(to_string(p)),
    "endswith": lambda s, p: to_string(s).endswith(to_string(p)),
    "strcontains": lambda s, p: to_string(p) in to_string(s),
    "replace": _replace,
    "split": lambda sep, s: to_string(s).split(to_string(sep)) if to_string(sep) else list(to_string(s)),
    "join": lambda sep, *lists: to_string(sep).join(to_string(v) for items in lists for v in _list(items, "join")),
    "format": _format,
    "substr": _substr,
    "base64encode": lambda s: base64.b64encode(to_string(s).encode()).decode(),
    "base64decode": _base64decode,
    "jsonencode": jsonencode,
    "jsondecode": jsondecode,
    "length": _length,
    "concat": lambda *lists: [v for items in lists for v in _list(items, "concat")],
    "coalesce": _coalesce,
    "coalescelist": lambda *lists: next((items for items in lists if _list(items, "coalescelist")), []),
    "compact": lambda items: [v for v in _list(items, "compact") if v not in (None, "")],
    "contains": lambda items, v: v in _list(items, "contains"),
    "distinct": _distinct,
    "element": _element,
    "flatten": _flatten,
    "index": _index,
    "keys": lambda m: sorted(_map(m, "keys")),
    "values": lambda m: [v for _, v in sorted(_map(m, "values").items())],
    "lookup": _lookup,
    "merge": _merge,
    "range": _range,
    "reverse": lambda items: list(reversed(_list(items, "reverse"))),
    "slice": _slice,
    "sort": lambda items: sorted(to_string(v) for v in _list(items, "sort")),
    "toset": _toset,
    "tolist": lambda items: list(_list(items, "tolist")),
    "tomap": _tomap,
    "tostring": _tostring,
    "tonumber": _tonumber,
    "tobool": _tobool,
    "one": _one,
    "sum": lambda items: normalise_number(sum(to_number(v) for v in _list(items, "sum"))),
    "zipmap": _zipmap,
    "min": _minmax(min),
    "max": _minmax(max),
    "abs": lambda n: abs(to_number(n)),
    "ceil": lambda n: math.ceil(to_number(n)),
    "floor": lambda n: math.floor(to_number(n)),
    "parseint": lambda s, base: int(to_string(s), int(to_number(base))),
    "cidrsubnet": cidrsubnet,
    "cidrhost": cidrhost,
    "cidrnetmask": cidrnetmask,
}
