"""Static taint check for weaknesses no test can observe at this scale: a secret compared in non-constant time.

CPython compares short strings in time that no test of a few hundred calls can tell apart, so a timing-unsafe
comparison (CWE-208) has no effect the judge could observe. Its exploit probes are ``Detect(kind="static")``: instead
of running them, the host reads the *patched* source (with :mod:`ast`; nothing is executed) and follows the value
an attacker controls from the entry points the probes call.

A probe's ``rule`` is ``{"check": "secret_compare", "entries": [entry, ...]}``; an entry names a function of the
program (``module``, dotted, and ``function``) and the argument that carries the attacker's value: ``position``
(how the probes pass it) and ``param`` (its name, for a keyword call), and ``key`` when that argument is a mapping
(headers, a form) whose item under ``key`` is the attacker's value and whose other items are not.

The check is conservative: anything it cannot follow counts as exploited. The tainted value (and everything derived
from it: slices, str/bytes methods, ``str()``, ``"".join``, f-strings, ``%``, ``+``, encodings, containers holding it)
may reach only

- ``hmac.compare_digest`` / ``secrets.compare_digest``, hashing (``hmac.new``, ``hmac.digest``, ``hashlib``'s
  constructors and key derivations, a hash object's ``update``), ``len``, ``isinstance``, ``bool``, truth tests
  (of the whole value: a character of it, or a slice made in a loop, is compared piece by piece and exploited);
- comparisons, searches and lookups against literal constants only (``scheme.lower() == "bearer"``, ``x is None``,
  ``x in ("a", "b")``, ``x.startswith("Bearer ")``);
- the program's own functions, followed across its modules with the tainted arguments (aliases, lambdas and
  functions passed to ``map``/``filter``/``functools.reduce`` included), logging and ``print``.

Anything else is exploited: a comparison with any non-literal (``==``, ``!=``, ``<``, ``in``, ``not in``, ``is``,
chained, in ``assert``, ``match`` value patterns), ``operator.eq`` and friends (also through ``map``), ``__eq__``-like
methods, ``startswith``/``endswith``/``find``/``index``/``count``/``split``/``replace``/``strip``/``get`` with a
non-literal argument, ``min``/``max``/``sorted``, a regex whose pattern is not a literal, a lookup of a mapping, set
or list with the tainted value as its key, a branch inside a loop (or an ``any``/``all``) on a value that mixes the
tainted value with another non-literal (the early exit of a hand-written comparison; the one verdict after the loop
is fine), a call of anything unknown with a tainted argument (a program class, an object's method, a library
function not listed, ``hash``), a store of a tainted value (or of a closure over it) into an attribute, a global, a
subscript or a container that is not a fresh local one, and a decorated function reached with a tainted argument.
Independently of taint, introspection in the functions reached from the entries or run at import (frames,
``globals()``, ``locals()``, ``vars()``, ``getattr``/``setattr``/``delattr``/``hasattr`` with a non-literal name,
``exec``/``eval``/``compile``/``__import__``, ``gc``, ``inspect``, ``ctypes``, ``importlib``, ``types``,
``sys._getframe``, ``sys.modules``, dunder attributes such as ``__dict__``/``__globals__``/``__code__``/
``__class__``), and a store into an attribute of a library module or of another program module anywhere in the
program (``hmac.compare_digest = ...``, ``setattr(hmac, ...)``, ``signing.hmac = ...``) are exploited, and so is
source the check cannot parse or follow (``import *``, a statement it does not know, an entry point that is gone).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from security_verifiers.envs.code_repair.program import Program

#: Library callables that take the tainted value and return something safe to compare (a verdict or a digest).
SANITIZERS = frozenset({
    "hmac.compare_digest", "secrets.compare_digest", "operator._compare_digest",
    "hmac.new", "hmac.HMAC", "hmac.digest",
    "hashlib.new", "hashlib.pbkdf2_hmac", "hashlib.scrypt", "hashlib.file_digest",
    *(f"hashlib.{name}" for name in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256",
                                     "sha3_384", "sha3_512", "blake2b", "blake2s", "shake_128", "shake_256")),
    "builtins.len", "builtins.isinstance", "builtins.issubclass", "builtins.bool", "builtins.callable",
    "builtins.type", "builtins.id",
})
#: Library callables whose result carries the taint of their arguments (no comparison with anything else inside).
PROPAGATORS = frozenset({
    *(f"builtins.{name}" for name in ("str", "bytes", "bytearray", "memoryview", "repr", "ascii", "format", "int",
                                      "float", "ord", "chr", "hex", "oct", "bin", "abs", "round", "list", "tuple",
                                      "reversed", "enumerate", "zip", "iter", "next", "sum", "any", "all", "divmod",
                                      "pow", "frozenset", "set", "dict")),
    *(f"base64.{name}" for name in ("b64encode", "b64decode", "urlsafe_b64encode", "urlsafe_b64decode",
                                    "standard_b64encode", "standard_b64decode", "b32encode", "b32decode", "b16encode",
                                    "b16decode", "encodebytes", "decodebytes", "b85encode", "b85decode")),
    *(f"binascii.{name}" for name in ("hexlify", "unhexlify", "b2a_hex", "a2b_hex", "b2a_base64", "a2b_base64")),
    "builtins.bytes.fromhex", "builtins.bytearray.fromhex", "codecs.encode", "codecs.decode", "json.loads",
    "json.dumps",
    "urllib.parse.quote", "urllib.parse.unquote", "urllib.parse.quote_plus", "urllib.parse.unquote_plus",
    "urllib.parse.quote_from_bytes", "urllib.parse.unquote_to_bytes", "html.escape", "html.unescape",
    "unicodedata.normalize", "string.capwords", "builtins.print", "re.escape",
})
#: Library callables that compare their arguments.
COMPARERS = frozenset({
    *(f"operator.{name}" for name in ("eq", "ne", "lt", "le", "gt", "ge", "contains", "is_", "is_not", "countOf",
                                      "indexOf", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                                      "__contains__")),
    "builtins.min", "builtins.max", "builtins.sorted", "difflib.SequenceMatcher", "os.path.commonprefix",
})
#: Modules whose every use is introspection (or can rewire the program under the check).
INTROSPECTIVE_MODULES = frozenset({"inspect", "gc", "ctypes", "importlib", "builtins", "traceback", "types", "dis",
                                   "code", "codeop", "marshal", "pickle", "_thread", "threading.settrace",
                                   "sys._getframe", "sys._current_frames", "sys.modules", "sys.settrace",
                                   "sys.setprofile", "sys.getframe", "sys.meta_path", "sys.path_hooks",
                                   "sys.exc_info", "sys.exception", "sys.last_traceback", "sys.call_tracing",
                                   "sys.addaudithook", "sys.breakpointhook", "sys.displayhook", "sys.excepthook",
                                   "sys._getframemodulename", "functools.partial", "operator.attrgetter",
                                   "operator.methodcaller", "copyreg", "weakref", "atexit", "signal"})
INTROSPECTIVE_BUILTINS = frozenset({"globals", "locals", "vars", "exec", "eval", "compile", "__import__",
                                    "breakpoint"})
#: Attributes that reach frames, code, namespaces or the class of a value.
INTROSPECTIVE_ATTRS = frozenset({
    "f_back", "f_locals", "f_globals", "f_builtins", "f_code", "f_lasti", "f_trace", "tb_frame", "tb_next",
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "co_consts", "co_code", "co_names",
    "__dict__", "__globals__", "__code__", "__closure__", "__builtins__", "__class__", "__subclasses__", "__mro__",
    "__bases__", "__base__", "__func__", "__self__", "__getattribute__", "__getattr__", "__setattr__",
    "__delattr__", "__module__", "__defaults__", "__kwdefaults__", "__wrapped__", "__init_subclass__",
    "__class_getitem__", "__reduce__", "__reduce_ex__", "__traceback__", "__spec__", "__loader__", "__import__",
})
#: Methods of a str/bytes receiver whose result carries its taint (and whose arguments may be anything).
_KEEPING = frozenset({"lower", "upper", "casefold", "title", "capitalize", "swapcase", "encode", "decode", "zfill",
                      "ljust", "rjust", "center", "expandtabs", "format", "format_map", "hex", "splitlines",
                      "__getitem__", "__str__", "__bytes__", "__mod__", "__add__", "__mul__", "__len__",
                      "__iter__", "isdigit", "isalpha", "isalnum", "isascii", "isdecimal", "isnumeric", "isspace",
                      "islower", "isupper", "isidentifier", "isprintable", "istitle", "join", "copy", "keys",
                      "values", "items", "__format__", "to_bytes", "bit_length", "conjugate"})
#: Methods of a str/bytes (or container) receiver that compare or search with their arguments: literal ones only.
_SEARCHING = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "partition",
                        "rpartition", "split", "rsplit", "replace", "removeprefix", "removesuffix", "strip",
                        "lstrip", "rstrip", "translate", "maketrans", "get", "pop", "__contains__", "__eq__",
                        "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__cmp__", "__hash__"})
#: Methods of a fresh local container that take a value into it.
_FILLING = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "__setitem__"})
_LOGGING = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
_HASH_METHODS = frozenset({"update", "digest", "hexdigest", "copy"})
_REGEX_METHODS = frozenset({"match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split"})
_REGEX_FUNCTIONS = frozenset(f"re.{name}" for name in _REGEX_METHODS)
_NO_CONST = object()


class Unfollowable(Exception):
    """The check met something it cannot follow (the answer is then: exploited)."""


@dataclass(frozen=True)
class Val:
    """What the check knows of a value: whether it is (derived from) the attacker's value (``taint``), whether it
    also mixes in another non-literal value (``mixed``: a branch on it leaks), which items of a mapping are the
    attacker's (``items``), and what a clean value is (``kind``/``ref``: a library object by qualified name, a program
    module or function, a hash object, a compiled literal regex, a logger, a fresh local container) or its constant."""

    taint: bool = False
    mixed: bool = False
    part: bool = False  # a piece of the attacker's value (a character, a slice made in a loop), not all of it
    items: frozenset[str] = frozenset()
    kind: str | None = None
    ref: Any = None
    const: Any = _NO_CONST

    @property
    def dirty(self) -> bool:
        return self.taint or bool(self.items)

    @property
    def literal(self) -> bool:
        return self.const is not _NO_CONST


CLEAN = Val()
TAINTED = Val(taint=True)


def join(*values: Val) -> Val:
    """What a value may be when it may be any of ``values`` (flow-insensitive union)."""
    values = tuple(v for v in values if v is not None)
    if not values:
        return CLEAN
    first = values[0]
    if all(v == first for v in values):
        return first
    taint = any(v.taint for v in values)
    items = frozenset().union(*(v.items for v in values))
    kinds = {(v.kind, id(v.ref) if v.ref is not None else None) for v in values}
    kind, ref = (first.kind, first.ref) if len(kinds) == 1 else ("unknown" if any(v.kind for v in values) else None,
                                                                  None)
    return Val(taint=taint, mixed=any(v.mixed for v in values), part=any(v.part for v in values), items=items,
               kind=kind, ref=ref)


def _widen(value: Val) -> Val:
    """``value`` without its constant and what it is bound to (a recursive call's argument)."""
    return Val(taint=value.taint, mixed=value.mixed, part=value.part, items=value.items,
               kind=value.kind if value.kind in (None, "hash", "regex", "logger", "fresh", "func", "lib", "module")
               else "unknown", ref=value.ref if value.kind in ("func", "lib", "module") else None)


def _shallow(value: Val) -> Val:
    """What a method call needs of the value it is bound to (not what that value came from: no nesting)."""
    kind = value.kind if value.kind is None or not value.kind.endswith("-method") else "unknown"
    return Val(taint=value.taint, mixed=value.mixed, part=value.part, items=value.items, kind=kind,
               const=value.const)


def _taint_of(*values: Val) -> Val:
    """The value derived from ``values`` (a slice, a sum, a call's result): tainted when any of them is."""
    dirty = [v for v in values if v.dirty]
    if not dirty:
        return CLEAN
    return Val(taint=True, mixed=any(v.mixed for v in dirty), part=any(v.part for v in dirty))


@dataclass(eq=False)
class Function:
    """A function of the program: a ``def`` or a ``lambda``, with the module it lives in and its enclosing scope."""

    module: Module
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    outer: Scope | None = None

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")


@dataclass(eq=False)
class Module:
    name: str
    path: str
    tree: ast.Module
    bindings: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)
    rebound: set[str] = field(default_factory=set)  # names a function assigns through ``global``

    @property
    def package(self) -> str:
        return self.name if self.path.endswith("__init__.py") else self.name.rpartition(".")[0]


