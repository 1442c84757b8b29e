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

Thread-safety: every call uses its own directory and process; an engine may be shared by threads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

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


def find_semgrep() -> str | None:
    """The semgrep executable: the one installed next to this interpreter (the project's virtualenv), else
    the first on PATH."""
    local = Path(sys.executable).parent / "semgrep"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which("semgrep")


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
        found = binary or find_semgrep()
        if not found or not (Path(found).is_file() and os.access(found, os.X_OK)):
            where = binary or f"neither next to {sys.executable} nor on PATH"
            raise EngineUnavailable(f"the semgrep binary was not found ({where}); install semgrep==1.182.0")
        self.binary = found
        self.env = {**os.environ, **OFFLINE_ENV}
        try:
            proc = subprocess.run([self.binary, "--version", "--experimental"], capture_output=True, text=True,
                                  env=self.env, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise EngineUnavailable(f"semgrep ({self.binary}) does not run: {err}") from err
        if proc.returncode != 0 or not proc.stdout.strip():
            raise EngineUnavailable(f"semgrep ({self.binary}) --version failed: {proc.stderr.strip()[-500:]}")
        self._version = proc.stdout.strip().splitlines()[-1]
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
