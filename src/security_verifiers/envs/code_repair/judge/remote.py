"""The judge's side of calling a judged program: proxies for its modules and objects, its exceptions as classes, and
the two callers the same test code can drive.

A test module is ordinary Python run by the judge. ``import shop.cart as cart`` there gives a proxy (an
:class:`Remote`); ``cart.TAX = 7`` sets the attribute in the program, ``cart.total(...)`` calls it, and what comes back
is data (numbers, strings, lists, dicts, bytes, tuples, paths) or another proxy. An exception raised in the program is
raised here as a class named like the program's (``type(error).__name__`` reads the same), subclassing the built-in
exception it derives from, so ``except FileNotFoundError`` and ``except shop.cart.Declined`` work as in-process code.

Every request is a *step* of a trace (:class:`Trace`). A proxy names its object by where it came from (the step that
returned it and the path inside that value), never by the program's handle number, so the same test code can run
against either caller:

* :class:`ServeCaller`: the serve loop (``serve.py``) in a live program, which takes any request;
* :class:`ScriptCaller`: a plain Python script compiled from a recorded trace (imports, attribute sets, calls, in
  order; no request loop, no serve code), which a fresh program runs one statement at a time. Replaying a probe
  against it checks that the probe asks exactly what it asked before; if the program's answers lead the probe
  elsewhere, the program behaved differently under the two callers (:class:`Diverged`).
"""

import base64
import builtins
import json
import math
import sys

import programs

#: The caller proxies talk to (set by the driver).
ACTIVE = [None]
_EXCEPTIONS = {}


class Diverged(programs.Gone):
    """A replayed probe asked the script something the live run never asked: the program answered differently."""


class RemoteError:
    """Mixin of every exception class that stands for a program's exception."""

    remote_module = ""
    remote_name = ""

    def __str__(self):
        return self.args[0] if self.args else ""


def exception_class(classes):
    """The local class of a program's exception type, given its classes from its own down (``serve._classes``):
    named like the program's, under the program's classes of its chain, above the first built-in one."""
    chain, base = [], Exception
    for entry in classes:
        if entry["module"] == "builtins":
            found = getattr(builtins, entry["name"], None)
            if isinstance(found, type) and issubclass(found, BaseException):
                base = found
                break
        else:
            chain.append(entry)
    made = _local(("builtins", base.__qualname__), base)
    for entry in reversed(chain):
        made = _local((entry["module"], entry["name"]), made)
    return made


def _local(key, parent):
    if key not in _EXCEPTIONS:
        bases = (parent,) if issubclass(parent, RemoteError) else (parent, RemoteError)
        _EXCEPTIONS[key] = type(key[1].rsplit(".", 1)[-1], bases,
                                {"remote_module": key[0], "remote_name": key[1], "__qualname__": key[1]})
    return _EXCEPTIONS[key]


class Remote:
    """A proxy of one object of the program, named by its origin: ``(step, path)``."""

    __slots__ = ("_origin", "_type", "_repr", "_callable")

    def __init__(self, origin, kind="?", text="", is_callable=True):
        object.__setattr__(self, "_origin", origin)
        object.__setattr__(self, "_type", kind)
        object.__setattr__(self, "_repr", text)
        object.__setattr__(self, "_callable", is_callable)

    def _ask(self, op, **fields):
        return ACTIVE[0].request(dict(op=op, handle=self, **fields))

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._ask("get", name=name)

    def __setattr__(self, name, value):
        self._ask("set", name=name, value=value)

    def __call__(self, *args, **kwargs):
        return self._ask("call", args=list(args), kwargs=kwargs)

    def __getitem__(self, key):
        return self._ask("getitem", key=key)

    def __setitem__(self, key, value):
        self._ask("setitem", key=key, value=value)

    def __delitem__(self, key):
        self._ask("delitem", key=key)

    def __iter__(self):
        return iter(self._ask("list"))

    def __len__(self):
        return self._ask("len")

    def __contains__(self, item):
        return self._ask("contains", item=item)

    def __str__(self):
        return self._ask("str")

    def __enter__(self):
        return self._ask("call", name="__enter__", args=[], kwargs={})

    def __exit__(self, *exc):
        return self._ask("call", name="__exit__", args=[None, None, None], kwargs={})

    def __repr__(self):
        return f"<program {self._type}: {self._repr}>"

    def __eq__(self, other):
        return isinstance(other, Remote) and other._origin == self._origin

    def __hash__(self):
        return hash(self._origin)