@dataclass(eq=False)
class Scope:
    """One analysis of a function with given argument values: local values (flow-insensitive), returns."""

    function: Function
    env: dict[str, Val] = field(default_factory=dict)
    fresh: dict[str, bool] = field(default_factory=dict)  # local name -> bound only to fresh containers
    globals_: set[str] = field(default_factory=set)
    returned: Val | None = None
    changed: bool = False
    loops: int = 0  # how deep in loops (and comprehensions) the statement being read is


class Analysis:
    """The program's modules, the check's findings, and the analyses made so far."""

    def __init__(self, files: dict[str, str]) -> None:
        self.modules: dict[str, Module] = {}
        self.findings: list[str] = []
        # keyed by the nodes and scopes themselves (hashed by identity, and kept alive: never a reused id)
        self.memo: dict[tuple[ast.AST, tuple[Val, ...]], Val] = {}
        self.active: set[tuple[ast.AST, tuple[Val, ...]]] = set()
        self.reached: set[ast.AST] = set()
        self.functions: dict[tuple[ast.AST, Scope | None], Function] = {}
        self.steps = 0
        for path, text in sorted(files.items()):
            if not path.endswith(".py"):
                continue
            name = path[:-3].replace("/", ".")
            if name.endswith(".__init__"):
                name = name[: -len(".__init__")]
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError) as error:
                raise Unfollowable(f"{path} does not parse: {error}") from None
            self.modules[name] = Module(name, path, tree)
        for module in self.modules.values():
            self._bind(module)

    def function(self, module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                 outer: Scope | None = None) -> Val:
        """The program function ``node`` (one object per definition and enclosing analysis). A closure made where
        the tainted value is in scope counts as tainted itself: stored or handed on, it could compare it later."""
        key = (node, outer)
        if key not in self.functions:
            self.functions[key] = Function(module, node, outer)
        dirty = outer is not None and any(v.dirty for v in outer.env.values())
        return Val(taint=dirty, kind="func", ref=self.functions[key])

    # -- findings -----------------------------------------------------------------------------------------------
    def flag(self, module: Module, node: ast.AST, why: str) -> None:
        self.findings.append(f"{module.path}:{getattr(node, 'lineno', 0)}: {why}")

    def tick(self) -> None:
        self.steps += 1
        if self.steps > 200_000:
            raise Unfollowable("the program is too large to follow")

    # -- module-level bindings ----------------------------------------------------------------------------------
    def _bind(self, module: Module) -> None:
        def add(name: str, what: tuple[str, Any]) -> None:
            module.bindings.setdefault(name, []).append(what)

        def walk(statements: Iterable[ast.stmt]) -> None:
            for node in statements:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    add(node.name, ("def", node))
                    self._note_globals(module, node)
                elif isinstance(node, ast.ClassDef):
                    add(node.name, ("class", node))
                    self._note_globals(module, node)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname:
                            add(alias.asname, ("import", alias.name))
                        else:
                            add(alias.name.split(".")[0], ("import", alias.name.split(".")[0]))
                elif isinstance(node, ast.ImportFrom):
                    base = self._absolute(module, node.module, node.level)
                    for alias in node.names:
                        if alias.name == "*":
                            raise Unfollowable(f"{module.path}: import *")
                        add(alias.asname or alias.name, ("from", (base, alias.name)))
                elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        if isinstance(target, ast.Name):
                            if isinstance(node, ast.AugAssign) or node.value is None:
                                add(target.id, ("other", node))
                            else:
                                add(target.id, ("value", node.value))
                        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
                            for name in _target_names(target):
                                add(name, ("other", node))
                elif isinstance(node, (ast.If, ast.Try, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith,
                                       ast.Match)) or type(node).__name__ == "TryStar":
                    if isinstance(node, (ast.For, ast.AsyncFor)):
                        for name in _target_names(node.target):
                            add(name, ("other", node))
                    if isinstance(node, (ast.With, ast.AsyncWith)):
                        for item in node.items:
                            if item.optional_vars is not None:
                                for name in _target_names(item.optional_vars):
                                    add(name, ("other", node))
                    for block in ("body", "orelse", "finalbody"):
                        walk(getattr(node, block, []))
                    for handler in getattr(node, "handlers", []):
                        if handler.name:
                            add(handler.name, ("other", handler))
                        walk(handler.body)
                    for case in getattr(node, "cases", []):
                        walk(case.body)
                elif isinstance(node, (ast.Global, ast.Nonlocal, ast.Delete)):
                    names = node.names if not isinstance(node, ast.Delete) else \
                        [n for t in node.targets for n in _target_names(t)]
                    for name in names:
                        add(name, ("other", node))
                # walrus targets at module level
                for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef)) else ():
                    if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                        add(sub.target.id, ("other", sub))

        walk(module.tree.body)

    def _note_globals(self, module: Module, node: ast.AST) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Global):
                module.rebound.update(sub.names)

    def _absolute(self, module: Module, name: str | None, level: int) -> str:
        if not level:
            return name or ""
        base = module.package.split(".") if module.package else []
        if level > 1:
            base = base[: len(base) - (level - 1)]
        return ".".join([*base, *([name] if name else [])])

    def global_value(self, module: Module, name: str, seen: frozenset[tuple[str, str]] = frozenset()) -> Val:
        """What a module-level name is (for a name the module does not bind: the builtin, or nothing)."""
        key = (module.name, name)
        if key in seen:
            return Val(kind="unknown")
        seen = seen | {key}
        bindings = module.bindings.get(name)
        if not bindings:
            if hasattr(builtins, name):
                return Val(kind="lib", ref=f"builtins.{name}")
            return Val(kind="unknown")
        if name in module.rebound:
            return Val(kind="unknown")
        kinds = {kind for kind, _ in bindings}
        if kinds == {"def"}:
            return self.function(module, bindings[-1][1])
        if len(bindings) != 1:
            return Val(kind="unknown")
        kind, what = bindings[0]
        if kind == "class":
            return Val(kind="unknown", ref=what)
        if kind == "import":
            return self._module_or_lib(what)
        if kind == "from":
            base, attr = what
            full = f"{base}.{attr}" if base else attr
            if full in self.modules:
                return Val(kind="module", ref=self.modules[full])
            if base in self.modules:
                return self.global_value(self.modules[base], attr, seen)
            return Val(kind="lib", ref=_normal(full))
        if kind == "value":
            return self._static_value(module, what, seen)
        return Val(kind="unknown")

    def _module_or_lib(self, name: str) -> Val:
        if name in self.modules:
            return Val(kind="module", ref=self.modules[name])
        if any(m.startswith(name + ".") for m in self.modules):
            return Val(kind="package", ref=name)
        return Val(kind="lib", ref=_normal(name))

    def _static_value(self, module: Module, node: ast.expr, seen: frozenset[tuple[str, str]]) -> Val:
        """A module-level assignment's value: a constant, an alias of something known, a compiled literal regex, a
        logger, a lambda; anything else is an unknown (clean) object."""
        const = _constant(node)
        if const is not _NO_CONST:
            return Val(const=const)
        if isinstance(node, ast.Name):
            return self.global_value(module, node.id, seen)
        if isinstance(node, ast.Attribute):
            base = self._static_value(module, node.value, seen)
            return self.attribute(base, node.attr)
        if isinstance(node, ast.Lambda):
            return self.function(module, node)
        if isinstance(node, ast.Call):
            callee = self._static_value(module, node.func, seen)
            if callee.kind == "lib" and callee.ref in ("re.compile",) and node.args and \
                    _constant(node.args[0]) is not _NO_CONST:
                return Val(kind="regex")
            if callee.kind == "lib" and callee.ref == "logging.getLogger":
                return Val(kind="logger")
            if callee.kind == "lib" and callee.ref == "builtins.getattr" and len(node.args) == 2 and \
                    isinstance(_constant(node.args[1]), str):
                return self.attribute(self._static_value(module, node.args[0], seen), _constant(node.args[1]))
        return Val(kind="unknown")

    def attribute(self, base: Val, attr: str) -> Val:
        """``base.attr`` for a known base (a library object, a program module or package); otherwise unknown."""
        if base.kind == "lib":
            return Val(kind="lib", ref=_normal(f"{base.ref}.{attr}"))
        if base.kind == "module":
            full = f"{base.ref.name}.{attr}"
            if full in self.modules:
                return Val(kind="module", ref=self.modules[full])
            return self.global_value(base.ref, attr)
        if base.kind == "package":
            return self._module_or_lib(f"{base.ref}.{attr}")
        if base.dirty:
            return _taint_of(base)
        return Val(kind="unknown")

    # -- analysis of a function ---------------------------------------------------------------------------------
    def call_function(self, function: Function, args: list[Val], kwargs: dict[str, Val], star: Val | None,
                      site: tuple[Module, ast.AST]) -> Val:
        """Analyse ``function`` called with these argument values; returns the value it returns."""
        node = function.node
        params = node.args
        positional = [*params.posonlyargs, *params.args]
        values: dict[str, Val] = {}
        for index, arg in enumerate(args):
            if index < len(positional):
                values[positional[index].arg] = arg
            elif params.vararg is not None:
                values[params.vararg.arg] = join(values.get(params.vararg.arg, CLEAN), _container(arg))
            elif arg.dirty:
                self.flag(*site, "a tainted argument past the parameters of " + function.name)
        for name, arg in kwargs.items():
            if name in {p.arg for p in [*positional, *params.kwonlyargs]}:
                values[name] = join(values.get(name, CLEAN), arg) if name in values else arg
            elif params.kwarg is not None:
                values[params.kwarg.arg] = join(values.get(params.kwarg.arg, CLEAN), _container(arg))
            elif arg.dirty:
                self.flag(*site, f"a tainted keyword argument {name} unknown to {function.name}")
        if star is not None and star.dirty:
            for p in [*positional, *params.kwonlyargs, *(x for x in (params.vararg, params.kwarg) if x)]:
                values[p.arg] = join(values.get(p.arg, CLEAN), TAINTED)
        names = [p.arg for p in [*positional, *params.kwonlyargs, *(x for x in (params.vararg, params.kwarg) if x)]]
        if any(active is node for active, _ in self.active):  # recursion: arguments without their constants, so
            values = {name: _widen(value) for name, value in values.items()}  # that the signatures settle
        elif len(self.active) > 64:
            raise Unfollowable("the calls nest too deep")
        signature = tuple(values.get(name, CLEAN) for name in names)
        key = (node, signature)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:  # recursion: whatever it returns derives from its arguments
            return _taint_of(*signature)
        if any(v.dirty for v in signature) and getattr(node, "decorator_list", None):
            self.flag(function.module, node, f"{function.name} is decorated and reached with a tainted argument")
        self.active.add(key)
        try:
            scope = Scope(function)
            for name in names:
                scope.env[name] = values.get(name, CLEAN)
            if node not in self.reached:
                self.reached.add(node)
                self.introspection(function.module, node)
            body = node.body if isinstance(node.body, list) else [ast.Return(value=node.body)]
            for _ in range(8):
                scope.changed = False
                for statement in body:
                    self.statement(scope, statement)
                if not scope.changed:
                    break
            else:
                raise Unfollowable(f"{function.name}: the values do not settle")
            result = scope.returned if scope.returned is not None else CLEAN
        finally:
            self.active.discard(key)
        self.memo[key] = result
        return result

    # -- statements ---------------------------------------------------------------------------------------------
    def assign(self, scope: Scope, target: ast.expr, value: Val, node: ast.AST, fresh: bool = False) -> None:
        module = scope.function.module
        if isinstance(target, ast.Name):
            name = target.id
            if name in scope.globals_:
                if value.dirty:
                    self.flag(module, node, f"the tainted value is stored in the global {name}")
                return
            old = scope.env.get(name)
            new = value if old is None else join(old, value)
            if new != old:
                scope.env[name] = new
                scope.changed = True
            scope.fresh[name] = scope.fresh.get(name, True) and fresh
        elif isinstance(target, (ast.Tuple, ast.List)):
            unpacked = Val(taint=True, mixed=value.mixed, part=value.part) if value.taint else _element(value)
            for element in target.elts:  # unpacking gives the values a container holds (not characters)
                inner = element.value if isinstance(element, ast.Starred) else element
                self.assign(scope, inner, unpacked, node)
        elif isinstance(target, ast.Starred):
            self.assign(scope, target.value, value, node)
        elif isinstance(target, ast.Attribute):
            base = self.expression(scope, target.value)
            if base.kind in ("lib", "module", "package"):
                self.flag(module, node, f"a store into {base.kind} attribute .{target.attr}")
            elif value.dirty:
                self.flag(module, node, f"the tainted value is stored in an attribute .{target.attr}")
        elif isinstance(target, ast.Subscript):
            base = self.expression(scope, target.value)
            key = self.expression(scope, target.slice)
            if base.kind in ("lib", "module", "package"):
                self.flag(module, node, "a store into a library or program object")
            if value.dirty or key.dirty:
                if isinstance(target.value, ast.Name) and scope.fresh.get(target.value.id):
                    self.assign(scope, target.value, _taint_of(value, key), node, fresh=True)
                else:
                    self.flag(module, node, "the tainted value is stored in a container that is not a fresh local")

    def statement(self, scope: Scope, node: ast.stmt) -> None:
        self.tick()
        module = scope.function.module
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                self.expression(scope, decorator)
            self.assign(scope, ast.Name(id=node.name), self.function(module, node, scope), node)
        elif isinstance(node, ast.ClassDef):
            self.assign(scope, ast.Name(id=node.name), Val(kind="unknown", ref=node), node)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                value = self.expression(scope, node.value)
                new = value if scope.returned is None else join(scope.returned, value)
                if new != scope.returned:
                    scope.returned = new
                    scope.changed = True
        elif isinstance(node, ast.Assign):
            pairs = _pairwise(node.targets, node.value)
            if pairs is not None:  # a, b = x, y
                for target, part in pairs:
                    self.assign(scope, target, self.expression(scope, part), node, _is_fresh(part))
                return
            value = self.expression(scope, node.value)
            fresh = _is_fresh(node.value)
            for target in node.targets:
                self.assign(scope, target, value, node, fresh)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(scope, node.target, self.expression(scope, node.value), node, _is_fresh(node.value))
        elif isinstance(node, ast.AugAssign):
            current = self.expression(scope, node.target)
            value = self.expression(scope, node.value)
            result = self.binary(current, value, node.value)
            self.assign(scope, node.target, result, node, isinstance(node.target, ast.Name)
                        and scope.fresh.get(node.target.id, False))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            iterable = self.expression(scope, node.iter)
            self.assign(scope, node.target, _element(iterable), node)
            scope.loops += 1
            self.block(scope, node.body)
            scope.loops -= 1
            self.block(scope, node.orelse)
        elif isinstance(node, ast.While):
            scope.loops += 1
            self.test(scope, node.test)
            self.block(scope, node.body)
            scope.loops -= 1
            self.block(scope, node.orelse)
        elif isinstance(node, ast.If):
            self.test(scope, node.test)
            self.block(scope, node.body + node.orelse)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                value = self.expression(scope, item.context_expr)
                if item.optional_vars is not None:
                    self.assign(scope, item.optional_vars, value, node)
            self.block(scope, node.body)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            attempt: Any = node
            self.block(scope, attempt.body + attempt.orelse + attempt.finalbody)
            dirty = any(v.dirty for v in scope.env.values())
            for handler in attempt.handlers:
                if handler.type is not None:
                    self.expression(scope, handler.type)
                if handler.name:
                    self.assign(scope, ast.Name(id=handler.name), TAINTED if dirty else Val(kind="unknown"), handler)
                self.block(scope, handler.body)
        elif isinstance(node, ast.Raise):
            for raised in (node.exc, node.cause):
                if raised is not None:
                    self.expression(scope, raised)
        elif isinstance(node, ast.Assert):
            self.test(scope, node.test)
            if node.msg is not None:
                self.expression(scope, node.msg)
        elif isinstance(node, ast.Expr):
            self.expression(scope, node.value)
        elif isinstance(node, ast.Global):
            scope.globals_.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.globals_.update(node.names)  # a store there escapes the function like a global one
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if isinstance(node, ast.Import):
                    name = alias.asname or alias.name.split(".")[0]
                    value = self._module_or_lib(alias.name if alias.asname else alias.name.split(".")[0])
                else:
                    base = self._absolute(module, node.module, node.level)
                    full = f"{base}.{alias.name}" if base else alias.name
                    value = Val(kind="module", ref=self.modules[full]) if full in self.modules else \
                        self.global_value(self.modules[base], alias.name) if base in self.modules else \
                        Val(kind="lib", ref=_normal(full))
                    name = alias.asname or alias.name
                self.assign(scope, ast.Name(id=name), value, node)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Attribute):
                    owner = self.expression(scope, target.value)
                    if owner.kind in ("lib", "module", "package"):
                        self.flag(module, node, f"a library or program attribute .{target.attr} is deleted")
                else:
                    self.expression(scope, target)
        elif isinstance(node, ast.Match):
            subject = self.expression(scope, node.subject)
            for case in node.cases:
                self.pattern(scope, case.pattern, subject, node)
                if case.guard is not None:
                    self.test(scope, case.guard)
                self.block(scope, case.body)
        elif isinstance(node, (ast.Pass, ast.Break, ast.Continue)):
            pass
        else:
            raise Unfollowable(f"{module.path}:{node.lineno}: a {type(node).__name__} statement")

    def block(self, scope: Scope, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.statement(scope, statement)

    def pattern(self, scope: Scope, pattern: ast.pattern, subject: Val, node: ast.AST) -> None:
        module = scope.function.module
        if isinstance(pattern, ast.MatchValue):
            if subject.dirty and _constant(pattern.value) is _NO_CONST:
                self.flag(module, node, "the tainted value is matched against a non-literal")
        elif isinstance(pattern, ast.MatchAs):
            if pattern.pattern is not None:
                self.pattern(scope, pattern.pattern, subject, node)
            if pattern.name:
                self.assign(scope, ast.Name(id=pattern.name), subject, node)
        elif isinstance(pattern, ast.MatchOr):
            for sub in pattern.patterns:
                self.pattern(scope, sub, subject, node)
        elif isinstance(pattern, ast.MatchSingleton):
            pass
        elif isinstance(pattern, (ast.MatchSequence, ast.MatchStar)):
            for sub in getattr(pattern, "patterns", []):
                self.pattern(scope, sub, _element(subject), node)
            if isinstance(pattern, ast.MatchStar) and pattern.name:
                self.assign(scope, ast.Name(id=pattern.name), subject, node)
        elif subject.dirty:
            self.flag(module, node, f"the tainted value is matched by a {type(pattern).__name__}")

    def test(self, scope: Scope, node: ast.expr) -> Val:
        """A condition: in a loop, a branch on a value mixing the tainted one with another non-literal leaks (the
        early exit of a hand-written comparison; once after the loop it is the verdict)."""
        value = self.expression(scope, node)
        if value.mixed and scope.loops:
            self.flag(scope.function.module, node, "a branch in a loop on a value mixing the tainted one with another")
        return value

    # -- expressions --------------------------------------------------------------------------------------------
    def name(self, scope: Scope | None, name: str) -> Val:
        walker = scope
        while walker is not None:
            if name in walker.env and name not in walker.globals_:
                return walker.env[name]
            walker = walker.function.outer
        module = scope.function.module if scope is not None else None
        return self.global_value(module, name) if module is not None else Val(kind="unknown")

    def expression(self, scope: Scope, node: ast.expr) -> Val:  # noqa: C901 - one case per kind of expression
        self.tick()
        module = scope.function.module
        const = _constant(node)
        if const is not _NO_CONST:
            return Val(const=const)
        if isinstance(node, ast.Name):
            if node.id in INTROSPECTIVE_BUILTINS and self.name(scope, node.id).ref == f"builtins.{node.id}":
                self.flag(module, node, f"introspection: {node.id}")
            return self.name(scope, node.id)
        if isinstance(node, ast.Attribute):
            base = self.expression(scope, node.value)
            if node.attr in INTROSPECTIVE_ATTRS:
                self.flag(module, node, f"introspection: .{node.attr}")
            return self.member(module, node, base, node.attr)
        if isinstance(node, ast.Call):
            return self.call(scope, node)
        if isinstance(node, ast.Compare):
            values = [self.expression(scope, node.left), *(self.expression(scope, c) for c in node.comparators)]
            nodes = [node.left, *node.comparators]
            for index, op in enumerate(node.ops):
                pair = (values[index], values[index + 1])
                literal = [_literal(nodes[index], pair[0]), _literal(nodes[index + 1], pair[1])]
                if isinstance(op, (ast.In, ast.NotIn)):
                    # a tainted needle in a non-literal haystack, or any needle but a literal in a tainted one
                    if (pair[0].dirty and not literal[1]) or (pair[1].dirty and not literal[0]):
                        self.flag(module, node, f"the tainted value is compared ({type(op).__name__})")
                elif any(v.dirty for v in pair) and not any(literal):
                    self.flag(module, node, f"the tainted value is compared ({type(op).__name__})")
            return Val(mixed=any(v.mixed for v in values))
        if isinstance(node, ast.BoolOp):
            values = [self.test(scope, v) for v in node.values]
            return join(*values)
        if isinstance(node, ast.UnaryOp):
            value = self.expression(scope, node.operand)
            return Val(mixed=value.mixed) if isinstance(node.op, ast.Not) else _taint_of(value)
        if isinstance(node, ast.BinOp):
            left, right = self.expression(scope, node.left), self.expression(scope, node.right)
            return self.binary(left, right, node)
        if isinstance(node, ast.IfExp):
            self.test(scope, node.test)
            return join(self.expression(scope, node.body), self.expression(scope, node.orelse))
        if isinstance(node, ast.JoinedStr):
            return _taint_of(*(self.expression(scope, v) for v in node.values))
        if isinstance(node, ast.FormattedValue):
            value = self.expression(scope, node.value)
            if node.format_spec is not None:
                value = _taint_of(value, self.expression(scope, node.format_spec))
            return _taint_of(value)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return _container(*(self.expression(scope, e.value if isinstance(e, ast.Starred) else e)
                                for e in node.elts))
        if isinstance(node, ast.Dict):
            keys = [self.expression(scope, k) for k in node.keys if k is not None]
            values = [self.expression(scope, v) for v in node.values]
            items = frozenset(_constant(k) for k, v in zip(node.keys, values, strict=True)
                              if k is not None and v.dirty and isinstance(_constant(k), str))
            spread = [v for k, v in zip(node.keys, values, strict=True) if k is None]
            if any(k.dirty for k in keys) or any(v.dirty for k, v in zip(node.keys, values, strict=True)
                                                  if k is not None and not isinstance(_constant(k), str)) \
                    or any(v.dirty for v in spread):
                return _container(*keys, *values)
            return Val(items=items, kind="fresh") if items else Val(kind="fresh")
        if isinstance(node, ast.Subscript):
            container = self.expression(scope, node.value)
            return self.lookup(scope, node, container, self.expression(scope, node.slice), node.slice)
        if isinstance(node, ast.Slice):
            return _taint_of(*(self.expression(scope, p) for p in (node.lower, node.upper, node.step) if p))
        if isinstance(node, ast.Starred):
            return self.expression(scope, node.value)
        if isinstance(node, ast.NamedExpr):
            value = self.expression(scope, node.value)
            self.assign(scope, node.target, value, node)
            return value
        if isinstance(node, ast.Lambda):
            return self.function(module, node, scope)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            scope.loops += 1
            try:
                for generator in node.generators:
                    iterable = self.expression(scope, generator.iter)
                    self.assign(scope, generator.target, _element(iterable), node)
                    for condition in generator.ifs:
                        self.test(scope, condition)
                if isinstance(node, ast.DictComp):
                    return _container(self.expression(scope, node.key), self.expression(scope, node.value))
                return _container(self.expression(scope, node.elt))
            finally:
                scope.loops -= 1
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)):
            value = self.expression(scope, node.value) if node.value is not None else CLEAN
            if isinstance(node, (ast.Yield, ast.YieldFrom)) and value.dirty:
                new = value if scope.returned is None else join(scope.returned, value)
                scope.changed = scope.changed or new != scope.returned
                scope.returned = new
            return _taint_of(value) if value.dirty else Val(kind="unknown")
        raise Unfollowable(f"{module.path}:{getattr(node, 'lineno', 0)}: a {type(node).__name__} expression")

    def member(self, module: Module, node: ast.AST, base: Val, attr: str) -> Val:
        """``base.attr``: a library object or a program module's name, else a method (or attribute) bound to the
        value it was read from, so that a call of it is judged by what that value is."""
        if base.kind in ("lib", "module", "package"):
            value = self.attribute(base, attr)
            if value.kind == "lib" and _introspective(value.ref):
                self.flag(module, node, f"introspection: {value.ref}")
            return value
        if base.items and not base.taint:
            return Val(items=base.items, kind="items-method", ref=(attr, _shallow(base)))
        if base.dirty:
            return Val(taint=True, mixed=base.mixed, kind="tainted-method", ref=(attr, _shallow(base)))
        return Val(mixed=base.mixed, kind=f"{base.kind or ('literal' if base.literal else 'plain')}-method",
                   ref=(attr, _shallow(base)))

    def binary(self, left: Val, right: Val, node: ast.AST) -> Val:
        if not (left.dirty or right.dirty):
            if left.literal and right.literal:
                try:
                    return Val(const=_fold(left.const, right.const, node))
                except Exception:  # noqa: BLE001 - not a foldable constant
                    return CLEAN
            return CLEAN
        other = right if left.dirty else left
        mixed = left.mixed or right.mixed or (left.dirty and right.dirty) or not (other.literal or other.dirty)
        return Val(taint=True, mixed=mixed, part=left.part or right.part)

    def lookup(self, scope: Scope, node: ast.AST, base: Val, index: Val, index_node: ast.expr) -> Val:
        """``base[index]``: a mapping of the attacker's items gives the item's value; any other lookup with the
        tainted value as its key compares it with the keys."""
        key = _constant(index_node)
        if key is _NO_CONST and index.literal:
            key = index.const
        if base.items and not base.taint:
            return TAINTED if key is _NO_CONST or key in base.items else Val(kind="unknown")
        if index.dirty and not base.literal and not base.dirty:
            self.flag(scope.function.module, node, "a lookup with the tainted value as the key")
        if base.taint:
            if base.kind == "pieces":
                return join(_element(base), _taint_of(index)) if index.dirty else _element(base)
            whole = isinstance(index_node, ast.Slice) and not scope.loops
            return Val(taint=True, mixed=base.mixed or index.mixed, part=base.part or index.part or not whole)
        return _taint_of(base, index) if (base.dirty or index.dirty) else Val(kind="unknown")

    # -- calls --------------------------------------------------------------------------------------------------
    def call(self, scope: Scope, node: ast.Call) -> Val:  # noqa: C901 - one case per kind of callee
        module = scope.function.module
        callee = self.expression(scope, node.func)
        args, star = [], None
        for arg in node.args:
            value = self.expression(scope, arg.value if isinstance(arg, ast.Starred) else arg)
            if isinstance(arg, ast.Starred):
                star = join(star, value) if star else value
            else:
                args.append(value)
        kwargs: dict[str, Val] = {}
        for keyword in node.keywords:
            value = self.expression(scope, keyword.value)
            if keyword.arg is None:
                star = join(star, value) if star else value
            else:
                kwargs[keyword.arg] = value
        every = [*args, *kwargs.values(), *([star] if star else [])]
        dirty = [v for v in every if v.dirty]
        arg_nodes = [a for a in node.args if not isinstance(a, ast.Starred)]

        if callee.kind == "func":
            return self.call_function(callee.ref, args, kwargs, star, (module, node))
        if callee.kind == "lib":
            return self.library_call(scope, node, callee.ref, args, kwargs, star, arg_nodes)
        if callee.kind and callee.kind.endswith("-method"):
            attr, receiver = callee.ref
            return self.method_call(scope, node, receiver, attr, args, kwargs, arg_nodes, dirty)
        if callee.dirty:
            self.flag(module, node, "a call of the tainted value")
            return TAINTED
        if dirty:
            self.flag(module, node, f"the tainted value goes into an unknown call ({ast.unparse(node.func)[:60]})")
            return TAINTED
        return Val(kind="unknown")

    def library_call(self, scope: Scope, node: ast.Call, name: str, args: list[Val], kwargs: dict[str, Val],
                     star: Val | None, arg_nodes: list[ast.expr]) -> Val:
        module = scope.function.module
        every = [*args, *kwargs.values(), *([star] if star else [])]
        dirty = any(v.dirty for v in every)
        short = name.removeprefix("builtins.")
        if short in INTROSPECTIVE_BUILTINS and name.startswith("builtins."):
            self.flag(module, node, f"introspection: {short}()")
            return TAINTED if dirty else Val(kind="unknown")
        if name in ("builtins.getattr", "builtins.setattr", "builtins.delattr", "builtins.hasattr"):
            attr = _constant(arg_nodes[1]) if len(arg_nodes) > 1 else _NO_CONST
            if not isinstance(attr, str) or attr in INTROSPECTIVE_ATTRS:
                self.flag(module, node, f"introspection: {short} with a non-literal name")
                return TAINTED if dirty else Val(kind="unknown")
            target = args[0] if args else CLEAN
            if short in ("setattr", "delattr"):
                if target.kind in ("lib", "module", "package") or (short == "setattr" and len(args) > 2
                                                                     and args[2].dirty):
                    self.flag(module, node, f"{short} on a library or program object, or of the tainted value")
                return CLEAN
            if short == "hasattr":
                return CLEAN
            value = self.attribute(target, attr)
            if value.kind == "lib" and _introspective(value.ref):
                self.flag(module, node, f"introspection: {value.ref}")
            if target.dirty:
                return Val(taint=True, mixed=target.mixed, kind="tainted-method", ref=(attr, _shallow(target)))
            if target.kind in ("hash", "regex", "logger", "fresh", "unknown") or target.literal:
                return Val(kind=f"{target.kind or 'literal'}-method", ref=(attr, _shallow(target)))
            return value
        if _introspective(name):
            self.flag(module, node, f"introspection: {name}")
            return TAINTED if dirty else Val(kind="unknown")
        if name in SANITIZERS:
            if any(v.part for v in every) and not name.startswith("builtins."):
                # a character (or a slice made in a loop) of the attacker's value: a comparison piece by piece
                if name.endswith("compare_digest"):
                    self.flag(module, node, f"the tainted value is compared piece by piece by {name}")
                return Val(taint=True, part=True)
            if name.startswith(("hashlib.", "hmac.")) and name not in ("hmac.compare_digest",):
                return Val(kind="hash")
            return CLEAN
        if name in COMPARERS:
            if dirty:
                others = [v for n, v in zip(arg_nodes, args, strict=False) if not _literal(n, v)]
                if short in ("min", "max", "sorted") or star is not None or kwargs or len(others) > 1 or \
                        len(arg_nodes) != len(args):
                    self.flag(module, node, f"the tainted value is compared by {name}")
            return Val(mixed=any(v.mixed for v in every)) if name.startswith("operator.") else _taint_of(*every)
        if name in _REGEX_FUNCTIONS:
            pattern = args[0] if args else CLEAN
            if dirty and not (arg_nodes and _literal(arg_nodes[0], pattern)):
                self.flag(module, node, f"the tainted value meets a non-literal pattern in {name}")
            return _taint_of(*every) if dirty else Val(kind="unknown")
        if name == "re.compile":
            return Val(kind="regex") if arg_nodes and _literal(arg_nodes[0], args[0]) else \
                _taint_of(*every) if dirty else Val(kind="unknown")
        if name == "logging.getLogger":
            return Val(kind="logger")
        if name.startswith("logging.") and name.rpartition(".")[2] in _LOGGING:
            return CLEAN
        if name in ("builtins.map", "builtins.filter", "functools.reduce"):
            return self.higher_order(scope, node, name, args, every)
        if name in ("builtins.any", "builtins.all") and any(v.mixed for v in every) and True:
            self.flag(module, node, f"{short}() stops at the first element mixing the tainted value with another")
        if name in PROPAGATORS or _exception(name):
            if name == "builtins.dict" and len(args) == 1 and args[0].items and not kwargs:
                return args[0]
            return _taint_of(*every) if dirty else Val(kind="fresh") if short in ("list", "dict", "set") \
                else Val(kind="unknown")
        if name.startswith(("builtins.str.", "builtins.bytes.", "builtins.bytearray.")) and args:
            attr = name.rpartition(".")[2]
            return self.method_call(scope, node, args[0], attr, args[1:], kwargs, arg_nodes[1:],
                                    [v for v in every[1:] if v.dirty])
        if dirty:
            self.flag(module, node, f"the tainted value goes into {name}")
            return TAINTED
        return Val(kind="unknown")

    def higher_order(self, scope: Scope, node: ast.Call, name: str, args: list[Val], every: list[Val]) -> Val:
        module = scope.function.module
        if not args:
            return CLEAN
        function, rest = args[0], args[1:]
        dirty = any(v.dirty for v in rest)
        if not dirty:
            return Val(kind="unknown")
        elements = [_element(v) for v in rest]
        if function.kind == "func":
            if name == "functools.reduce":
                accumulator = join(*(rest[1:2] or [CLEAN]), _element(rest[0]))
                for _ in range(3):
                    accumulator = join(accumulator, self.call_function(function.ref, [accumulator,
                                                                                      _element(rest[0])],
                                                                       {}, None, (module, node)))
                return accumulator
            result = self.call_function(function.ref, elements, {}, None, (module, node))
            return _taint_of(result, *rest) if name == "builtins.filter" else _container(result)
        if function.kind == "lib" and function.ref in PROPAGATORS | SANITIZERS:
            return _taint_of(*rest) if function.ref in PROPAGATORS else CLEAN
        if function.kind == "lib" and function.ref in COMPARERS:
            self.flag(module, node, f"the tainted value is compared by {function.ref} through {name}")
            return CLEAN
        if function.kind == "tainted-method" or function.kind and function.kind.endswith("-method"):
            attr, receiver = function.ref
            return _container(self.method_call(scope, node, receiver, attr, elements, {}, [], elements))
        self.flag(module, node, f"the tainted value goes through {name} with an unknown function")
        return TAINTED

    def method_call(self, scope: Scope, node: ast.Call, receiver: Val, attr: str, args: list[Val],
                    kwargs: dict[str, Val], arg_nodes: list[ast.expr], dirty: list[Val]) -> Val:
        module = scope.function.module
        every = [*args, *kwargs.values()]
        fresh = isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
            bool(scope.fresh.get(node.func.value.id))
        if attr in _FILLING and fresh:  # a fresh local container takes the value: it is tainted now
            if dirty:
                assert isinstance(node.func, ast.Attribute)
                self.assign(scope, node.func.value, _container(*every), node, fresh=True)
            return CLEAN
        literal = all(_literal(n, v) for n, v in zip(arg_nodes, args, strict=False)) and \
            len(arg_nodes) == len(args) and all(v.literal for v in kwargs.values())
        if receiver.items and not receiver.taint:  # a mapping with the attacker's value under some keys
            if attr in ("get", "pop", "__getitem__", "setdefault"):
                key = args[0].const if args and args[0].literal else _NO_CONST
                if any(v.dirty for v in args[1:]):
                    return TAINTED
                return TAINTED if key is _NO_CONST or key in receiver.items else Val(kind="unknown")
            if attr in ("keys", "__len__", "__contains__"):
                return CLEAN
            if attr in ("copy",):
                return receiver
            return Val(taint=True, kind="pieces")  # values(), items(): the attacker's whole value among others
        if receiver.dirty:
            if attr in _SEARCHING:
                if not literal:
                    self.flag(module, node, f"the tainted value is searched or compared by .{attr}()")
                if attr in ("split", "rsplit", "partition", "rpartition") and receiver.taint:
                    return Val(taint=True, mixed=receiver.mixed, part=receiver.part, kind="pieces")
                return _taint_of(receiver, *every)
            if attr == "splitlines" and receiver.taint:
                return Val(taint=True, mixed=receiver.mixed, part=receiver.part, kind="pieces")
            if attr in _KEEPING:
                return _taint_of(receiver, *every)
            self.flag(module, node, f"an unknown method .{attr}() of the tainted value")
            return TAINTED
        if receiver.kind == "hash" and attr in _HASH_METHODS:
            return Val(kind="hash") if attr == "copy" else CLEAN
        if receiver.kind == "regex" and attr in _REGEX_METHODS:
            return _taint_of(*every) if dirty else Val(kind="unknown")
        if receiver.kind == "logger" and attr in _LOGGING:
            return CLEAN
        if not dirty:
            return Val(kind="unknown")
        if receiver.literal:  # "".join(parts), "{}:{}".format(a, b), "bearer".startswith(x)
            if attr in _SEARCHING and attr not in ("strip", "lstrip", "rstrip", "split", "rsplit", "partition",
                                                   "rpartition", "replace", "translate", "maketrans"):
                return CLEAN
            if attr in _KEEPING or attr in ("strip", "lstrip", "rstrip"):
                return _taint_of(*every)
        if attr in ("join", "format"):
            # sep.join(parts), template.format(...) on a non-literal receiver: no comparison, the result keeps it
            return _taint_of(*every)
        self.flag(module, node, f"the tainted value goes into .{attr}() of an object the check does not know")
        return TAINTED

    # -- introspection and rewiring (whatever the taint) --------------------------------------------------------
    def introspection(self, module: Module, node: ast.AST) -> None:
        """Syntactic checks of a function reached from an entry: dunder or frame attributes, imports of
        introspective modules (names resolve when the function is analysed)."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr in INTROSPECTIVE_ATTRS:
                self.flag(module, sub, f"introspection: .{sub.attr}")
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in sub.names] if isinstance(sub, ast.Import) else \
                    [f"{sub.module}.{a.name}" if sub.module else a.name for a in sub.names]
                for name in names:
                    if _introspective(_normal(name)):
                        self.flag(module, sub, f"introspection: import {name}")

    def module_level(self, module: Module) -> None:
        """A module's top-level code (and its class bodies): introspection, and stores into attributes of library
        modules or other program modules."""
        for node in _top_level(module.tree):
            if isinstance(node, ast.Attribute) and node.attr in INTROSPECTIVE_ATTRS:
                self.flag(module, node, f"introspection: .{node.attr}")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [f"{node.module}.{a.name}" if node.module else a.name for a in node.names]
                for name in names:
                    if _introspective(_normal(name)):
                        self.flag(module, node, f"introspection: import {name}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("setattr", "delattr", "exec", "eval", "compile", "globals", "vars", "locals",
                                     "__import__", "getattr") and \
                    self.global_value(module, node.func.id).kind == "lib":
                self.flag(module, node, f"introspection: {node.func.id}() at the module's top level")
            elif isinstance(node, (ast.Attribute, ast.Name)) and isinstance(node.ctx, ast.Load):
                value = self._static_value(module, node, frozenset())
                if value.kind == "lib" and _introspective(value.ref):
                    self.flag(module, node, f"introspection: {value.ref}")
        for node in ast.walk(module.tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(sub.value, ast.Name):
                        base = self.global_value(module, sub.value.id)
                        if base.kind in ("lib", "module", "package"):
                            self.flag(module, node, f"a store into {ast.unparse(sub)[:60]}")
        # what the import runs: the functions its top level calls are reached too
        top = ast.FunctionDef(name="<module>", args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                                                                 kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                                 defaults=[]),
                              body=[n for n in module.tree.body if not isinstance(n, ast.ClassDef)],
                              decorator_list=[], returns=None, lineno=1, col_offset=0)
        self.call_function(Function(module, top), [], {}, None, (module, module.tree))


def _top_level(tree: ast.Module) -> Iterable[ast.AST]:
    """The nodes of a module that run when it is imported: all but the bodies of its functions (class bodies run)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and child not in \
                    (*getattr(node, "decorator_list", []), node.args):
                continue
            stack.append(child)


