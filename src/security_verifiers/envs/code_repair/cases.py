"""Real code in: ``sv data import code-repair --format cases DIR --wheelhouse WHEELS``.

A *case* is a folder that holds a small real program with one weakness, its fix, and the probes that judge a patch,
in the project's own probe format (``docs/code-repair-judge.md``). Every case is self-checked before it becomes an
item: the vulnerable version passes its functional probes and every exploit probe works against it; the fixed
version passes every functional probe and blocks every exploit, live and replayed as a script (:mod:`.selfcheck`).
A case that fails is rejected with the reason; nothing unproven is written.

Layout of one case (``DIR`` is a folder of such folders, or one case folder itself)::

    <case>/
      case.toml          metadata (below)
      vulnerable/        the program: 1 to 3 Python modules, at the paths the model will see (``shop/cart.py``...)
      fixed/             the same modules, fixed (optional: without it the case is a detection-only item)
      tests.py           the hidden test module: ``probe_<id>(ctx)`` functions, standard library only
      probes.json        [{"id", "kind": "functional", "expect"} | {"id", "kind": "exploit", "detect": {...}}]
      fixtures/          files written into the program's project directory before a run (optional; text;
                         ``{canary}`` is replaced by the run's canary)
      requirements.txt   third-party packages the program imports (optional): ``name==version`` lines only,
                         every dependency listed too (comments and blank lines allowed)

``case.toml``::

    id = "yaml-pipeline"                 # lower case, digits and '-': the item's variant
    cwe = "CWE-502"
    domain = "CI pipeline definitions"
    description = "..."                  # the intended behaviour, as the model is told it
    timeout_s = 5.0                      # optional (default 3): wall-clock limit of one run of all probes
    static_ids = ["B506"]                # optional: bandit tests that flag the weakness at its location
    [location]                           # where the weakness is in the vulnerable version
    file = "pipeline/config.py"
    start = 20
    end = 20
    [advisory]                           # what the case is modelled on
    id = "CVE-2017-18342"
    package = "PyYAML"                   # optional
    url = "https://..."                  # optional
    related = ["CVE-2020-14343"]         # optional
    summary = "..."                      # optional

**Without ``fixed/``** the self-check cannot show that the exploit probes are passable by any fix, so such a case
is never a repair task: it becomes a detection-only item (``kind="detection"``: scored on naming the CWE and the
location, its repair metrics not applicable), like the corpus importers' records. If it has tests, the vulnerable
version must still pass its functional probes and be exploited by every exploit probe, or the case is rejected.

**Third-party packages.** ``requirements.txt`` pins every package the program imports *and every dependency of
them* (``name==version``; ranges, extras, URLs and options are refused). The wheels come from a local wheelhouse
(``--wheelhouse WHEELS``, made with ``pip download --only-binary :all: -d WHEELS name==version ...``): pip resolves
the set offline (``--no-index --find-links WHEELS``, binary wheels only, for the Python that runs the programs),
and a case whose set would pull in a package it does not list is rejected. Each distinct set is installed once
into a site directory of its own under :func:`.sites.sites_root`, named by the hash of the requirements and of
the wheels installed (:func:`.sites.site_key`), made read-only, with a ``.complete`` marker written last; a
complete one is reused. The item records the key (``target.site``); the sandbox shows that directory read-only on
the program's ``sys.path`` and nothing else of the host's packages. Judging such an item elsewhere needs the same
import run there first (a missing site directory is an error that says so).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import ConfigError, InfraError
from security_verifiers.core.importing import Problem, ProblemLog
from security_verifiers.core.types import Item
from security_verifiers.envs.code_repair.program import CWE, Location, Probe, Program

#: The family of every item this importer writes (its variant is the case's id).
FAMILY = "imported-cases"
CASE_FILE = "case.toml"
_CASE_ID = re.compile(r"^[a-z][a-z0-9-]{1,62}$")
#: A pinned requirement: a project name (PEP 508) and an exact version (PEP 440 characters).
_PINNED = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*==\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")
#: Longest fixture kept (bytes): fixtures are small text files (keys, configuration, data).
MAX_FIXTURE = 256 * 1024
_SKIPPED = ("__pycache__",)


class CaseError(Exception):
    """Why a case is rejected (one sentence, naming the file)."""


class _Meta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Advisory(_Meta):
    """The public advisory a case is modelled on."""

    id: str = Field(min_length=3, max_length=80)
    package: str | None = None
    url: str | None = None
    related: list[str] = Field(default_factory=list)
    summary: str | None = None


class CaseMeta(_Meta):
    """``case.toml``."""

    id: str
    cwe: str
    domain: str = Field(min_length=1, max_length=120)
    description: str = Field(min_length=1, max_length=2000)
    location: Location
    advisory: Advisory
    timeout_s: float = Field(3.0, gt=0, le=30)
    static_ids: list[str] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _CASE_ID.match(value):
            raise ValueError(f"id {value!r} must be 2 to 63 characters of a-z, 0-9 and '-', starting with a letter")
        return value

    @field_validator("cwe")
    @classmethod
    def _cwe(cls, value: str) -> str:
        if not CWE.match(value):
            raise ValueError(f"cwe {value!r} must look like CWE-89")
        return value


_PROBES = TypeAdapter(list[Probe])


@dataclass
class Case:
    """One case folder, read and checked for its layout (not yet run)."""

    path: Path
    meta: CaseMeta
    files: dict[str, str]
    fixed: dict[str, str] | None
    tests: str | None
    probes: list[Probe] | None
    fixtures: dict[str, str]
    requirements: list[str]

    @property
    def name(self) -> str:
        return self.path.name


@dataclass
class CasesReport:
    """What an import did: the items, the cases rejected (folder, reason), the site directories used."""

    items: list[Item] = field(default_factory=list)
    problems: ProblemLog = field(default_factory=ProblemLog)
    read: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)
    #: site key -> {"requirements": [...], "reused": bool, "seconds": float}
    sites: dict[str, dict[str, Any]] = field(default_factory=dict)
    detection: int = 0
    check_seconds: float = 0.0

    def reject(self, case: str, reason: str) -> None:
        self.rejected.append((case, reason))
        self.problems.add(Problem(case, None, reason))


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = " ".join(str(first["msg"]).split())
    return f"{where}: {message}" if where else message


def _text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CaseError(f"{what} is not UTF-8 text") from None
    except OSError as err:
        raise CaseError(f"{what} cannot be read: {err.strerror or err}") from None


def _tree(folder: Path, what: str) -> dict[str, Path]:
    """Every file under ``folder`` by its relative POSIX path (``__pycache__`` folders and ``*.pyc`` left out)."""
    found: dict[str, Path] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part in _SKIPPED for part in relative.parts) or path.suffix == ".pyc":
            continue
        if path.is_symlink():
            raise CaseError(f"{what}/{relative.as_posix()} is a symbolic link; cases hold plain files")
        if path.is_file():
            found[relative.as_posix()] = path
    return found


def _modules(folder: Path, what: str) -> dict[str, str]:
    if not folder.is_dir():
        raise CaseError(f"no {what}/ folder (the program's modules)")
    paths = _tree(folder, what)
    if not paths:
        raise CaseError(f"{what}/ holds no files")
    others = [p for p in paths if not p.endswith(".py")]
    if others:
        raise CaseError(f"{what}/ may hold only Python modules; found {', '.join(others[:3])}")
    if not 1 <= len(paths) <= 3:
        raise CaseError(f"{what}/ holds {len(paths)} modules; a task has one to three")
    return {p: _text(path, f"{what}/{p}") for p, path in paths.items()}


def parse_requirements(text: str, where: str = "requirements.txt") -> list[str]:
    """The pinned requirements of a ``requirements.txt``, normalised (``PyYAML == 6.0.2`` -> ``pyyaml==6.0.2``).

    >>> parse_requirements("# parser\\nPyYAML == 6.0.2\\n\\njinja2==3.1.6  # templates\\n")
    ['jinja2==3.1.6', 'pyyaml==6.0.2']
    """
    pinned: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        match = _PINNED.match(line)
        if match is None:
            raise CaseError(f"{where}:{number}: {line!r} is not pinned as name==version (every package the "
                            "program imports, and each of their dependencies, must be pinned to one version)")
        name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
        if name in pinned:
            raise CaseError(f"{where}:{number}: {name} is listed twice")
        pinned[name] = match.group(2)
    return sorted(f"{name}=={version}" for name, version in pinned.items())


def read_case(path: Path) -> Case:
    """One case folder, checked for its layout; a :class:`CaseError` says what is wrong."""
    meta_path = path / CASE_FILE
    if not meta_path.is_file():
        raise CaseError(f"no {CASE_FILE}")
    try:
        raw = tomllib.loads(_text(meta_path, CASE_FILE))
    except tomllib.TOMLDecodeError as err:
        raise CaseError(f"{CASE_FILE} is not TOML: {err}") from None
    try:
        meta = CaseMeta.model_validate(raw)
    except ValidationError as err:
        raise CaseError(f"{CASE_FILE}: {_first_error(err)}") from None
    files = _modules(path / "vulnerable", "vulnerable")
    fixed = _modules(path / "fixed", "fixed") if (path / "fixed").exists() else None
    if fixed is not None and set(fixed) != set(files):
        raise CaseError(f"fixed/ must hold the same modules as vulnerable/ ({', '.join(sorted(files))}), "
                        f"not {', '.join(sorted(fixed))}")
    if fixed is not None and fixed == files:
        raise CaseError("fixed/ is the same as vulnerable/")
    if meta.location.file not in files:
        raise CaseError(f"{CASE_FILE}: location file {meta.location.file!r} is not a module of vulnerable/")
    tests_path, probes_path = path / "tests.py", path / "probes.json"
    if tests_path.exists() != probes_path.exists():
        raise CaseError("tests.py and probes.json come together: one is missing")
    if fixed is not None and not tests_path.exists():
        raise CaseError("a case with fixed/ needs tests.py and probes.json (the self-check runs them)")
    tests = probes = None
    if tests_path.exists():
        tests = _text(tests_path, "tests.py")
        try:
            compile(tests, "tests.py", "exec")
        except SyntaxError as err:
            raise CaseError(f"tests.py:{err.lineno}: {err.msg}") from None
        try:
            probes = _PROBES.validate_python(json.loads(_text(probes_path, "probes.json")))
        except ValueError as err:  # JSON errors and pydantic's ValidationError alike
            detail = _first_error(err) if isinstance(err, ValidationError) else str(err)
            raise CaseError(f"probes.json: {detail}") from None
        missing = [p.id for p in probes if f"def probe_{p.id}(" not in tests]
        if missing:
            raise CaseError(f"tests.py has no probe_{missing[0]}(ctx) for the probe {missing[0]!r} of probes.json")
    fixtures: dict[str, str] = {}
    if (path / "fixtures").is_dir():
        for relative, fixture in _tree(path / "fixtures", "fixtures").items():
            if fixture.stat().st_size > MAX_FIXTURE:
                raise CaseError(f"fixtures/{relative} is larger than {MAX_FIXTURE // 1024} KiB")
            fixtures[relative] = _text(fixture, f"fixtures/{relative}")
    requirements: list[str] = []
    if (path / "requirements.txt").exists():
        requirements = parse_requirements(_text(path / "requirements.txt", "requirements.txt"))
    return Case(path=path, meta=meta, files=files, fixed=fixed, tests=tests, probes=probes, fixtures=fixtures,
                requirements=requirements)


def case_folders(paths: Sequence[Path]) -> tuple[list[Path], list[Problem]]:
    """The case folders ``paths`` name: each path is a case folder (it has ``case.toml``) or a folder of them (its
    sub-folders, sorted; hidden and ``__pycache__`` ones skipped, others without ``case.toml`` reported)."""
    found: list[Path] = []
    problems: list[Problem] = []
    for path in paths:
        if not path.is_dir():
            raise ConfigError(f"{path}: not a directory (--format cases reads folders of cases)")
        if (path / CASE_FILE).is_file():
            found.append(path)
            continue
        subfolders = [p for p in sorted(path.iterdir()) if p.is_dir() and not p.name.startswith((".", "__"))]
        for folder in subfolders:
            if (folder / CASE_FILE).is_file():
                found.append(folder)
            else:
                problems.append(Problem(folder.name, None, f"not a case: no {CASE_FILE}"))
        if not subfolders:
            raise ConfigError(f"{path}: neither a case (no {CASE_FILE}) nor a folder of cases")
    return found, problems


# --- site directories --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wheel:
    name: str
    version: str
    path: Path
    sha256: str


def _pip(args: Sequence[str], what: str, timeout: float = 600) -> None:
    """``python -m pip`` of this environment, isolated from the user's pip configuration and environment (no index
    URLs from there), never asking, never reaching an index (every call passes ``--no-index``)."""
    command = [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", "--no-input", "--quiet",
               *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise CaseError(f"{what}: pip took longer than {timeout:.0f}s") from None
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("ERROR")] or lines[-2:]
        raise CaseError(f"{what}: pip failed: {' '.join(errors)[:600]}")


@cache
def _judged_python() -> tuple[str, ...]:
    """pip options for the Python that runs the judged programs, when it is not this one."""
    from security_verifiers.engines.sandbox import check_available

    python = check_available().python
    mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
    try:
        theirs = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError) as err:
        raise ConfigError(f"cannot ask the programs' Python ({python}) for its version: {err}") from None
    return () if theirs == mine else ("--python-version", theirs)


def resolve(requirements: Sequence[str], wheelhouse: Path) -> list[Wheel]:
    """The wheels of ``wheelhouse`` that pip would install for ``requirements`` (offline, binary only), found by a
    dry run; a :class:`CaseError` when one is missing or the set is not closed (pip would add a package the
    requirements do not pin)."""
    with tempfile.TemporaryDirectory(prefix="sv-cases-") as scratch:
        listed = Path(scratch) / "requirements.txt"
        listed.write_text("\n".join(requirements) + "\n")
        report_path = Path(scratch) / "report.json"
        _pip(["install", "--dry-run", "--ignore-installed", "--no-index", "--find-links", str(wheelhouse),
              "--only-binary", ":all:", *_judged_python(), "--target", str(Path(scratch) / "site"),
              "--report", str(report_path), "-r", str(listed)],
             f"resolving {', '.join(requirements)} from the wheelhouse {wheelhouse}")
        report = json.loads(report_path.read_text())
    wheels = []
    for entry in report.get("install", []):
        metadata, info = entry.get("metadata", {}), entry.get("download_info", {})
        url = str(info.get("url", ""))
        digest = (info.get("archive_info") or {}).get("hashes", {}).get("sha256")
        if not url.startswith("file://") or not digest:
            raise CaseError(f"pip would install {metadata.get('name')} from {url or 'somewhere'} rather than a wheel "
                            "of the wheelhouse")
        name = re.sub(r"[-_.]+", "-", str(metadata.get("name", ""))).lower()
        path = Path(url2pathname(urlsplit(url).path))
        wheels.append(Wheel(name, str(metadata.get("version", "")), path, digest))
    pinned = {r.split("==")[0] for r in requirements}
    extra = sorted(f"{w.name}=={w.version}" for w in wheels if w.name not in pinned)
    if extra:
        raise CaseError(f"requirements.txt does not pin every dependency: pip would also install {', '.join(extra)}; "
                        "add them (name==version) to requirements.txt")
    return wheels


def _read_only(root: Path) -> None:
    for parent, dirs, files in os.walk(root, topdown=False):
        for name in files:
            path = Path(parent) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & ~0o222 | 0o444)
        for name in dirs:
            path = Path(parent) / name
            if not path.is_symlink():
                path.chmod(0o555)


def remove_tree(path: Path) -> None:
    """Remove a (read-only) site directory or a failed attempt at one."""
    if not path.exists():
        return
    for parent, dirs, _ in os.walk(path):
        for name in dirs:
            sub = Path(parent) / name
            if not sub.is_symlink():
                sub.chmod(stat.S_IRWXU)
    path.chmod(stat.S_IRWXU)
    shutil.rmtree(path)


def check_sites_root() -> Path:
    """:func:`.sites.sites_root`, when the judge's sandbox can show it: not under the folders the judge mounts a
    fresh tmpfs over (/tmp, /work, /run/judge), where a site directory would be hidden from the programs."""
    from security_verifiers.envs.code_repair.sites import sites_root

    return sites_root()


def install_site(requirements: Sequence[str], wheelhouse: Path) -> tuple[str, bool]:
    """The key of the site directory holding ``requirements`` installed from ``wheelhouse``, and whether it was
    already there (reused). Installed offline into a scratch folder beside it, made read-only, moved into place,
    and marked complete last; a folder left without its marker (an interrupted import) is replaced."""
    from security_verifiers.envs.code_repair.sites import site_key, sites_root

    wheels = resolve(requirements, wheelhouse)
    key = site_key(requirements, [w.sha256 for w in wheels])
    final = sites_root() / key
    if (final / ".complete").is_file():
        return key, True
    sites_root().mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=sites_root()))
    try:
        _pip(["install", "--no-index", "--no-deps", "--only-binary", ":all:", *_judged_python(), "--no-warn-conflicts",
              "--no-warn-script-location", "--target", str(scratch), *[str(w.path) for w in wheels]],
             f"installing {', '.join(requirements)}")
        (scratch / ".requirements").write_text("".join(f"{w.name}=={w.version} sha256:{w.sha256}\n" for w in wheels))
        _read_only(scratch)
        if (final / ".complete").is_file():  # another import finished it meanwhile
            remove_tree(scratch)
            return key, True
        if final.exists():  # an earlier import stopped before its marker
            remove_tree(final)
        scratch.rename(final)
    except BaseException:
        remove_tree(scratch)
        raise
    marker = final / ".complete"
    marker.write_text(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    marker.chmod(0o444)
    final.chmod(0o555)
    return key, False


# --- items ---------------------------------------------------------------------------------------------------------


def _source(case: Case) -> dict[str, str]:
    advisory = case.meta.advisory
    source = {"dataset": "cases", "case": case.meta.id, "folder": case.name, "advisory": advisory.id}
    for key, value in (("package", advisory.package), ("url", advisory.url)):
        if value:
            source[key] = value
    if advisory.related:
        source["related"] = ", ".join(advisory.related)
    return source


def to_program(case: Case, site: str | None) -> Program:
    """The case as a :class:`Program` (a case without a fix gets a stand-in fix, run by nothing: see
    :func:`import_cases`)."""
    fixed = case.fixed if case.fixed is not None else {p: s + "\n# no reference fix\n" for p, s in case.files.items()}
    return Program(family=FAMILY, variant=case.meta.id, domain=case.meta.domain, cwe=case.meta.cwe, files=case.files,
                   fixed=fixed, description=case.meta.description, location=case.meta.location,
                   tests=case.tests or "", probes=case.probes or [], fixtures=case.fixtures,
                   static_ids=case.meta.static_ids, timeout_s=case.meta.timeout_s,
                   requirements=case.requirements, site=site if case.requirements else None)


def program_item(case: Case, program: Program, split: str) -> Item:
    """A repair item, built as the generator builds its own (``generator.to_item``), with the case's source."""
    from security_verifiers.envs.code_repair.generator import to_item

    item = to_item(program, split, {"format": "cases", "case": case.meta.id})
    return item.model_copy(update={"target": {**item.target, "source": _source(case)},
                                   "meta": {**item.meta, "source": f"cases/{case.name}", "case": case.meta.id}})