def ref(obj, name):
    """The attribute ``name`` of a program object as a proxy, even when it is data: ``ref(signup, "pending").clear()``
    empties the program's list, where ``signup.pending.clear()`` would empty a copy."""
    return ACTIVE[0].request(dict(op="ref", handle=obj, name=name))


def program_module(name):
    """Any module as the program sees it (``program_module("os").environ["KEY"] = "v"``, ``...("datetime")``)."""
    return ACTIVE[0].request({"op": "import", "module": name})


def method_call(obj, name):
    """``obj.name(...)`` as one request (a proxy's ``getattr`` then a call would be two)."""
    return lambda *args, **kwargs: ACTIVE[0].request(dict(op="call", handle=obj, name=name, args=list(args),
                                                          kwargs=kwargs))


# -- values ---------------------------------------------------------------------------------------------------------
class _Traced:
    """A string, number or bytes the program returned, still knowing where it came from (its origin). Sent back to
    the program as it is, it is named by its origin in the trace, so the script replays it as the script's own
    value of that origin: a token the program drew at random and the test hands back is the same token in either
    caller's run, not a literal of the first."""

    _origin = None

    def __reduce__(self):  # pickled by a test (inside a payload), it is the plain value
        return (self.__class__.__mro__[2], (self.__class__.__mro__[2](self),))


class TracedStr(_Traced, str):
    pass


class TracedInt(_Traced, int):
    pass


class TracedBytes(_Traced, bytes):
    pass


def _traced(kind, value, origin):
    made = kind(value)
    made._origin = origin
    return made


def encode(value):
    """A judge-side value as tagged JSON for the program (proxies by origin); anything else is an error: callables,
    spies and other objects of the judge never cross."""
    if isinstance(value, _Traced):
        step, path = value._origin
        return {"$r": [step, list(path)], "v": encode(value.__class__.__mro__[2](value))}
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"$f": repr(value)}
    if isinstance(value, Remote):
        return {"$h": list(value._origin)}
    if type(value) in (bytes, bytearray):
        return {"$b": base64.b64encode(bytes(value)).decode()}
    if "pathlib" in sys.modules and isinstance(value, sys.modules["pathlib"].PurePath):
        return {"$p": str(value)}
    if type(value) is list:
        return [encode(v) for v in value]
    if type(value) is tuple:
        return {"$t": [encode(v) for v in value]}
    if type(value) in (set, frozenset):
        return {"$s": [encode(v) for v in value]}
    if type(value) is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"$d": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"a test cannot send {type(value).__name__} to the program (only data and program objects)")


