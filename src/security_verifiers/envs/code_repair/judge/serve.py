"""The caller of a judged program: a request loop in the program's own process, holding nothing secret.

    python -P -s -S -B -c "<this file, its names disguised>" [SITE_DIR ...]

It is how the judge calls the program, as a web framework or a job runner would: one request per line on
stdin (import a module, get or set an attribute, call a function or a method, index, iterate), one reply per
line on the stdout it had at start (the program's own ``print`` goes to stderr). It holds no canary, nonce, probe,
expectation or result of a verdict: every verdict is made by the judge, in another process and namespace, from
what the program returned and from effects the program cannot reach (its files as the kernel reports them, the
requests its network saw, the entropy it read). A program that rewires this loop changes only its own replies,
which it controls anyway.

Values cross as Python literals (``ascii()`` here, ``ast.literal_eval`` in the judge; no json, whose import is a
third of this loop's start-up) of dicts, lists, strings, numbers, booleans and None, with tags for the rest (``$b``
bytes, ``$t`` tuple, ``$p`` path, ``$s`` set, ``$d`` a dict whose keys are not all strings, ``$f`` a non-finite
float); an object that is none of these stays here under a
handle (``$o``: its number, type and repr) that later requests name (``$h``). An exception is a reply too
(``raised``: its type, the names of its classes, its message).

Stdlib only, and no import of the project: this text is sent to the sandbox as it is.
"""

import base64
import importlib
import math
import os
import sys

#: Longest reply line (characters); a longer value comes back cut, as a string that says so.
MAX_REPLY = 262144
_HANDLES = {}  # type: ignore[var-annotated]


class _Ref:
    """A value to reply with as a handle even when it is data (a list or dict the judge will change in place)."""

    def __init__(self, value):
        self.value = value


def _new_handle(value):
    number = len(_HANDLES) + 1
    _HANDLES[number] = value
    return number


def encode(value, depth=0):
    """``value`` as tagged literals; objects that are not data become handles."""
    if depth > 40:
        return {"$o": _new_handle(value), "type": "deep", "repr": "..."}
    if type(value) is _Ref:
        value = value.value
        return {"$o": _new_handle(value), "type": _name(type(value)), "repr": _repr(value), "callable": callable(value)}
    if value is None or isinstance(value, (bool, int, str)):
        return value if type(value) in (bool, int, str) or value is None else _plain(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else {"$f": repr(float(value))}
    if isinstance(value, (bytes, bytearray)):
        return {"$b": base64.b64encode(bytes(value)).decode()}
    if "pathlib" in sys.modules and isinstance(value, sys.modules["pathlib"].PurePath):
        return {"$p": str(value)}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple) and type(value) is tuple:
        return {"$t": [encode(v, depth + 1) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"$s": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: encode(v, depth + 1) for k, v in value.items()}
        return {"$d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, BaseException) or (isinstance(value, type) and issubclass(value, BaseException)):
        kind = value if isinstance(value, type) else type(value)
        return {"$o": _new_handle(value), "type": _name(type(value)), "repr": _repr(value), "exc": _classes(kind)}
    return {"$o": _new_handle(value), "type": _name(type(value)), "repr": _repr(value),
            "callable": callable(value)}


def _plain(value):
    """A subclass of int or str, as its plain value (a named tuple or a str enum is still data)."""
    return int(value) if isinstance(value, int) else str.__str__(value)


def _name(kind):
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', '?')}"


def _repr(value):
    try:
        return repr(value)[:300]
    except BaseException:  # noqa: B902 - a repr that fails is still an object
        return "<unrepresentable>"


def _classes(kind):
    return [{"module": getattr(c, "__module__", "?"), "name": getattr(c, "__qualname__", "?")} for c in kind.__mro__
            if c is not object]


def decode(value):
    """Tagged literals back to values; ``$h`` names a handle."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (tag, inner), = value.items()
        if tag == "$b":
            return base64.b64decode(inner)
        if tag == "$t":
            return tuple(decode(v) for v in inner)
        if tag == "$p":
            import pathlib

            return pathlib.Path(inner)
        if tag == "$s":
            return {decode(v) for v in inner}
        if tag == "$d":
            return {decode(k): decode(v) for k, v in inner}
        if tag == "$f":
            return float(inner)
        if tag == "$h":
            return _HANDLES[inner]
    return {k: decode(v) for k, v in value.items()}


def carry_out(request):
    """Carry out one request; the value to reply with."""
    op = request["op"]
    obj = _HANDLES[request["handle"]] if "handle" in request else None
    if op == "import":
        return importlib.import_module(request["module"])
    if op == "get":
        return getattr(obj, request["name"])
    if op == "ref":
        return _Ref(getattr(obj, request["name"]))
    if op == "set":
        setattr(obj, request["name"], decode(request["value"]))
        return None
    if op == "call":
        function = getattr(obj, request["name"]) if request.get("name") else obj
        return function(*decode(request.get("args", [])), **decode(request.get("kwargs", {})))
    if op == "getitem":
        return obj[decode(request["key"])]
    if op == "setitem":
        obj[decode(request["key"])] = decode(request["value"])
        return None
    if op == "delitem":
        del obj[decode(request["key"])]
        return None
    if op == "list":
        return list(obj)
    if op == "len":
        return len(obj)
    if op == "str":
        return str(obj)
    if op == "contains":
        return decode(request["item"]) in obj
    raise ValueError(f"unknown request {op!r}")


def _reply_text(number, value):
    try:
        text = ascii({"id": number, "ok": encode(value)})
    except (ValueError, TypeError, RecursionError) as error:
        text = ascii({"id": number, "ok": {"$o": _new_handle(value), "type": "unencodable",
                                                "repr": repr(error)[:200]}})
    if len(text) > MAX_REPLY:
        text = ascii({"id": number, "ok": {"$cut": text[:MAX_REPLY]}})
    return text


def _raised_text(number, error):
    try:
        message = str(error)[:4000]
    except BaseException:  # noqa: B902
        message = "<unprintable>"
    return ascii({"id": number, "raised": {"type": _name(type(error)), "classes": _classes(type(error)),
                                           "message": message}})


def _own_channel():
    """The request and reply streams, moved off the standard descriptors: the program (and every command it runs)
    gets an empty stdin, and its prints go to stderr, as under a service manager."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")
    sys.stdout = sys.stderr
    return requests, replies


def serve():
    requests, replies = _own_channel()
    sys.path[:0] = [os.getcwd(), *sys.argv[1:]]
    replies.write(ascii({"ready": True}) + "\n")
    for line in requests:
        try:
            request = eval(line, {"__builtins__": {}}, {})  # noqa: S307 - a literal from the judge
            number = request["id"]
        except Exception:  # noqa: BLE001 - not a request of the judge's: the channel is broken
            break
        try:
            value = carry_out(request)
        except BaseException as error:  # noqa: B902 - SystemExit, KeyboardInterrupt from the program are replies too
            text = _raised_text(number, error)
        else:
            text = _reply_text(number, value)
        replies.write(text + "\n")


if __name__ == "__main__":
    serve()