def detection_item(case: Case, split: str) -> Item:
    """A detection-only item (no fix: scored on the CWE and the location, like the corpus importers' records)."""
    target = {"kind": "detection", "family": FAMILY, "variant": case.meta.id, "domain": case.meta.domain,
              "cwe": case.meta.cwe, "location": case.meta.location.model_dump(), "source": _source(case)}
    lines = sum(len(text.splitlines()) for text in case.files.values())
    return Item(id=item_id("cri", {"format": "cases", "case": case.meta.id, "files": case.files}), split=split,
                input={"files": case.files, "description": case.meta.description}, target=target,
                meta={"source": f"cases/{case.name}", "case": case.meta.id, "lines": lines})


def _vulnerable_problems(programs: Sequence[Program], parallel: int) -> list[list[str]]:
    """For cases without a fix: the vulnerable version passes its functional probes and every exploit works."""
    from security_verifiers.envs.code_repair.execution import execute_many
    from security_verifiers.envs.code_repair.verdict import judge, static_verdicts

    out = []
    for program, run in zip(programs, execute_many([(p, p.files) for p in programs], parallel=parallel), strict=True):
        if isinstance(run, InfraError):
            raise run
        verdict = judge(program, run, static_verdicts(program, program.files))
        problems = []
        if not verdict.functional_ok:
            problems.append(f"vulnerable version fails functional probes {verdict.functional_failed}: "
                            f"{verdict.notes}")
        if verdict.blocked:
            problems.append(f"vulnerable version is not exploited by {verdict.blocked}")
        out.append(problems)
    return out