def _exception(name: str) -> bool:
    """A built-in exception class (raising one with the tainted value in its message compares nothing)."""
    found = getattr(builtins, name.removeprefix("builtins."), None) if name.startswith("builtins.") else None
    return isinstance(found, type) and issubclass(found, BaseException)


def _introspective(name: str) -> bool:
    if name.startswith("builtins."):
        return name.partition(".")[2] in INTROSPECTIVE_BUILTINS
    return any(name == m or name.startswith(m + ".") for m in INTROSPECTIVE_MODULES)


def _normal(name: str) -> str:
    """A library name as the check knows it (``_operator`` is ``operator``, ``posixpath`` is ``os.path``)."""
    head, _, rest = name.partition(".")
    head = {"_operator": "operator", "posixpath": "os.path", "_hashlib": "hashlib", "_sha256": "hashlib",
            "_md5": "hashlib", "_sha1": "hashlib", "_sha512": "hashlib", "_blake2": "hashlib", "_sha3": "hashlib",
            "_hmac": "hmac", "_json": "json", "_sre": "re", "_io": "io", "_codecs": "codecs"}.get(head, head)
    return f"{head}.{rest}" if rest else head


def _constant(node: ast.AST | None) -> Any:
    """The value of a literal expression (constants, and tuples, lists, sets or frozensets of them)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        values = [_constant(e) for e in node.elts]
        if all(v is not _NO_CONST for v in values):
            try:
                return tuple(values) if not isinstance(node, ast.Set) else frozenset(values)
            except TypeError:
                return _NO_CONST
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _constant(node.operand)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    return _NO_CONST


def _literal(node: ast.expr, value: Val) -> bool:
    """A comparison operand the attacker's value may meet: a literal written there (not a module's constant)."""
    return _constant(node) is not _NO_CONST and not value.dirty


def _fold(left: Any, right: Any, node: ast.AST) -> Any:
    op = getattr(node, "op", None)
    if isinstance(op, ast.Add) and type(left) is type(right) and isinstance(left, (str, bytes, int)):
        return left + right
    raise ValueError("not folded")


def _container(*values: Val) -> Val:
    """A container holding ``values`` (``pieces`` when any is tainted: its elements are those values again)."""
    dirty = [v for v in values if v.dirty]
    if not dirty:
        return Val(kind="fresh")
    return Val(taint=True, mixed=any(v.mixed for v in dirty), part=any(v.part for v in dirty), kind="pieces")


def _element(value: Val) -> Val:
    """An element of (or what iterating gives of) ``value``: of a container of pieces, such a piece; of the tainted
    value itself, a piece of it (a character); of a mapping of the attacker's items, a key."""
    if not value.taint:
        return Val(kind="unknown")
    return Val(taint=True, mixed=value.mixed, part=value.part or value.kind != "pieces")


