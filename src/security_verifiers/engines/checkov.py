"""Checkov, run in-process and offline, as the second, independent engine of the config-audit oracle.

Checkov's own checks are mapped onto our rule ids through ``checkov_map(platform)`` (the catalog's ``checkov:``
lists); every other Checkov check is ignored by :meth:`CheckovEngine.scan` and only shown, raw, to the
model through :meth:`CheckovEngine.scan_raw`.

Why in-process: a ``checkov`` process costs ~2 s of imports per file; a warm in-process run costs a few ms.
These measures keep it fast and safe inside a long-running host process:

* :data:`OFFLINE_ENV` is set before checkov is imported: no update check, no platform mapping download, no
  SCA, *sequential* parsing (checkov otherwise forks a process per run, which is slow and unsafe in a
  threaded host) and no SIGALRM-based parse timeout (it would replace the host's signal handler).
* Graph checks and their solvers run in the calling thread instead of in new thread pools per check and
  file (:func:`_run_graph_checks_sequentially`, :class:`InlineExecutor`; this patches checkov's
  ``BaseRegistry.run_checks`` and its solvers' ``ThreadPoolExecutor`` process-wide, nothing outside checkov).
* :meth:`scan` runs only the mapped checks, matched by exact id (checkov's own filter matches every check
  against every pattern with ``fnmatch``, which costs more than the checks themselves).
* The expression evaluator of checkov's Terraform variable rendering is memoised on the string
  (:func:`_memoise_terraform_evaluator`): an original and its patch share nearly every expression.
* checkov's import adds a handler to the root logger; the host's logging configuration is restored after
  the import.

Suppression comments (``#checkov:skip=...``, ``checkov.io/skip`` annotations) are neutralised before a scan,
with the same text length so line numbers do not move: a patch must not be able to silence the oracle.

Thread-safety: checkov keeps global registries and a global parallel runner, so runs are serialised with a
lock; the engine may be shared by threads, but scans do not run in parallel.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import EngineUnavailable
from security_verifiers.engines import configs
from security_verifiers.engines.findings import Finding, catalog, checkov_map

#: Environment that keeps checkov offline and single-process (also used by the CLI benchmark).
OFFLINE_ENV: dict[str, str] = {
    "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true",  # no PyPI version check
    "BC_SKIP_MAPPING": "TRUE",  # no download of the Bridgecrew id mapping
    "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false",  # no package (SCA) scan against the platform
    "CKV_VALIDATE_SECRETS": "false",  # never validate secrets against their services
    "CKV_GITHUB_CONFIG_FETCH_DATA": "false",
    "CKV_GITLAB_CONFIG_FETCH_DATA": "false",
    "CHECKOV_PARALLELIZATION_TYPE": "none",  # parse in this process: no fork per run
    "HCL_PARSE_TIMEOUT_SEC": "0",  # no SIGALRM timer around HCL parsing: signals belong to the host process
}
FRAMEWORKS: dict[str, str] = {"kubernetes": "kubernetes", "terraform": "terraform"}
FILE_NAMES: dict[str, str] = {"kubernetes": "manifest.yaml", "terraform": "main.tf"}

_SUPPRESSION = re.compile(r"(checkov|bridgecrew|cortex)(:skip=|\.io/skip)", re.IGNORECASE)


def neutralize_suppressions(text: str) -> str:
    """Disable checkov's in-file suppressions, keeping every line and column in place.

    >>> neutralize_suppressions("acl = 1 # checkov:skip=CKV_AWS_20\\n")
    'acl = 1 # checkov:noop=CKV_AWS_20\\n'
    >>> neutralize_suppressions("checkov.io/skip1: CKV_K8S_16=ok")
    'checkov.io/noop1: CKV_K8S_16=ok'
    """
    return _SUPPRESSION.sub(lambda m: m.group(1) + re.sub("skip", "noop", m.group(2), flags=re.IGNORECASE), text)


def scratch_dir() -> str | None:
    """Where engines write the text they scan: RAM-backed ``/dev/shm`` when it is usable, else the default."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) else None