def decode(value, step, path=()):
    """A reply's tagged JSON as judge-side values; objects become proxies named ``(step, path)``."""
    if isinstance(value, list):
        return [decode(v, step, (*path, i)) for i, v in enumerate(value)]
    if type(value) is str:
        return _traced(TracedStr, value, (step, path))
    if type(value) is int:
        return _traced(TracedInt, value, (step, path))
    if not isinstance(value, dict):
        return value
    if "$o" in value:
        if "exc" in value and value.get("repr", "").startswith("<class"):
            return exception_class(value["exc"])
        return Remote((step, path), value.get("type", "?"), value.get("repr", ""), value.get("callable", False))
    if len(value) == 1:
        (tag, inner), = value.items()
        if tag == "$b":
            return _traced(TracedBytes, base64.b64decode(inner), (step, path))
        if tag == "$t":
            return tuple(decode(v, step, (*path, i)) for i, v in enumerate(inner))
        if tag == "$p":
            import pathlib

            return pathlib.Path(inner)
        if tag == "$s":
            return {decode(v, step, (*path, "?")) for v in inner}
        if tag == "$d":
            return {_plain(decode(k, step, (*path, "?"))): decode(v, step, (*path, ("key", json.dumps(k))))
                    for k, v in inner}
        if tag == "$f":
            return float(inner)
        if tag == "$cut":
            return "<reply cut at 256 KiB> " + inner[:65536]
    return {k: decode(v, step, (*path, k)) for k, v in value.items()}


def _plain(value):
    """A traced value as its plain self (a dict key or a set member: where an origin has no meaning)."""
    return value.__class__.__mro__[2](value) if isinstance(value, _Traced) else value


def _comparable(value):
    """A normal-form request without the values of traced arguments (their origins are what must agree)."""
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, dict):
        if "$r" in value:
            return {"$r": value["$r"]}
        return {k: _comparable(v) for k, v in value.items()}
    return value


def _normal(request):
    """A request as comparable, origin-named JSON (the handle field is the proxy's origin)."""
    out = {k: encode(v) if k not in ("op", "name", "module") else v for k, v in request.items() if k != "handle"}
    if "handle" in request:
        out["handle"] = list(request["handle"]._origin)
    return json.loads(json.dumps(out))  # insertion order kept: a dict the test sends arrives as it was built


def _raise(raised):
    kind = exception_class(raised["classes"])
    raise kind(raised["message"])


# -- the trace ------------------------------------------------------------------------------------------------------
class Trace:
    """Every request the test code made, in order, named by origin: the setup's first, then each probe's block."""

    def __init__(self):
        self.steps = []  # normal-form requests
        self.setup_end = 0
        self.blocks = {}  # probe id -> (first step, end)


# -- the two callers ------------------------------------------------------------------------------------------------
class ServeCaller:
    """The live program: the serve loop, which carries out any request. New requests extend the trace; a replayed
    setup (after the program was relaunched) re-sends recorded steps."""

    def __init__(self, program, trace, entropy_key, deadline_for):
        self.program = program
        self.trace = trace
        self.entropy_key = entropy_key  # (step index) -> (key, local step) for the entropy feed
        self.deadline_for = deadline_for  # () -> absolute deadline of the next request
        self.handles = {}  # origin -> this program's handle number
        self.next_id = 1

    def _send(self, normal, step):
        message = dict(normal, id=self.next_id)
        self.next_id += 1
        if "handle" in normal:
            origin = tuple(normal["handle"][0:1]) + (tuple(_as_path(normal["handle"][1])),)
            if origin not in self.handles:
                raise programs.Gone(f"no object for {normal['handle']} in this run")
            message["handle"] = self.handles[origin]
        message = _with_handles(message, self.handles)
        entropy = self.program.entropy
        if entropy is not None:
            entropy.begin(*self.entropy_key(step))
        self.program.send(ascii(message))
        reply = self.program.read_json(self.deadline_for(normal["op"]), want=message["id"])
        if entropy is not None:
            entropy.drain()
        _collect_handles(reply.get("ok"), step, (), self.handles)
        return reply

    def replay(self, upto):
        """Re-send the trace's first ``upto`` steps (the setup), ignoring their values but not a broken program."""
        for step in range(upto):
            self._send(self.trace.steps[step], step)

    def request(self, request):
        step = len(self.trace.steps)
        normal = _normal(request)
        self.trace.steps.append(normal)
        reply = self._send(normal, step)
        if "raised" in reply:
            _raise(reply["raised"])
        return decode(reply.get("ok"), step)