def import_cases(paths: Sequence[Path], wheelhouse: Path | None = None, split: str = "local",
                 limit: int | None = None, parallel: int = 4,
                 progress: Callable[[str], None] | None = None) -> CasesReport:
    """Every case under ``paths`` that passes its self-check, as an item; the others rejected with the reason.

    Raises ConfigError (nothing imported) when cases need packages and no wheelhouse is given, or it is not a
    folder."""
    from security_verifiers.envs.code_repair.selfcheck import self_check

    say = progress or (lambda _line: None)
    report = CasesReport()
    folders, problems = case_folders(paths)
    for problem in problems:
        report.problems.add(problem)
    if limit is not None:
        folders = folders[:limit]
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for number, folder in enumerate(folders, start=1):
        report.read += 1
        try:
            case = read_case(folder)
        except CaseError as err:
            report.reject(folder.name, str(err))
            say(f"[{number}/{len(folders)}] {folder.name}: rejected: {err}")
            continue
        if case.meta.id in seen:
            report.reject(folder.name, f"id {case.meta.id!r} is already the id of {seen[case.meta.id]}")
            say(f"[{number}/{len(folders)}] {folder.name}: rejected: duplicate id {case.meta.id!r}")
            continue
        seen[case.meta.id] = folder.name
        cases.append(case)
        probes = case.probes or []
        kinds = [p.kind for p in probes]
        say(f"[{number}/{len(folders)}] {folder.name}: {len(case.files)} module(s), "
            f"{kinds.count('functional')} functional + {kinds.count('exploit')} exploit probe(s)"
            f"{', no fix (detection only)' if case.fixed is None else ''}"
            f"{', needs ' + ' '.join(case.requirements) if case.requirements else ''}")
    needing = [c for c in cases if c.requirements]
    if needing and wheelhouse is None:
        wanted = sorted({r for c in needing for r in c.requirements})
        raise ConfigError(f"{len(needing)} case(s) need third-party packages ({', '.join(c.name for c in needing)}) "
                          f"and no --wheelhouse was given: make one with `pip download --only-binary :all: -d WHEELS "
                          f"{' '.join(wanted)}` (with their dependencies) and pass --wheelhouse WHEELS")
    if needing and wheelhouse is not None and not wheelhouse.is_dir():
        raise ConfigError(f"--wheelhouse {wheelhouse}: no such directory (make it with `pip download --only-binary "
                          ":all: -d DIR name==version ...`)")
    if needing:
        check_sites_root()
    sites: dict[tuple[str, ...], str | CaseError] = {}
    for requirements in sorted({tuple(c.requirements) for c in needing}):
        started = time.perf_counter()
        try:
            key, reused = install_site(requirements, wheelhouse)  # type: ignore[arg-type]
        except CaseError as err:
            sites[requirements] = err
            say(f"site for {' '.join(requirements)}: failed: {err}")
            continue
        sites[requirements] = key
        seconds = round(time.perf_counter() - started, 2)
        report.sites[key] = {"requirements": list(requirements), "reused": reused, "seconds": seconds}
        say(f"site {key} for {' '.join(requirements)}: {'reused' if reused else 'installed'} ({seconds}s)")
    built: list[tuple[Case, Program | None]] = []
    for case in cases:
        site = sites.get(tuple(case.requirements)) if case.requirements else None
        if isinstance(site, CaseError):
            report.reject(case.name, str(site))
            say(f"{case.name}: rejected: {site}")
            continue
        if case.tests is None:  # no fix and no tests: a detection-only item as it stands
            built.append((case, None))
            continue
        try:
            built.append((case, to_program(case, site)))
        except ValidationError as err:
            report.reject(case.name, _first_error(err))
            say(f"{case.name}: rejected: {_first_error(err)}")
    repair = [(c, p) for c, p in built if p is not None and c.fixed is not None]
    unfixed = [(c, p) for c, p in built if p is not None and c.fixed is None]
    started = time.perf_counter()
    if repair:
        say(f"self-check of {len(repair)} case(s): the vulnerable and fixed versions in the sandbox...")
    checks = self_check([p for _, p in repair], parallel=parallel) if repair else []
    vulnerable = _vulnerable_problems([p for _, p in unfixed], parallel) if unfixed else []
    report.check_seconds = round(time.perf_counter() - started, 2)
    verdicts: dict[str, list[str] | Program] = {}
    for (case, program), result in zip(repair, checks, strict=True):
        if result.ok:
            verdicts[case.meta.id] = program.model_copy(update={
                "trivial": sorted(result.trivial), "static_ids": sorted({*program.static_ids, *result.semgrep_rules})})
            say(f"{case.name}: ok (vulnerable {result.vulnerable_wall_s:.1f}s, fixed {result.fixed_wall_s:.1f}s)")
        else:
            verdicts[case.meta.id] = result.problems
    for (case, _), found in zip(unfixed, vulnerable, strict=True):
        verdicts[case.meta.id] = found
        if not found:
            say(f"{case.name}: ok (detection only: the vulnerable version is exploited)")
    for case, _ in built:
        verdict = verdicts.get(case.meta.id, [])
        if isinstance(verdict, Program):
            report.items.append(program_item(case, verdict, split))
        elif verdict:
            reason = "self-check failed: " + "; ".join(verdict)
            report.reject(case.name, reason)
            say(f"{case.name}: rejected: {reason}")
        else:
            report.items.append(detection_item(case, split))
            report.detection += 1
    return report