class InlineExecutor(Executor):
    """An executor that runs each task at once in the caller's thread.

    checkov's graph solvers create a new ``ThreadPoolExecutor`` (never shut down) per check and submit one
    task per resource; the threads cost more than the tasks. Running them inline gives the same results,
    in a deterministic order."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as err:  # noqa: BLE001 - delivered through the future, as a pool would
            future.set_exception(err)
        return future


def _run_graph_checks_sequentially(self: Any, graph_connector: Any, runner_filter: Any,
                                   report_type: str) -> dict[Any, list[Any]]:
    """checkov's ``BaseRegistry.run_checks`` without its thread pool: the same checks, run one after another.

    A pool of threads per file costs more than the few graph checks it runs, and much more when the CPUs are
    busy. With :class:`InlineExecutor`, measured on a loaded 2-CPU machine: Terraform 16 -> 5 ms per file."""
    check_results: dict[Any, list[Any]] = {}
    for check in self.checks:
        if runner_filter.should_run_check(check, report_type=report_type):
            self.run_check_parallel(check, check_results, graph_connector)
    return check_results


def _use_libyaml_for_kubernetes() -> None:
    """Give checkov's Kubernetes YAML loader libyaml's parser (a C ``CSafeLoader`` base) instead of pure Python.

    checkov's ``SafeLineLoader`` only adds ``__startline__``/``__endline__`` to each mapping in
    ``construct_mapping``; the C parser builds the same nodes with the same marks, and the constructor and
    resolver are the same Python classes, so the documents are identical. Parsing was ~60% of a checkov
    Kubernetes scan (about 10 ms per manifest). Without libyaml, checkov's own loader stays in place."""
    import yaml
    from checkov.kubernetes.parser import k8_yaml

    base = getattr(yaml, "CSafeLoader", None)
    if base is None or not hasattr(k8_yaml, "SafeLineLoader"):
        return

    class CSafeLineLoader(base):  # type: ignore[misc, valid-type]
        replaces = k8_yaml.SafeLineLoader  # checkov's own loader, kept for the equivalence test

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
            mapping["__startline__"] = node.start_mark.line + 1  # as checkov's SafeLineLoader
            mapping["__endline__"] = node.end_mark.line + 1
            return mapping

    k8_yaml.SafeLineLoader = CSafeLineLoader


def _canonical_kubernetes_documents() -> None:
    """Give checkov's Kubernetes checks the documents with the canonical literals of :mod:`canonical` added (a
    list of ranges covering the internet also holds ``0.0.0.0/0``, a role listing every verb also holds ``*``), as
    our Rego rules read them: checkov's checks compare with those literals. Terraform gets the same through the
    evaluated document (:func:`terraform_eval.evaluate_file`).

    A NetworkPolicy that restricts no ingress (:func:`canonical.networkpolicy_restricts_ingress`: allow-all, from
    every address or namespace, egress only) loses its ``podSelector`` here: CKV2_K8S_6 ("pod not selected by any
    NetworkPolicy") counts every policy whose selector matches, and a policy admitting everyone protects no pod.
    Checkov's graph links no pod to a policy without a selector; no other check reads NetworkPolicy."""
    from checkov.kubernetes.parser import k8_yaml

    from security_verifiers.engines.canonical import kubernetes_in_place, networkpolicy_restricts_ingress

    loads = getattr(k8_yaml.loads, "__wrapped__", k8_yaml.loads)

    def canonical_loads(content: str) -> Any:
        documents = loads(content)
        for document in documents if isinstance(documents, list) else []:
            kubernetes_in_place(document)
            if isinstance(document, dict) and document.get("kind") == "NetworkPolicy" \
                    and isinstance(document.get("spec"), dict) and not networkpolicy_restricts_ingress(document):
                document["spec"] = {k: v for k, v in document["spec"].items() if k != "podSelector"}
        return documents

    canonical_loads.__wrapped__ = loads  # type: ignore[attr-defined]
    k8_yaml.loads = canonical_loads