class ScriptCaller:
    """A fresh program running a script compiled from recorded steps, one statement per request, in order."""

    def __init__(self, program, trace, steps, entropy_key, deadline_for):
        self.program = program
        self.trace = trace
        self.pending = list(steps)  # step indices still to run, in order
        self.entropy_key = entropy_key
        self.deadline_for = deadline_for

    def _run_next(self):
        step = self.pending.pop(0)
        entropy = self.program.entropy
        if entropy is not None:
            entropy.begin(*self.entropy_key(step))
        self.program.send("go")
        reply = self.program.read_json(self.deadline_for(self.trace.steps[step]["op"]), want=step)
        if entropy is not None:
            entropy.drain()
        return step, reply

    def run_setup(self, upto):
        while self.pending and self.pending[0] < upto:
            self._run_next()

    def request(self, request):
        normal = _normal(request)
        if not self.pending or _comparable(self.trace.steps[self.pending[0]]) != _comparable(normal):
            self.program.kill()
            raise Diverged("the probe asked the script something else than it asked the live program: the program "
                           "answered differently under the two callers")
        step, reply = self._run_next()
        if "raised" in reply:
            _raise(reply["raised"])
        return decode(reply.get("ok"), step)


def _as_path(path):
    return tuple(tuple(p) if isinstance(p, list) else p for p in path)


def _collect_handles(value, step, path, handles):
    """Remember the program's handle number of every object in a reply, by origin."""
    if isinstance(value, list):
        for i, v in enumerate(value):
            _collect_handles(v, step, (*path, i), handles)
    elif isinstance(value, dict):
        if "$o" in value:
            handles[(step, path)] = value["$o"]
        elif len(value) == 1 and next(iter(value)) in ("$t",):
            for i, v in enumerate(value["$t"]):
                _collect_handles(v, step, (*path, i), handles)
        elif len(value) == 1 and next(iter(value)) == "$d":
            for k, v in value["$d"]:
                _collect_handles(v, step, (*path, ("key", json.dumps(k))), handles)
        elif not (len(value) == 1 and str(next(iter(value))).startswith("$")):
            for k, v in value.items():
                _collect_handles(v, step, (*path, k), handles)


def _with_handles(value, handles):
    """Origin references (``{"$h": [step, path]}``) as this program's handle numbers."""
    if isinstance(value, list):
        return [_with_handles(v, handles) for v in value]
    if isinstance(value, dict):
        if "$r" in value:  # a traced value goes as the value itself
            return _with_handles(value["v"], handles)
        if set(value) == {"$h"}:
            step, path = value["$h"]
            origin = (step, _as_path(path))
            if origin not in handles:
                raise programs.Gone(f"no object for {value['$h']} in this run")
            return {"$h": handles[origin]}
        return {k: (_with_handles(v, handles) if k not in ("op", "name", "module", "id", "handle") else v)
                for k, v in value.items()}
    return value


# -- compiling a trace into a plain script --------------------------------------------------------------------------
def _expr_of_origin(step, path):
    text = f"R[{step}]"
    for part in _as_path(path):
        if isinstance(part, tuple):  # ("key", json of a tagged key)
            text += f"[{_source(json.loads(part[1]))}]"
        else:
            text += f"[{part!r}]"
    return text


def _source(value):
    """Python source of a tagged JSON value (origins become expressions over ``R``)."""
    if isinstance(value, list):
        return "[" + ", ".join(_source(v) for v in value) + "]"
    if isinstance(value, dict):
        if "$r" in value:  # the script's own value of that origin
            return _expr_of_origin(value["$r"][0], value["$r"][1])
        if len(value) == 1:
            (tag, inner), = value.items()
            if tag == "$h":
                return _expr_of_origin(inner[0], inner[1])
            if tag == "$b":
                return repr(base64.b64decode(inner))
            if tag == "$t":
                return "(" + "".join(_source(v) + ", " for v in inner) + ")"
            if tag == "$p":
                return f"__import__('pathlib').Path({inner!r})"
            if tag == "$s":
                return "{" + ", ".join(_source(v) for v in inner) + "}" if inner else "set()"
            if tag == "$d":
                return "{" + ", ".join(f"{_source(k)}: {_source(v)}" for k, v in inner) + "}"
            if tag == "$f":
                return f"float({inner!r})"
        return "{" + ", ".join(f"{k!r}: {_source(v)}" for k, v in value.items()) + "}"
    return repr(value)