def _pairwise(targets: list[ast.expr], value: ast.expr) -> list[tuple[ast.expr, ast.expr]] | None:
    """``a, b = x, y``: each target with its own part (None for any other assignment)."""
    if len(targets) != 1 or not isinstance(targets[0], (ast.Tuple, ast.List)) or \
            not isinstance(value, (ast.Tuple, ast.List)) or len(targets[0].elts) != len(value.elts) or \
            any(isinstance(e, ast.Starred) for e in [*targets[0].elts, *value.elts]):
        return None
    return list(zip(targets[0].elts, value.elts, strict=True))


def _is_fresh(node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "dict", "set")


def _is_index(node: ast.expr) -> bool:
    return isinstance(node, (ast.Name, ast.BinOp, ast.UnaryOp))


def _target_names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _entry_exploited(analysis: Analysis, entry: dict[str, Any]) -> list[str]:
    """The findings of following one entry point's tainted argument (a finding when the entry cannot be found)."""
    module = analysis.modules.get(str(entry.get("module", "")))
    if module is None:
        return [f"no module {entry.get('module')}"]
    target = analysis.global_value(module, str(entry.get("function", "")))
    if target.kind != "func":
        return [f"{entry.get('module')}.{entry.get('function')} is not a function the check can follow"]
    function: Function = target.ref
    params = function.node.args
    positional = [*params.posonlyargs, *params.args]
    value = Val(items=frozenset({str(entry["key"])})) if entry.get("key") is not None else TAINTED
    position = entry.get("position")
    args: list[Val] = []
    kwargs: dict[str, Val] = {}
    if isinstance(position, int) and (position < len(positional) or params.vararg is not None):
        args = [CLEAN] * position + [value]
    elif entry.get("param") in {p.arg for p in [*positional, *params.kwonlyargs]} or params.kwarg is not None:
        kwargs = {str(entry.get("param")): value}
    else:
        return [f"{function.name} takes no argument {entry.get('param')!r} at position {position}"]
    before = len(analysis.findings)
    analysis.call_function(function, args, kwargs, None, (module, function.node))
    return analysis.findings[before:]