#: Most expressions checkov's Terraform renderer evaluates repeat from file to file (an original and its patch share
#: nearly all of them): its evaluator (regexes and a restricted ``eval``, 1-2 ms a call) is memoised on the string.
_EVALUATED_MAX = 16_384
_EVALUATED_ATOMS = (str, int, float, bool, type(None))


def _memoise_terraform_evaluator() -> None:
    """Memoise checkov's ``evaluate_terraform`` for string inputs: a pure function of its arguments, except
    ``timestamp()``, which is never memoised. A list or dict result is handed out as a private copy (checkov
    edits what it renders)."""
    from checkov.terraform.graph_builder.variable_rendering import evaluate_terraform as evaluator

    evaluate = getattr(evaluator.evaluate_terraform, "__wrapped__", evaluator.evaluate_terraform)
    memo: dict[tuple[str, bool], Any] = {}
    lock = threading.Lock()

    def memoised(input_str: Any, keep_interpolations: bool = True) -> Any:
        if type(input_str) is not str or "timestamp" in input_str:
            return evaluate(input_str, keep_interpolations)
        key = (input_str, bool(keep_interpolations))
        with lock:
            hit = memo.get(key, memo)
        if hit is memo:
            hit = evaluate(input_str, keep_interpolations)
            with lock:
                if len(memo) >= _EVALUATED_MAX:
                    memo.clear()
                memo[key] = hit
        return hit if isinstance(hit, _EVALUATED_ATOMS) else copy.deepcopy(hit)

    memoised.__wrapped__ = evaluate  # type: ignore[attr-defined]
    evaluator.evaluate_terraform = memoised


class _SharedHclParse:
    """What checkov's Terraform file loader sees as the ``hcl2`` module: the same parser, returning the
    *evaluated* document our own engines read (:func:`configs.evaluated_terraform`), so Checkov judges the
    values Terraform would compute (``!false`` is ``true``), with the module context of the current scan."""

    context: threading.local = threading.local()

    def __getattr__(self, name: str) -> Any:
        import hcl2

        return getattr(hcl2, name)

    @classmethod
    def load(cls, file: Any) -> dict[str, Any]:
        """``hcl2.load`` (= ``hcl2.loads(file.read())``), evaluated, from the memo, as a private copy: checkov
        edits it."""
        context = getattr(cls.context, "files", ())
        return copy.deepcopy(configs.evaluated_terraform(file.read(), context).document)


def _share_hcl_parses() -> None:
    """Let checkov's Terraform loader read the memoised, evaluated parse (:func:`configs.evaluated_terraform`).

    One document for every engine is the point (a patch must not look secure to one engine and insecure to
    another), and the HCL parser is the largest single cost of a Terraform scan. A parse error still reaches
    checkov as an exception, as hcl2's own would."""
    from checkov.terraform import parser_utils

    if getattr(parser_utils, "hcl2", None) is not None:
        parser_utils.hcl2 = _SharedHclParse()


@dataclass(frozen=True)
class _Checkov:
    k8s_runner: Any
    tf_runner: Any
    filter_cls: Any
    exact_filter_cls: Any
    version: str
    iam_scanner: Any  # holds a class-level cache of parsed IAM policies

    def clear_caches(self) -> None:
        """Forget what checkov cached from earlier scans. Its IAM policy analysis caches parsed policies at class
        level, keyed by file path and resource address: every scan writes ``main.tf``, so without this a patched
        file would be judged with the original's policies."""
        self.iam_scanner.policy_document_cache.clear()


_LOADED: _Checkov | None = None
_LOAD_LOCK = threading.Lock()


