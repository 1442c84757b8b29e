"""What one E3 task is: a small program with one weakness, its reference fix, and the probes that judge a patch.

A *probe* is one call of a function in the task's hidden test module (``probe_<id>(ctx)``), run in the sandbox
by the driver (``sandbox_driver.py``). The child only reports what the call returned; every verdict is made
on the host from these models:

- a **functional** probe passes when its observation equals ``expect`` exactly (the intended behaviour);
- an **exploit** probe succeeds (the weakness is still there) when its :class:`Detect` says so. The effect it
  looks for is made unguessable per run by the canary in ``ctx``: a secret the program can only disclose
  through the weakness, a marker file only the weakness creates, a call that hangs. A missing observation
  (the program exited, crashed or was killed first) counts as exploited: a patch cannot pass by ending the
  run early.

Families (``families/``) build :class:`Program` objects; the generator stores them in items as the target
(never shown to the model) and the source files as the input.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

#: Probe ids are part of function names in the test module.
_PROBE_ID = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
#: A task file's path: a relative POSIX path of Python modules (``pkg/mod.py``), no dot directories.
_TASK_PATH = re.compile(r"^(?:[a-z_][a-z0-9_]*/){0,2}[a-z_][a-z0-9_]*\.py$")
#: Where fixtures may be written, relative to the program's project directory (beside its packages, not in them).
_FIXTURE_PATH = re.compile(r"^(?:[A-Za-z0-9_.-]+/){0,4}[A-Za-z0-9_.-]+$")
CWE = re.compile(r"^CWE-[1-9][0-9]{0,4}$")
#: Lines of a task's modules together: small enough to read in one prompt, large enough to hide the weakness in.
MIN_LINES, MAX_LINES = 30, 250


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Detect(_Strict):
    """How an exploit probe's success shows (any missing observation counts as success, see the module doc).

    - ``contains``: the observation's JSON text contains ``text`` with ``{canary}`` replaced by the run's canary
      (case-insensitively): the program disclosed what only the weakness reaches;
    - ``marker``: the probe's marker file (``ctx["marker"]``, a path of its own per probe and run) exists in the
      work directory afterwards (checked on the host): the program created what only the weakness creates (a
      command ran, an archive wrote outside its target);
    - ``equals``: the observation equals ``value`` (a spy in the test saw the unsafe operation happen);
    - ``hang``: a request of the probe ran longer than ``seconds`` (the judge kills the program then);
    - ``entropy``: the probe returns the tokens the program issued; it runs in three fresh programs fed the same
      bytes, the same bytes, and other bytes during its own requests (``judge/entropy.py``). The tokens must be the
      same in the first two (they are drawn from the bytes, not the clock) and all different in the third (from the
      bytes of their own call, not a generator seeded before);
    - ``static``: not run; the patched source is checked by :mod:`.taint` (``rule`` names the check), for a weakness
      that has no effect a test can observe (a comparison's timing).
    """

    kind: Literal["contains", "marker", "equals", "hang", "entropy", "static"]
    text: str | None = None
    value: JsonValue = None
    seconds: float = Field(1.0, gt=0, le=5)
    rule: dict[str, JsonValue] | None = Field(None, description="static: the check and its parameters.")

    @model_validator(mode="after")
    def _fields_of_kind(self) -> Detect:
        if self.kind == "contains" and (not self.text or "{canary}" not in self.text):
            raise ValueError("a 'contains' detector needs text holding {canary}")
        if self.kind == "static" and not self.rule:
            raise ValueError("a 'static' detector needs its rule")
        return self


class Probe(_Strict):
    """One call of ``probe_<id>(ctx)`` in the test module."""

    id: str
    kind: Literal["functional", "exploit"]
    expect: JsonValue = Field(None, description="Functional: the observation that means the behaviour is intact.")
    detect: Detect | None = Field(None, description="Exploit: how a successful exploit shows.")

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _PROBE_ID.match(value):
            raise ValueError(f"probe id {value!r} must be a short lower-case identifier")
        return value

    @model_validator(mode="after")
    def _kind_fields(self) -> Probe:
        if self.kind == "exploit" and self.detect is None:
            raise ValueError(f"exploit probe {self.id!r} needs a detector")
        if self.kind == "functional" and self.detect is not None:
            raise ValueError(f"functional probe {self.id!r} takes no detector")
        return self


class Location(_Strict):
    """Where the weakness is: a file of the task and the line range (1-based, inclusive) of the vulnerable code."""

    file: str
    start: int = Field(ge=1)
    end: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> Location:
        if self.end < self.start:
            raise ValueError("location end before start")
        return self


class Program(_Strict):
    """One generated task, complete: what the model sees (``files``, ``description``) and what judges it."""

    family: str = Field(description="The family that generated it (families/).")
    variant: str = Field(description="The program variant within the family (the OOD split holds unseen ones).")
    domain: str = Field(description="What the program is for (file service, user store, ...).")
    cwe: str = Field(description="The weakness, as CWE-<n>.")
    files: dict[str, str] = Field(description="The vulnerable program: relative path -> source.")
    fixed: dict[str, str] = Field(description="The reference fix: the same paths, patched.")
    description: str = Field(min_length=1, description="The intended behaviour, as the model is told it.")
    location: Location
    tests: str = Field(description="The hidden test module: probe_<id>(ctx) functions, stdlib only.")
    probes: list[Probe] = Field(min_length=2)
    fixtures: dict[str, str] = Field(default_factory=dict, description="Files written under /work before a run "
                                     "(relative path -> text; {canary} is replaced by the run's canary).")
    static_ids: list[str] = Field(default_factory=list, description="Analyser test ids that flag the weakness "
                                  "(bandit B602, ...); empty where no analyser knows it.")
    timeout_s: float = Field(3.0, gt=0, le=30, description="Wall-clock limit of one run of all probes.")
    trivial: list[str] = Field(default_factory=list, description="Functional probes a degenerate version of the "
                               "program passes (found by the self-check): they earn no partial credit.")
    world: dict[str, JsonValue] | None = Field(None, description="The program's network, when it has one: host "
                                               "names, sites and services the judge serves (see world_spec.py).")
    requirements: list[str] = Field(default_factory=list, description="Third-party packages the program imports, "
                                    "pinned (name==version); installed in the site directory ``site``.")
    site: str | None = Field(None, description="The key of the read-only site directory holding ``requirements`` "
                             "(sites.py), when there are any.")

    @field_validator("cwe")
    @classmethod
    def _cwe(cls, value: str) -> str:
        if not CWE.match(value):
            raise ValueError(f"cwe {value!r} must look like CWE-89")
        return value

    @field_validator("files", "fixed")
    @classmethod
    def _paths(cls, value: dict[str, str]) -> dict[str, str]:
        if not 1 <= len(value) <= 3:
            raise ValueError("a task has one to three modules")
        for path in value:
            if not _TASK_PATH.match(path):
                raise ValueError(f"task file {path!r} must be a relative path of a Python module")
        return value

    @field_validator("fixtures")
    @classmethod
    def _fixture_paths(cls, value: dict[str, str]) -> dict[str, str]:
        for path in value:
            if not _FIXTURE_PATH.match(path) or ".." in path.split("/"):
                raise ValueError(f"fixture path {path!r} must be relative, inside the project directory")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Program:
        if set(self.fixed) != set(self.files):
            raise ValueError("the reference fix must patch the same files")
        if self.fixed == self.files:
            raise ValueError("the reference fix changes nothing")
        if self.location.file not in self.files:
            raise ValueError(f"location file {self.location.file!r} is not a task file")
        if self.location.end > len(self.files[self.location.file].splitlines()):
            raise ValueError("location past the end of its file")
        ids = [p.id for p in self.probes]
        if len(set(ids)) != len(ids):
            raise ValueError("probe ids must be unique")
        if not MIN_LINES <= self.lines() <= MAX_LINES:
            raise ValueError(f"the program has {self.lines()} lines; tasks have {MIN_LINES} to {MAX_LINES}")
        kinds = {p.kind for p in self.probes}
        if kinds != {"functional", "exploit"}:
            raise ValueError("a task needs functional and exploit probes")
        for probe in self.probes:
            if f"def probe_{probe.id}(" not in self.tests:
                raise ValueError(f"the test module has no probe_{probe.id}(ctx)")
        if bool(self.requirements) != bool(self.site):
            raise ValueError("a program with requirements needs the key of their site directory, and only then")
        tops = self.packages()
        for path in self.fixtures:
            if path.split("/")[0].removesuffix(".py") in tops:
                raise ValueError(f"fixture {path!r} would sit among the program's own files")
        return self

    def packages(self) -> set[str]:
        """The top-level names the program's files make importable (``shop`` for ``shop/cart.py``)."""
        return {path.split("/")[0].removesuffix(".py") for path in self.files}

    def functional(self) -> list[Probe]:
        return [p for p in self.probes if p.kind == "functional"]

    def exploits(self) -> list[Probe]:
        return [p for p in self.probes if p.kind == "exploit"]

    def lines(self) -> int:
        return sum(len(text.splitlines()) for text in self.files.values())


def as_target(program: Program) -> dict[str, Any]:
    """The item target a program is stored as (everything but what the input holds)."""
    return program.model_dump(mode="json", exclude={"files", "description"})
