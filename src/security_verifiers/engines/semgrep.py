"""Our local semgrep rules (``policies/semgrep/``: hard-coded private keys, AWS keys, Terraform passwords).

semgrep is a separate process with a fixed start-up cost whatever the number of files, so the engine is
built for batches: :meth:`SemgrepEngine.scan_many` writes all texts into one private directory and runs a
single semgrep process over them. A finding is placed in the resource whose text contains its line
(``configs.resource_at_line``); a finding outside every resource (a provider block, a comment between
documents) gets the resource ``"file"``.

Native mode: ``semgrep`` is a thin Python launcher for ``semgrep-core`` ("osemgrep"), which hands ``scan``
and ``--version`` back to the legacy Python implementation (pysemgrep, ~1.5 s of start-up alone) unless
``--experimental`` is given. The engine passes ``--experimental``: the same semgrep-core matching engine and
the same rules, ~0.2-0.5 s per batch instead of ~2.1 s (and 0.15 s instead of 1.6 s for ``--version``).
A test checks that both modes report identical results on the fixtures.

Offline and tamper-proof: local rules only, ``--metrics=off``, no version check (semgrep otherwise waits
for the network, ~95 s here), and ``--disable-nosem`` so a ``# nosemgrep`` comment in a patch cannot hide a
finding. Files larger than semgrep's default limit are scanned too, and a file semgrep did not scan is an
error rather than a clean result.

Where semgrep comes from: it is pinned (:data:`SEMGREP_VERSION`, its findings are part of the reward) but no
dependency of the package, because its own pins (mcp, opentelemetry) clash with libraries installed beside this one
(Prime Intellect's verifiers asks for another mcp). ``sv engines install`` (:func:`install_semgrep`, run by
``make``) gives it a virtualenv of its own, :func:`semgrep_home`. :func:`find_semgrep` looks, in order, at
``$SV_SEMGREP`` (a path to the binary), that virtualenv, next to this interpreter (an install from before), then
PATH; :func:`checked_semgrep` refuses whatever it found unless it reports the pinned version, never trying the next.

Thread-safety: every call uses its own directory and process; an engine may be shared by threads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from security_verifiers.core.errors import EngineUnavailable
from security_verifiers.engines.configs import ConfigParseError, resource_at_line
from security_verifiers.engines.findings import Finding, catalog

RULES_DIR = Path(__file__).parent / "policies" / "semgrep"
#: Environment that keeps semgrep offline (also used by the CLI benchmark).
OFFLINE_ENV: dict[str, str] = {"SEMGREP_ENABLE_VERSION_CHECK": "0", "SEMGREP_SEND_METRICS": "off"}
SUFFIXES: dict[str, str] = {"kubernetes": ".yaml", "terraform": ".tf"}
#: The resource of a finding that lies outside every resource block / object.
FILE_RESOURCE = "file"
TIMEOUT_S = 600.0


#: The semgrep release whose findings the rewards rest on; ``sv engines install`` installs exactly this one, and any
#: other is refused (:func:`checked_semgrep`).
SEMGREP_VERSION = "1.182.0"
#: A path to the semgrep binary to use instead of looking for one (it must still be :data:`SEMGREP_VERSION`).
BINARY_VARIABLE = "SV_SEMGREP"
#: Where ``sv engines install`` puts semgrep's virtualenv, and where it is looked for (default :func:`semgrep_home`).
HOME_VARIABLE = "SV_SEMGREP_HOME"
INSTALL_HINT = "run `sv engines install`"


def semgrep_home() -> Path:
    """semgrep's own virtualenv: ``$SV_SEMGREP_HOME``, else ``engines/semgrep`` inside this interpreter's virtualenv,
    else (an interpreter outside any virtualenv) ``security-verifiers/engines/semgrep`` in the user's data folder
    (``$XDG_DATA_HOME``, default ``~/.local/share``)."""
    if os.environ.get(HOME_VARIABLE):
        return Path(os.environ[HOME_VARIABLE]).expanduser()
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "engines" / "semgrep"
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data / "security-verifiers" / "engines" / "semgrep"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def locate_semgrep() -> tuple[str, str] | None:
    """(path, where it was found) of the semgrep binary to use, unchecked; None when there is none.

    In order: ``$SV_SEMGREP`` (taken as given, even when nothing is there: a path named on purpose is never
    replaced by another), the dedicated virtualenv (:func:`semgrep_home`), next to this interpreter (semgrep
    installed into the project's own virtualenv, as before it had one of its own), the first on PATH."""
    explicit = os.environ.get(BINARY_VARIABLE)
    if explicit:
        return str(Path(explicit).expanduser()), f"${BINARY_VARIABLE}"
    dedicated = semgrep_home() / "bin" / "semgrep"
    if _executable(dedicated):
        return str(dedicated), "its own virtualenv"
    local = Path(sys.executable).parent / "semgrep"
    if _executable(local):
        return str(local), "next to this interpreter"
    on_path = shutil.which("semgrep")
    return (on_path, "PATH") if on_path else None


def find_semgrep() -> str | None:
    """The semgrep executable (see :func:`locate_semgrep`), not yet checked; None when there is none."""
    found = locate_semgrep()
    return found[0] if found else None


def semgrep_version_of(binary: str) -> str:
    """What ``binary --version`` reports (native mode: 0.15 s); EngineUnavailable when it does not run."""
    try:
        proc = subprocess.run([binary, "--version", "--experimental"], capture_output=True, text=True,
                              env={**os.environ, **OFFLINE_ENV}, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise EngineUnavailable(f"semgrep ({binary}) does not run: {err}; {INSTALL_HINT}") from err
    if proc.returncode != 0 or not proc.stdout.strip():
        raise EngineUnavailable(f"semgrep ({binary}) --version failed: {proc.stderr.strip()[-500:]}; {INSTALL_HINT}")
    return proc.stdout.strip().splitlines()[-1].strip()


def checked_semgrep(binary: str | None = None) -> tuple[str, str]:
    """(path, version) of the semgrep to use: ``binary``, else :func:`find_semgrep`'s. EngineUnavailable, naming
    ``sv engines install``, when there is none, it does not run, or it is not :data:`SEMGREP_VERSION` (another
    release may report other findings, so it is refused rather than used or passed over for the next one)."""
    where = "given"
    if binary is None:
        found = locate_semgrep()
        if found is None:
            raise EngineUnavailable(
                f"semgrep {SEMGREP_VERSION} was not found (looked at ${BINARY_VARIABLE}, {semgrep_home()}, next to "
                f"{sys.executable} and on PATH); {INSTALL_HINT}")
        binary, where = found
    if not _executable(Path(binary)):
        raise EngineUnavailable(f"the semgrep binary was not found at {binary} ({where}); {INSTALL_HINT}"
                                + (f" or unset {BINARY_VARIABLE}" if where == f"${BINARY_VARIABLE}" else ""))
    version = semgrep_version_of(binary)
    if version != SEMGREP_VERSION:
        raise EngineUnavailable(
            f"semgrep {version} at {binary} ({where}) is not the pinned {SEMGREP_VERSION}, whose findings the "
            f"rewards rest on; {INSTALL_HINT}" + (f" and unset {BINARY_VARIABLE}" if where.startswith("$") else ""))
    return binary, version


# -- sv engines install ---------------------------------------------------------------------------------------------
def _run_streaming(command: list[str]) -> int:
    """Run ``command`` with its output on this process's (pip's progress shows as it goes); its exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.run(command, stdout=sys.stderr, check=False).returncode


def install_commands(home: Path) -> list[list[str]]:
    """What :func:`install_semgrep` runs to create ``home`` and install the pinned semgrep into it."""
    python = str(home / "bin" / "python")
    return [[sys.executable, "-m", "venv", str(home)],
            [python, "-m", "pip", "install", "--disable-pip-version-check", f"semgrep=={SEMGREP_VERSION}"]]


def install_semgrep(home: Path | None = None, run: Callable[[list[str]], int] = _run_streaming,
                    out: TextIO | None = None) -> tuple[Path, bool]:
    """Create semgrep's own virtualenv at ``home`` (default :func:`semgrep_home`) and install
    ``semgrep==SEMGREP_VERSION`` into it with pip. Returns (binary, whether anything was installed): when the
    pinned version is already there, nothing runs. ``run`` runs one command and returns its exit status (tests
    pass their own). A failing step is a RuntimeError that names it."""
    out = out if out is not None else sys.stderr
    home = (home or semgrep_home()).expanduser().absolute()
    binary = home / "bin" / "semgrep"
    if _executable(binary):
        try:
            if semgrep_version_of(str(binary)) == SEMGREP_VERSION:
                print(f"semgrep {SEMGREP_VERSION} is already installed in {home}; nothing to do", file=out)
                return binary, False
        except EngineUnavailable:
            pass  # broken or another version: pip replaces it below
    venv, pip = install_commands(home)
    if not (home / "bin" / "python").exists():
        print(f"creating semgrep's virtualenv in {home}", file=out)
        status = run(venv)
        if status != 0:
            raise RuntimeError(f"could not create a virtualenv in {home} (`{' '.join(venv)}` exited {status})")
    print(f"installing semgrep=={SEMGREP_VERSION} into {home} with pip (a minute or two)", file=out)
    status = run(pip)
    if status != 0:
        raise RuntimeError(f"pip could not install semgrep=={SEMGREP_VERSION} into {home} (exit {status}; its output "
                           f"is above); the command was: {' '.join(pip)}")
    if not _executable(binary):
        raise RuntimeError(f"pip installed semgrep=={SEMGREP_VERSION} but {binary} is not there")
    version = semgrep_version_of(str(binary))
    if version != SEMGREP_VERSION:
        raise RuntimeError(f"{binary} reports version {version}, not {SEMGREP_VERSION}")
    print(f"semgrep {SEMGREP_VERSION} installed: {binary}", file=out)
    return binary, True


def semgrep_command(binary: str, targets: list[str], native: bool = True) -> list[str]:
    """The offline scan command line (shared with the CLI benchmark, which uses ``native=False``)."""
    mode = ["--experimental"] if native else []
    return [binary, "scan", *mode, "--metrics=off", "--disable-version-check", "--disable-nosem", "--no-git-ignore",
            "--max-target-bytes=0", "--config", str(RULES_DIR), "--json", "--quiet", *targets]


class SemgrepEngine:
    """Runs the local rules with the semgrep binary; see the module docstring."""

    def __init__(self, binary: str | None = None, native: bool = True) -> None:
        """``native=False`` runs scans with the legacy Python implementation (slower; for comparisons)."""
        self.native = native
        self.binary, self._version = checked_semgrep(binary)
        self.env = {**os.environ, **OFFLINE_ENV}
        if not list(RULES_DIR.glob("*.yaml")):
            raise EngineUnavailable(f"no semgrep rules in {RULES_DIR}")

    def version(self) -> str:
        return self._version

    def scan(self, platform: str, text: str) -> list[Finding]:
        return self.scan_many([(platform, text)])[0]

    def scan_many(self, files: list[tuple[str, str]]) -> list[list[Finding]]:
        """Findings per (platform, text), in order, from ONE semgrep process. Each list is deduplicated by
        (rule, resource) and sorted. Text that does not parse is still scanned; its findings get the
        resource ``"file"``."""
        if not files:
            return []
        for platform, _ in files:
            if platform not in SUFFIXES:
                raise ValueError(f"unknown platform {platform!r}")
        from security_verifiers.engines.checkov import scratch_dir

        directory = tempfile.mkdtemp(prefix="sv-semgrep-", dir=scratch_dir())
        try:
            names = [f"{i:05d}{SUFFIXES[platform]}" for i, (platform, _) in enumerate(files)]
            for name, (_, text) in zip(names, files, strict=True):
                Path(directory, name).write_text(text, encoding="utf-8")
            output = self._run(directory, names)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        index = {name: i for i, name in enumerate(names)}
        hits: list[list[tuple[str, int, str]]] = [[] for _ in files]
        for result in output.get("results", []):
            i = index.get(os.path.basename(str(result.get("path", ""))))
            if i is None:
                raise RuntimeError(f"semgrep reported an unknown path {result.get('path')!r}")
            rule_id = str(result["check_id"]).rsplit(".", 1)[-1]  # semgrep prefixes the config path
            message = str((result.get("extra") or {}).get("message", ""))
            hits[i].append((rule_id, int(result["start"]["line"]), message))
        return [_findings(platform, text, file_hits) for (platform, text), file_hits in zip(files, hits, strict=True)]

    def _run(self, directory: str, names: list[str]) -> dict[str, Any]:
        try:
            proc = subprocess.run(semgrep_command(self.binary, names, self.native), cwd=directory,
                                  capture_output=True, text=True, env=self.env, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as err:  # a TimeoutError is classified as a timeout by core.errors
            raise TimeoutError(f"semgrep ran longer than {TIMEOUT_S:.0f} s on {len(names)} files") from err
        try:
            output = json.loads(proc.stdout) if proc.stdout.strip() else {}
        except json.JSONDecodeError:
            output = {}
        if proc.returncode != 0 or not output:
            raise RuntimeError(f"semgrep failed (exit {proc.returncode}): {proc.stderr.strip()[-1000:]}")
        errors = [e for e in output.get("errors", []) if str(e.get("level", "error")).lower() == "error"]
        if errors:
            raise RuntimeError(f"semgrep reported errors: {json.dumps(errors)[:1000]}")
        scanned = {os.path.basename(p) for p in (output.get("paths") or {}).get("scanned", [])}
        missing = sorted(set(names) - scanned)
        if missing:
            raise RuntimeError(f"semgrep did not scan {len(missing)} file(s), e.g. {missing[0]}")
        return output


def _findings(platform: str, text: str, hits: list[tuple[str, int, str]]) -> list[Finding]:
    rules = catalog()
    located: dict[int, str] = {}
    out: dict[tuple[str, str], Finding] = {}
    for rule_id, line, message in sorted(hits, key=lambda h: (h[1], h[0])):
        rule = rules.get(rule_id)
        if rule is None:
            raise RuntimeError(f"semgrep rule {rule_id!r} is not in the catalog")
        if platform not in rule.platforms:
            continue
        if line not in located:
            try:
                located[line] = resource_at_line(platform, text, line) or FILE_RESOURCE
            except ConfigParseError:
                located[line] = FILE_RESOURCE
        resource = located[line]
        out.setdefault((rule_id, resource), Finding(
            rule_id=rule_id, resource=resource, path=None, engines=("semgrep",), severity=rule.severity,
            message=f"line {line}: {message}"))
    return [out[k] for k in sorted(out)]