def installed_version() -> str:
    """The installed checkov's version, without importing checkov's runners (its ``version`` module only);
    EngineUnavailable when checkov is not installed."""
    try:
        from checkov.version import version
    except ImportError as err:
        raise EngineUnavailable(f"checkov cannot be imported ({err}); install checkov==3.3.30") from err
    return str(version)


def _load() -> _Checkov:
    """Import checkov once per process, offline, without letting it reconfigure the host's logging."""
    global _LOADED
    with _LOAD_LOCK:
        if _LOADED is not None:
            return _LOADED
        os.environ.update(OFFLINE_ENV)
        root = logging.getLogger()
        saved = (root.level, list(root.handlers), list(root.filters))
        try:
            from checkov.common.checks_infra.solvers.attribute_solvers import base_attribute_solver
            from checkov.common.checks_infra.solvers.resource_solvers import base_resource_solver
            from checkov.common.graph.checks_infra.registry import BaseRegistry
            from checkov.common.models.enums import ParallelizationType
            from checkov.common.parallelizer.parallel_runner import parallel_runner
            from checkov.common.util.env_vars_config import env_vars_config
            from checkov.kubernetes.runner import Runner as K8sRunner
            from checkov.runner_filter import RunnerFilter
            from checkov.terraform.checks.utils.base_cloudsplaining_iam_scanner import (
                BaseTerraformCloudsplainingIAMScanner,
            )
            from checkov.terraform.runner import Runner as TfRunner
            from checkov.version import version
        except ImportError as err:
            raise EngineUnavailable(f"checkov cannot be imported ({err}); install checkov==3.3.30") from err
        finally:
            root.setLevel(saved[0])
            root.handlers[:] = saved[1]
            root.filters[:] = saved[2]
        # The parallel runner and the env config are singletons built at import; if checkov was imported
        # before us, fix them here.
        parallel_runner.type = ParallelizationType.NONE
        env_vars_config.HCL_PARSE_TIMEOUT_SEC = 0
        BaseRegistry.run_checks = _run_graph_checks_sequentially  # type: ignore[method-assign]
        base_attribute_solver.ThreadPoolExecutor = InlineExecutor  # type: ignore[misc, assignment]
        base_resource_solver.ThreadPoolExecutor = InlineExecutor  # type: ignore[misc, assignment]
        _use_libyaml_for_kubernetes()
        _canonical_kubernetes_documents()
        _share_hcl_parses()
        _memoise_terraform_evaluator()

        class ExactRunnerFilter(RunnerFilter):  # type: ignore[misc, valid-type]
            """Matches ``--check`` ids exactly instead of with fnmatch (same result for plain ids)."""

            @staticmethod
            def check_matches(check_id: str, bc_check_id: str | None, pattern_list: list[str]) -> bool:
                return check_id in pattern_list or (bc_check_id is not None and bc_check_id in pattern_list)

        _LOADED = _Checkov(K8sRunner, TfRunner, RunnerFilter, ExactRunnerFilter, str(version),
                           BaseTerraformCloudsplainingIAMScanner)
        return _LOADED


@dataclass(frozen=True)
class _Failed:
    check_id: str
    name: str
    resource: str  # our identity
    start_line: int