def statement(step, normal):
    """The statement of one step: it stores its value in ``R[step]``."""
    op = normal["op"]
    obj = _expr_of_origin(*normal["handle"]) if "handle" in normal else None
    if op == "import":
        return f"R[{step}] = importlib.import_module({normal['module']!r})"
    if op == "get":
        return f"R[{step}] = getattr({obj}, {normal['name']!r})"
    if op == "ref":
        return f"R[{step}] = getattr({obj}, {normal['name']!r})"
    if op == "set":
        return f"setattr({obj}, {normal['name']!r}, {_source(normal['value'])}); R[{step}] = None"
    if op == "call":
        function = f"getattr({obj}, {normal['name']!r})" if normal.get("name") else obj
        args = "".join(f"{_source(a)}, " for a in normal.get("args", []))
        kwargs = "".join(f"**{{{k!r}: {_source(v)}}}, " for k, v in normal.get("kwargs", {}).items())
        return f"R[{step}] = {function}({args}{kwargs})"
    if op == "getitem":
        return f"R[{step}] = {obj}[{_source(normal['key'])}]"
    if op == "setitem":
        return f"{obj}[{_source(normal['key'])}] = {_source(normal['value'])}; R[{step}] = None"
    if op == "delitem":
        return f"del {obj}[{_source(normal['key'])}]; R[{step}] = None"
    if op in ("list", "len", "str"):
        return f"R[{step}] = {op}({obj})"
    if op == "contains":
        return f"R[{step}] = {_source(normal['item'])} in {obj}"
    raise ValueError(f"unknown step {op!r}")


def compile_script(trace, steps, encoder, seed=0):
    """A script that runs ``steps`` of ``trace`` in order, each after a line on stdin, printing each value with
    ``encoder`` (the value encoder of the serve loop under other names: ``{"code": ..., "names": {...}}``, made by
    the host, ``callers.py``). Its own names are drawn from ``seed``: nothing in it reads like the serve loop."""
    import random as _random

    rng = _random.Random(seed)
    own = {name: "_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 9)))
           for name in ("R", "_in", "_stdout", "_null", "_out", "_error")}
    names = encoder["names"]
    results, out, err = own["R"], own["_out"], own["_error"]
    lines = ["import base64, importlib, math, os, sys", encoder["code"],
             f"{own['_in']}, {own['_stdout']} = os.fdopen(os.dup(0)), os.fdopen(os.dup(1), 'w')",
             f"{own['_null']} = os.open(os.devnull, os.O_RDONLY)", f"os.dup2({own['_null']}, 0)",
             "sys.stdin = open(os.devnull)", "sys.path[:0] = [os.getcwd(), *sys.argv[1:]]", f"{results} = {{}}", "",
             f"def {out}(text):", f"    {own['_stdout']}.write(text + '\\n')", f"    {own['_stdout']}.flush()", ""]
    for step in steps:
        value = f"{results}[{step}]"
        if trace.steps[step]["op"] == "ref":
            value = f"{names['_Ref']}({value})"
        lines += [f"if not {own['_in']}.readline():", "    os._exit(0)", "try:",
                  "    " + statement(step, trace.steps[step]).replace("R[", f"{results}["),
                  f"    {out}({names['_reply_text']}({step}, {value}))",
                  f"except BaseException as {err}:", f"    {out}({names['_raised_text']}({step}, {err}))"]
    return "\n".join(lines) + "\n"