def findings(rule: dict[str, Any], files: dict[str, str]) -> list[str]:
    """What the check found against ``rule`` in ``files`` (empty: not exploited)."""
    if rule.get("check") != "secret_compare":
        return [f"unknown static check {rule.get('check')!r}"]
    try:
        analysis = Analysis(files)
        found: list[str] = []
        for module in analysis.modules.values():
            analysis.module_level(module)
        found += analysis.findings
        analysis.findings = []
        for entry in rule.get("entries") or []:
            if not isinstance(entry, dict):
                return ["a malformed entry in the rule"]
            found += _entry_exploited(analysis, entry)
        if not rule.get("entries"):
            found.append("the rule names no entry point")
        return found
    except Unfollowable as error:
        return [f"cannot follow: {error}"]
    except RecursionError:
        return ["cannot follow: the program nests too deep"]


def static_exploited(program: Program, files: dict[str, str]) -> dict[str, bool]:
    """Per static probe of ``program`` (``Detect(kind="static")``), whether ``files`` (a version of its files: the
    vulnerable one, the reference fix, a model's patch) still have the weakness."""
    out: dict[str, bool] = {}
    for probe in program.exploits():
        if probe.detect is not None and probe.detect.kind == "static":
            out[probe.id] = bool(findings(dict(probe.detect.rule or {}), files))
    return out


__all__ = ["findings", "static_exploited"]