class CheckovEngine:
    """Checkov's checks, mapped onto our rule ids. Build one per process (see the module docstring)."""

    def __init__(self) -> None:
        self._version = installed_version()
        self._mapped = {platform: sorted(checkov_map(platform)) for platform in FRAMEWORKS}
        self._lock = threading.Lock()
        self._scratch = scratch_dir()

    def version(self) -> str:
        return self._version

    def load(self) -> None:
        """Import checkov now (~2 s) rather than at the first scan: a scoring worker's warm-up."""
        _ = self._ck

    @property
    def _ck(self) -> _Checkov:
        """checkov itself, imported at the first scan of the process: a run whose scans are all in the scan store
        (``scan_store``) never pays its ~2 s import. A failure to load is EngineUnavailable, never a finding."""
        try:
            return _load()
        except EngineUnavailable:
            raise
        except Exception as err:  # noqa: BLE001 - any failure to load is "the engine is unavailable"
            raise EngineUnavailable(f"the Checkov engine failed to load: {type(err).__name__}: {err}") from err

    def scan(self, platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
        """Findings of the mapped checks, one per (rule, resource), sorted. Raises ConfigParseError on
        unparseable text (checkov itself would silently skip the file). ``context``: the other files of a
        Terraform module (variables and locals are read from them)."""
        rules = catalog()
        mapping = checkov_map(platform)
        found: dict[tuple[str, str], list[str]] = {}
        for failed in self._run(platform, text, context, only_mapped=True):
            rule_id = mapping.get(failed.check_id)
            if rule_id is None:
                continue
            found.setdefault((rule_id, failed.resource), []).append(f"{failed.check_id}: {failed.name}")
        return [Finding(rule_id=rule_id, resource=resource, path=None, engines=("checkov",),
                        severity=rules[rule_id].severity, message="; ".join(sorted(set(messages))))
                for (rule_id, resource), messages in sorted(found.items())]

    def scan_raw(self, platform: str, text: str, context: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """Every failed checkov check (mapped or not), for the model-facing tool: ``check_id``, ``name``,
        ``resource`` (our identity), ``rule_id`` (our rule, or None when the check is not mapped) and
        ``line``. Sorted by resource, then check id."""
        mapping = checkov_map(platform)
        unique: dict[tuple[str, str], dict[str, Any]] = {}
        for f in self._run(platform, text, context, only_mapped=False):
            unique.setdefault((f.resource, f.check_id), {"check_id": f.check_id, "name": f.name, "resource": f.resource,
                                                         "rule_id": mapping.get(f.check_id), "line": f.start_line})
        return [unique[k] for k in sorted(unique, key=lambda k: (k[0], _check_sort_key(k[1])))]

    # ------------------------------------------------------------------------------------------ internals

    def _run(self, platform: str, text: str, context: tuple[str, ...], only_mapped: bool) -> list[_Failed]:
        if platform not in FRAMEWORKS:
            raise ValueError(f"unknown platform {platform!r}")
        identify = _identity_resolver(platform, text, context)  # parses first: raises ConfigParseError
        framework = FRAMEWORKS[platform]
        ck = self._ck
        if only_mapped:
            runner_filter = ck.exact_filter_cls(framework=[framework], checks=self._mapped[platform])
        else:
            runner_filter = ck.filter_cls(framework=[framework])
        directory = tempfile.mkdtemp(prefix="sv-checkov-", dir=self._scratch)
        try:
            path = os.path.join(directory, FILE_NAMES[platform])
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(neutralize_suppressions(text))
            runner_cls = ck.k8s_runner if platform == "kubernetes" else ck.tf_runner
            with self._lock:
                ck.clear_caches()
                _SharedHclParse.context.files = tuple(context)
                try:
                    report = runner_cls().run(root_folder=None, files=[path], runner_filter=runner_filter)
                finally:
                    _SharedHclParse.context.files = ()
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        out = []
        for record in report.failed_checks:
            line_range = record.file_line_range or [0, 0]
            start = int(line_range[0]) if line_range else 0
            out.append(_Failed(check_id=str(record.check_id), name=str(record.check_name),
                               resource=identify(str(record.resource), start), start_line=start))
        return out


@dataclass(frozen=True)
class CheckInfo:
    """One check of the pinned Checkov registry: what the catalog maps onto a rule (or excludes, with a reason)."""

    id: str
    name: str
    platform: str  # "terraform" or "kubernetes"
    kind: str  # "resource", "data" or "graph"
    resource_types: tuple[str, ...]
    source: str  # the check's file inside the checkov package, to read what it tests


def registered_checks() -> dict[tuple[str, str], CheckInfo]:
    """Every Terraform and Kubernetes check of the installed Checkov, by (platform, check id) (loads checkov: ~1.5 s).

    One id can exist on both platforms: the ``CKV_K8S_*`` checks also run on Terraform's ``kubernetes_*``
    resources.

    The catalog test compares this with the catalog, so a Checkov upgrade that adds checks fails loudly
    until each new check is mapped onto a rule or excluded with a reason."""
    import inspect

    _load()
    from checkov.common.checks_infra.registry import get_graph_checks_registry
    from checkov.kubernetes.checks.resource.registry import registry as k8s_registry
    from checkov.terraform.checks.data.registry import data_registry
    from checkov.terraform.checks.resource.registry import resource_registry

    out: dict[tuple[str, str], CheckInfo] = {}
    root = Path(inspect.getfile(resource_registry.__class__)).parents[3]  # site-packages/checkov

    def source_of(obj: Any) -> str:
        try:
            return Path(inspect.getfile(type(obj))).relative_to(root.parent).as_posix()
        except (TypeError, ValueError):
            return ""

    for platform, kind, registry in (("terraform", "resource", resource_registry), ("terraform", "data", data_registry),
                                     ("kubernetes", "resource", k8s_registry)):
        groups = [*registry.checks.values(), *getattr(registry, "wildcard_checks", {}).values()]
        for checks in groups:
            for check in checks:
                if (platform, check.id) not in out:
                    types = getattr(check, "supported_resources", None) or check.supported_entities
                    out[(platform, check.id)] = CheckInfo(check.id, str(check.name), platform, kind,
                                                          tuple(sorted(types)), source_of(check))
    for platform in ("terraform", "kubernetes"):
        graph = get_graph_checks_registry(platform)
        graph.load_checks()
        for check in graph.checks:
            path = Path(str(getattr(check, "check_path", "") or ""))
            try:
                source = path.relative_to(root.parent).as_posix()
            except ValueError:
                source = str(path)
            out.setdefault((platform, check.id), CheckInfo(check.id, str(check.name), platform, "graph",
                                               tuple(sorted(check.resource_types or ())), source))
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], _check_sort_key(kv[0][1]))))


