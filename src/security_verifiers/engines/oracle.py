"""The config-audit (E2) oracle: what is wrong with a Kubernetes manifest or a Terraform file.

Three engines report findings in one vocabulary (rule id from the catalog, resource identity from
``configs``): our Rego library (the reference), Checkov (an independent second opinion on the same
properties) and our local semgrep rules (hard-coded secrets). The oracle runs all three plus the validity
check (:mod:`validate`) and returns their deduplicated union; the E2 reward is computed from the oracle's
results on the original and on the patched file.

* Every engine must load: a missing engine raises :class:`EngineUnavailable` at construction. There is no
  silent stand-in, because a reward computed with fewer engines is a different reward. Checkov is found then,
  but imported (~2 s) at the first scan that is not in the scan store, or by :meth:`Oracle.load` (a scoring
  worker's warm-up): a run whose scans are all stored never imports it. A failure at that import is
  EngineUnavailable too, raised through the batch, never one text's finding or crash.
* Results are cached in memory by sha256 of (platform, text): the original of an item is scanned once per
  process, and identical patches (common across samples) cost nothing the second time. The in-process
  engines' findings are also kept on disk for every process of the machine (:mod:`.scan_store`): the policy's
  scan of an original and the scorer's, in another process, are one scan, and a second run scans nothing twice.
* semgrep costs ~2 s per process whatever the number of files, so :meth:`Oracle.scan_many` runs one semgrep
  process for a whole batch; Rego and Checkov run in-process per file (a few ms each).

Thread-safety: an :class:`Oracle` may be shared by threads. The cache is guarded by a lock; semgrep runs
are independent subprocesses. Engines must be thread-safe themselves (RegoEngine and CheckovEngine serialise
evaluation with their own locks).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from security_verifiers.core.errors import EngineUnavailable
from security_verifiers.engines.configs import ConfigParseError
from security_verifiers.engines.findings import Finding, catalog
from security_verifiers.engines.scan_store import ScanStore, store_enabled
from security_verifiers.engines.secret_values import SecretValuesEngine

if TYPE_CHECKING:
    from security_verifiers.engines.validate import Issue, ValidationResult

#: Cached results per process (a result is a few KB at most).
DEFAULT_CACHE_SIZE = 4096
_ENGINE_ORDER = {"rego": 0, "checkov": 1, "semgrep": 2, "values": 3}


class _Scanner(Protocol):
    def version(self) -> str: ...

    def scan(self, platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]: ...


class _BatchScanner(Protocol):
    def version(self) -> str: ...

    def scan_many(self, files: list[tuple[str, str]]) -> list[list[Finding]]: ...


@dataclass(frozen=True)
class OracleResult:
    """The oracle's verdict on one text.

    ``valid`` is false when the text does not parse (``parse_error`` says why; there are then no findings)
    or parses but is not a valid manifest / Terraform file (``validation_errors``; findings are still
    reported). ``findings`` are deduplicated by (rule id, resource) and sorted.
    """

    valid: bool
    parse_error: str | None = None
    issues: list[Issue] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: An engine failed on this text (raised, ran out of memory, nested too deep): the text cannot be judged.
    #: On a model's patched file that is the model's failure; on an original it is the scorer's.
    engine_error: str | None = None

    @property
    def keys(self) -> set[tuple[str, str]]:
        """The (rule id, resource) pairs found: what detection and fixes are scored on."""
        return {f.key for f in self.findings}

    @property
    def validation_errors(self) -> list[str]:
        return [issue.message for issue in self.issues]

    @property
    def validation(self) -> ValidationResult:
        """The validation verdict alone (to judge a patched file against its original, see ``new_issues``)."""
        from security_verifiers.engines.validate import ValidationResult

        return ValidationResult(ok=self.valid, issues=list(self.issues), parsed=self.parse_error is None)


#: What the oracle scans: (platform, text) or (platform, text, context), the context being the other files of
#: a Terraform module (their variables, locals and resources are read when evaluating the text).
ScanRequest = tuple[str, str] | tuple[str, str, tuple[str, ...]]


def _request(item: ScanRequest) -> tuple[str, str, tuple[str, ...]]:
    platform, text = item[0], item[1]
    context = tuple(item[2]) if len(item) > 2 else ()  # type: ignore[misc]
    if platform not in ("kubernetes", "terraform"):
        raise ValueError(f"unknown platform {platform!r}")
    if context and platform != "terraform":
        raise ValueError("only Terraform files have a module context")
    return platform, text, context


def cache_key(platform: str, text: str, context: tuple[str, ...] = ()) -> str:
    """sha256 of (platform, text, context): the identity of a scan."""
    digest = hashlib.sha256(f"{platform}\x00{text}".encode())
    for other in context:
        digest.update(b"\x00\x01" + other.encode())
    return digest.hexdigest()


def merge_findings(findings: Sequence[Finding]) -> list[Finding]:
    """The union of several engines' findings, one per (rule id, resource).

    Engines are merged (sorted rego, checkov, semgrep); ``path`` is the most specific one known (a Rego
    path first, then any engine's); ``message`` comes from the same engine; severity always comes from the
    catalog. An unknown rule id is a bug in an engine and raises ValueError.
    """
    rules = catalog()
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        if finding.rule_id not in rules:
            raise ValueError(f"engine {finding.engines} reported unknown rule id {finding.rule_id!r}")
        groups.setdefault(finding.key, []).append(finding)
    out = []
    for (rule_id, resource), group in sorted(groups.items()):
        engines = sorted({e for f in group for e in f.engines}, key=lambda e: (_ENGINE_ORDER.get(e, 9), e))
        ranked = sorted(group, key=lambda f: (f.path is None, min((_ENGINE_ORDER.get(e, 9) for e in f.engines),
                                                                  default=9), f.path or "", f.message))
        best = ranked[0]
        out.append(Finding(rule_id=rule_id, resource=resource, path=best.path, engines=tuple(engines),
                           severity=rules[rule_id].severity, message=best.message))
    return out


class Oracle:
    """All engines, loaded once; ``scan`` / ``scan_many`` give cached :class:`OracleResult` objects.

    The engines may be injected (tests use fakes); by default the real ones are built, and any that cannot
    load raises :class:`EngineUnavailable`.
    """

    def __init__(self, rego: _Scanner | None = None, checkov: _Scanner | None = None,
                 semgrep: _BatchScanner | None = None, cache_size: int = DEFAULT_CACHE_SIZE,
                 values: _Scanner | None = None, store: ScanStore | None = None) -> None:
        self.rego: _Scanner = rego if rego is not None else _load_rego()
        self.checkov: _Scanner = checkov if checkov is not None else _load_checkov()
        self.semgrep: _BatchScanner = semgrep if semgrep is not None else _load_semgrep()
        self.values: _Scanner = values if values is not None else SecretValuesEngine()
        #: Scanner findings on disk, shared by the machine's processes (:mod:`.scan_store`); only the process-wide
        #: oracle of the real engines has one.
        self.store = store
        self.cache_size = cache_size
        self._cache: OrderedDict[str, OracleResult] = OrderedDict()
        self._scanner_cache: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._semgrep_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sv-semgrep")
        self.hits = 0
        self.misses = 0

    def load(self) -> None:
        """Load every engine now that loads lazily (Checkov): a scoring worker's warm-up, so that its first
        batch, timed against the scoring limits, does not pay for imports."""
        for engine in (self.rego, self.checkov, self.semgrep, self.values):
            load = getattr(engine, "load", None)
            if load is not None:
                load()

    def versions(self) -> dict[str, str]:
        """Engine versions and the pinned validation schema, for run metadata: a change here can change rewards."""
        from importlib.metadata import version as package_version

        from security_verifiers.engines.validate import KUBERNETES_VERSION

        return {"rego": self.rego.version(), "checkov": self.checkov.version(), "semgrep": self.semgrep.version(),
                "secret_values": self.values.version(),
                "kubernetes_schema": KUBERNETES_VERSION, "kubernetes_validate": package_version("kubernetes-validate")}

    def scanner_findings(self, platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
        """Rego and Checkov findings (not merged, no semgrep), cached: what the model-facing scanners and the
        baselines see, and the per-file part of :meth:`scan_many`, computed once per text."""
        key = cache_key(platform, text, context)
        with self._cache_lock:
            hit = self._scanner_cache.get(key)
            if hit is not None:
                self._scanner_cache.move_to_end(key)
                return list(hit)
        stored = self.store.get(key) if self.store is not None else None
        if stored is not None:
            found = stored
        else:
            found = [f if f.engines else f.model_copy(update={"engines": ("rego",)})
                     for f in self.rego.scan(platform, text, context)]
            found.extend(self.checkov.scan(platform, text, context))
            found.extend(self.values.scan(platform, text, context))
            if self.store is not None:
                self.store.put(key, found)
        with self._cache_lock:
            self._scanner_cache[key] = tuple(found)
            while len(self._scanner_cache) > self.cache_size:
                self._scanner_cache.popitem(last=False)
        return found

    def scan(self, platform: str, text: str, context: tuple[str, ...] = ()) -> OracleResult:
        return self.scan_many([(platform, text, context)])[0]

    def scan_many(self, items: Sequence[ScanRequest]) -> list[OracleResult]:
        """One result per request, in order; semgrep runs once for all texts not in the cache."""
        requests = [_request(item) for item in items]
        keys = [cache_key(*request) for request in requests]
        results: dict[str, OracleResult] = {}
        todo: dict[str, tuple[str, str, tuple[str, ...]]] = {}
        with self._cache_lock:
            for key, item in zip(keys, requests, strict=True):
                cached = self._cache.get(key)
                if cached is not None:
                    self._cache.move_to_end(key)
                    results[key] = cached
                    self.hits += 1
                elif key not in todo:
                    todo[key] = item
                    self.misses += 1
        if todo:
            fresh = self._compute(list(todo.values()))
            with self._cache_lock:
                for key, result in zip(todo, fresh, strict=True):
                    results[key] = result
                    self._cache[key] = result
                    self._cache.move_to_end(key)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        # Copies: the cached result's lists must not be mutated by a caller.
        return [replace(results[k], issues=list(results[k].issues), findings=list(results[k].findings))
                for k in keys]

    def _semgrep_isolated(self, files: list[tuple[str, str]]) -> list[list[Finding] | _Crash]:
        """semgrep on a batch; when the batch fails, each file alone, so one file's failure stays that file's.
        When every file fails alone too, semgrep itself is broken: that is raised, for the whole batch."""
        try:
            return list(self.semgrep.scan_many(files))
        except Exception as batch_error:  # noqa: BLE001 - retried file by file below
            if len(files) == 1:
                raise
            out: list[list[Finding] | _Crash] = []
            for file in files:
                try:
                    out.extend(self.semgrep.scan_many([file]))
                except Exception as err:  # noqa: BLE001
                    out.append(_Crash(f"semgrep: {type(err).__name__}: {str(err)[:300]}"))
            if all(isinstance(r, _Crash) for r in out):
                raise batch_error
            return out

    def cache_info(self) -> dict[str, int]:
        with self._cache_lock:
            return {"hits": self.hits, "misses": self.misses, "size": len(self._cache), "max_size": self.cache_size}

    def clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()
            self._scanner_cache.clear()

    # ------------------------------------------------------------------------------------------ internals

    def _compute(self, items: list[tuple[str, str, tuple[str, ...]]]) -> list[OracleResult]:
        from security_verifiers.engines.validate import Issue

        # semgrep is a separate process (~0.2 s a batch): it runs while this thread validates and runs the
        # in-process engines. It scans every text (its rules are plain-text patterns); the findings of a
        # text that does not parse are dropped below, as the other engines report none for it either.
        semgrep_run = self._semgrep_thread.submit(self._semgrep_isolated, [(p, t) for p, t, _ in items])
        try:
            validations: list[ValidationResult] = [_validated(p, t, c) for p, t, c in items]
            per_item: list[list[Finding] | str | _Crash] = []  # findings, the parse error, or an engine's failure
            for (platform, text, context), validation in zip(items, validations, strict=True):
                if not validation.parsed:
                    per_item.append(validation.errors[0] if validation.errors else "the text does not parse")
                    continue
                try:
                    found = list(self.scanner_findings(platform, text, context))
                except ConfigParseError as err:  # an engine's parser is stricter than ours
                    per_item.append(str(err) or "the text does not parse")
                    continue
                except EngineUnavailable:  # the scorer's failure (a lazy engine's import), not this text's
                    raise
                except Exception as err:  # noqa: BLE001 - one text's failure must not take the batch with it
                    per_item.append(_Crash(f"{type(err).__name__}: {str(err)[:300]}"))
                    continue
                per_item.append(found)
        finally:
            semgrep_found = semgrep_run.result()  # waits; re-raises a failure of semgrep itself
        out = []
        for validation, result, found in zip(validations, per_item, semgrep_found, strict=True):
            if isinstance(found, _Crash) and not isinstance(result, str):
                result = found
            if isinstance(result, _Crash):
                out.append(OracleResult(valid=False, engine_error=result.message, issues=list(validation.issues)))
                continue
            if isinstance(result, str):
                out.append(OracleResult(valid=False, parse_error=result,
                                        issues=list(validation.issues) or [Issue(("parse",), result)]))
            else:
                out.append(OracleResult(valid=validation.ok, parse_error=None, issues=list(validation.issues),
                                        findings=merge_findings([*result, *found])))
        return out


@dataclass(frozen=True)
class _Crash:
    """An engine failed on one text."""

    message: str


def _validated(platform: str, text: str, context: tuple[str, ...]) -> ValidationResult:
    """Validation that cannot take the batch down: a validator failure is a parse failure of that text."""
    from security_verifiers.engines.validate import Issue, ValidationResult, validate

    try:
        return validate(platform, text, context)
    except (RecursionError, MemoryError) as err:
        message = f"the text cannot be validated: {type(err).__name__}"
        return ValidationResult(ok=False, issues=[Issue(("parse",), message)], parsed=False)


def _load_rego() -> _Scanner:
    try:
        from security_verifiers.engines.rego import RegoEngine
    except ImportError as err:
        raise EngineUnavailable(f"the Rego engine cannot be imported: {err}") from err
    return _build("Rego", RegoEngine)


def _load_checkov() -> _Scanner:
    from security_verifiers.engines.checkov import CheckovEngine

    return _build("Checkov", CheckovEngine)


def _load_semgrep() -> _BatchScanner:
    from security_verifiers.engines.semgrep import SemgrepEngine

    return _build("semgrep", SemgrepEngine)


def _build(name: str, factory: Any) -> Any:
    try:
        return factory()
    except EngineUnavailable:
        raise
    except Exception as err:  # noqa: BLE001 - any failure to load is "the engine is unavailable"
        raise EngineUnavailable(f"the {name} engine failed to load: {type(err).__name__}: {err}") from err


_SINGLETON: Oracle | None = None
_SINGLETON_LOCK = threading.Lock()


def get_oracle() -> Oracle:
    """The process-wide oracle: engines load once (checkov's import alone takes ~2 s) and the cache is shared."""
    global _SINGLETON
    with _SINGLETON_LOCK:
        if _SINGLETON is None:
            oracle = Oracle()
            if store_enabled():
                oracle.store = ScanStore({"rego": oracle.rego.version(), "checkov": oracle.checkov.version(),
                                          "secret_values": oracle.values.version()})
            _SINGLETON = oracle
        return _SINGLETON
