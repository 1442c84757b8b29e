"""The item contract of E3 ``code-repair``: what ``item.input`` and ``item.target`` hold, and the answer grammar.

The input is what the model reads: the program's files and a description of what it is for. The target is the
rest of the generated :class:`~.program.Program` (the reference fix, the hidden test module and its probes, the
fixtures, where the weakness is and which analyser tests flag it), validated by the same model the generator
builds, so a hand-written item meets exactly the checks a generated one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from security_verifiers.core.types import Item
from security_verifiers.envs.base import ItemContract
from security_verifiers.envs.code_repair.program import Location, Probe, Program


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class CodeRepairInput(_Strict):
    """``item.input``: the task's modules (relative path -> source) and its intended behaviour."""

    files: dict[str, str] = Field(min_length=1, max_length=3)
    description: str = Field(min_length=1, max_length=2000)


class CodeRepairTarget(_Strict):
    """``item.target``. A generated task (``kind="program"``) is a :class:`Program` without its ``files`` and
    ``description`` (they are the input). An imported record (``kind="detection"``, :mod:`.loaders`) has no tests:
    only its CWE and location, and where it comes from; it is scored on naming them."""

    kind: Literal["program", "detection"] = "program"
    family: str
    variant: str
    domain: str
    cwe: str
    location: Location
    fixed: dict[str, str] | None = None
    tests: str | None = None
    probes: list[Probe] | None = None
    fixtures: dict[str, str] = Field(default_factory=dict)
    static_ids: list[str] = Field(default_factory=list)
    timeout_s: float = 3.0
    trivial: list[str] = Field(default_factory=list)
    world: dict[str, Any] | None = None
    requirements: list[str] = Field(default_factory=list)
    site: str | None = None
    source: dict[str, str] | None = Field(None, description="Imported records: dataset, file, record, CVE, project.")

    @model_validator(mode="after")
    def _fields_of_kind(self) -> CodeRepairTarget:
        program_fields = (self.fixed, self.tests, self.probes)
        if self.kind == "program" and any(f is None for f in program_fields):
            raise ValueError("a program target needs fixed, tests and probes")
        if self.kind == "detection" and (any(f is not None for f in program_fields) or self.source is None):
            raise ValueError("a detection target has a source and no fixed, tests or probes")
        return self


def is_program(target: dict[str, Any]) -> bool:
    """Whether an item's target is a generated program (with tests), rather than an imported detection record."""
    return target.get("kind", "program") == "program"


def program_of(input_: dict[str, Any], target: dict[str, Any]) -> Program:
    """The whole program an item describes (raises pydantic's ValidationError when the two do not fit)."""
    fields = {k: v for k, v in target.items() if k not in ("kind", "source")}
    return Program.model_validate({**fields, "files": input_["files"], "description": input_["description"]},
                                  strict=False)


@dataclass(frozen=True)
class CodeRepairContract(ItemContract):
    """The input and target models, then the whole :class:`Program` they make together (the reference fix patches
    the same files, every probe has its function in the test module, the location is inside its file...)."""

    def problem(self, item: Item) -> str | None:
        found = super().problem(item)
        if found is not None:
            return found
        if not is_program(item.target):
            return None
        try:
            program_of(item.input, item.target)
        except ValidationError as err:
            first = err.errors()[0]
            return f"target: {' '.join(str(first['msg']).split())[:200]}"
        return None


class Answer(BaseModel):
    """The answer grammar stated in the system prompt: all four keys (an empty patch or a null line may say
    "none"), so that a stray ``{}`` in a reply is not an answer."""

    model_config = ConfigDict(extra="ignore")

    cwe: str = Field(max_length=40, description="The weakness, as CWE-<number>.")
    file: str = Field(max_length=300, description="The task file that holds it.")
    line: int | None = Field(ge=0, le=100_000, description="The line of that file where it is (null: not named).")
    patch: str = Field(max_length=200_000, description="A unified diff against the given files, or empty.")

    @field_validator("line", mode="before")
    @classmethod
    def _line(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().isdigit():  # "42" is as clear as 42
            return int(value.strip())
        return value