def _check_sort_key(check_id: str) -> tuple[str, int, str]:
    """CKV_K8S_8 before CKV_K8S_10."""
    head, _, tail = check_id.rpartition("_")
    return (head, int(tail), "") if tail.isdigit() else (check_id, 0, "")


def _identity_resolver(platform: str, text: str, context: tuple[str, ...] = ()) -> Any:
    """A function (checkov resource id, start line) -> our resource identity, built from our own parse."""
    if platform == "kubernetes":
        objects = configs.parse_kubernetes(text)
        by_id = {f"{o.kind}.{o.namespace or 'default'}.{o.name}": o.resource for o in objects}
        workloads = {(o.namespace or "default", o.name): o.resource for o in objects if o.pod_spec is not None}

        def k8s(resource: str, start: int) -> str:
            if resource in by_id:
                return by_id[resource]
            kind, _, rest = resource.partition(".")
            namespace, _, name = rest.partition(".")  # Kind.namespace.name (a namespace never contains a dot)
            # Graph checks report a workload's pod template as a Pod named <workload>.<labels>: the workload.
            owners = [r for (ns, n), r in workloads.items() if ns == namespace and name.startswith(n + ".")]
            if kind == "Pod" and owners:
                return max(owners, key=len)
            return f"{kind}/{name}" if name else resource

        return k8s

    blocks: dict[str, list[configs.TFBlock]] = {}
    for block in configs.parse_terraform(text, context).blocks:
        blocks.setdefault(f"{block.type}.{block.name}", []).append(block)

    def terraform(resource: str, start: int) -> str:
        # checkov names data sources without the "data." prefix and instances of count/for_each as addr["k"]
        base = re.sub(r"\[[^\]]*\]$", "", resource.removeprefix("data."))
        candidates = blocks.get(base, [])
        if len(candidates) > 1:
            candidates = [b for b in candidates if b.start_line == start] or candidates
        return candidates[0].address if candidates else resource

    return terraform
