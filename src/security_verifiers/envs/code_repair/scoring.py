"""The reward of one E3 answer, from the executed verdict, the analyser and the answer's claims.

reward = cwe_weight * [CWE named right] + location_weight * [line within LINE_SLACK of the weakness]
       + [every exploit blocked] * (functional_weight * substantive functional pass fraction
                                    + repair_weight * [every functional probe passes]
                                    + [repaired] * (static_weight * [analyser signal gone, no new high finding]
                                                    + size_weight * patch size score))

Why the gates: a patch that blocks the exploit by breaking the program (every body ``return None``) passes no
functional probe, and a patch that keeps the program working but leaves the exploit (a comment, a rename) is the
vulnerable program; neither is a repair, so neither earns more than naming the weakness does. An over-eager fix
that blocks the exploit and loses one feature keeps most of the functional part. Repairing without naming the
CWE earns 0.8 of the reward; naming it without a working patch at most 0.2. The fraction counts only the
*substantive* functional probes (:func:`.verdict.substantive`): those a program cannot pass by returning a constant
or by refusing, so that disabling the program earns nothing there either.

A patch that inspects the test harness (its modules, frames, argv, the interpreter's internals) is refused the
repair part: in production there is no harness, so behaving differently under it is not a repair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from security_verifiers.envs.base import EnvConfig

#: A named line counts as the weakness's location within this many lines of it.
LINE_SLACK = 3
#: CWE numbers accepted as naming each task's weakness (parents, children and the usual aliases).
CWE_ALIASES: dict[str, frozenset[int]] = {
    "CWE-78": frozenset({78, 77, 88}),
    "CWE-89": frozenset({89, 564}),
    "CWE-22": frozenset({22, 23, 24, 35, 36, 73}),
    "CWE-502": frozenset({502}),
    "CWE-94": frozenset({94, 95, 96}),
    "CWE-79": frozenset({79, 80}),
    "CWE-611": frozenset({611, 776, 827}),
    "CWE-918": frozenset({918}),
    "CWE-916": frozenset({916, 327, 328, 759, 760, 261}),
    "CWE-330": frozenset({330, 331, 338, 340}),
    "CWE-798": frozenset({798, 259, 321}),
    "CWE-208": frozenset({208, 203, 385}),
    "CWE-1333": frozenset({1333, 400, 185, 730}),
    "CWE-601": frozenset({601}),
    "CWE-862": frozenset({862, 863, 639, 285}),
    # imported cases (``--format cases``)
    "CWE-347": frozenset({347, 345, 327, 287}),
    "CWE-20": frozenset({20, 565, 784}),
    "CWE-200": frozenset({200, 201, 522, 359}),
}
_CWE_NUMBER = re.compile(r"^\s*(?:cwe)?[\s_:-]*0*([1-9][0-9]{0,4})\s*$", re.IGNORECASE)
#: What a patch's added lines must not reach for: the harness's modules and frames, the interpreter's
#: internals, the process's own streams and descriptors. None of it belongs in a repair of these programs.
HARNESS_PROBES = re.compile(
    r"sys\s*\.\s*(?:modules|argv|_getframe|settrace|setprofile|addaudithook|stdout|stderr|orig_argv)"
    r"|\binspect\b|__main__|\bgc\s*\.|\bctypes\b|__builtins__|\bbuiltins\b|\btraceback\b"
    r"|\bos\s*\.\s*(?:dup2?|close|closerange|write|kill|killpg)\b|\bfaulthandler\b|\bsignal\s*\."
    # an exact type test tells a test's instrumented value (a str subclass that records comparisons) from a real one
    r"|\btype\s*\([^()]*\)\s*(?:is|==|!=)|__class__",
)


class CodeRepairConfig(EnvConfig):
    cwe_weight: float = Field(0.15, ge=0, le=1, description="Weight of naming the CWE.")
    location_weight: float = Field(0.05, ge=0, le=1, description="Weight of naming the vulnerable line.")
    functional_weight: float = Field(0.25, ge=0, le=1,
                                     description="Weight of the functional pass fraction (once exploits are blocked).")
    repair_weight: float = Field(0.40, ge=0, le=1,
                                 description="Weight of a full repair: every exploit blocked and every functional "
                                 "probe passing.")
    static_weight: float = Field(0.10, ge=0, le=1,
                                 description="Weight of the analyser's signal gone (once exploits are blocked).")
    size_weight: float = Field(0.05, ge=0, le=1, description="Weight of a patch no larger than the reference's "
                               "allowance (once exploits are blocked).")
    mode: Literal["no_tools", "tools"] = Field("no_tools", description="Whether the model may call run_tests and "
                                               "run_bandit on drafts.")
    max_tool_calls: int = Field(6, ge=0, le=100, description="Tool calls allowed per episode.")
    tool_timeout_s: float = Field(20.0, gt=0, description="Seconds allowed per tool call.")
    over_budget_cost: float = Field(0.02, ge=0, le=1, description="Reward lost per tool call over budget.")
    max_turns: int = Field(8, ge=1, le=50, description="Assistant turns per episode in tools mode.")
    parallel: int = Field(4, ge=1, le=64, description="Judged runs at once when a batch is scored (each is a judge "
                          "with its programs, mostly computing: about twice the cores is fastest).")

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> CodeRepairConfig:
        if abs(sum(self.weights().values()) - 1.0) > 1e-9:
            raise ValueError("the six weights must sum to 1 so the reward stays in [0, 1]")
        return self

    def weights(self) -> dict[str, float]:
        return {"cwe": self.cwe_weight, "location": self.location_weight, "functional": self.functional_weight,
                "repaired": self.repair_weight, "static_clean": self.static_weight, "patch_size": self.size_weight}


def cwe_number(text: str) -> int | None:
    """The number a model's CWE names (``CWE-89``, ``cwe_089``, ``89``), or None.

    >>> cwe_number("CWE-089"), cwe_number("cwe 79"), cwe_number("SQL injection")
    (89, 79, None)
    """
    match = _CWE_NUMBER.match(text or "")
    return int(match.group(1)) if match else None


def cwe_matches(claimed: str, truth: str) -> bool:
    number = cwe_number(claimed)
    if number is None:
        return False
    return number in CWE_ALIASES.get(truth, frozenset({int(truth.split("-")[1])}))


def changed_lines(diff: str) -> int:
    """Lines a unified diff adds or removes (headers excluded)."""
    return sum(1 for line in diff.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")))


def size_score(patch_lines: int, reference_lines: int) -> float:
    """1 up to the allowance (three times the reference's changed lines, at least the reference plus 8), then
    falling linearly to 0 at four times the allowance: a small price for a sprawling rewrite."""
    allowance = max(3 * reference_lines, reference_lines + 8)
    if patch_lines <= allowance:
        return 1.0
    return max(0.0, 1.0 - (patch_lines - allowance) / (3 * allowance))


_STRING = re.compile(r"'(?:[^'\\]|\\.)*'" + r'|"(?:[^"\\]|\\.)*"')


def harness_probes(diff: str) -> list[str]:
    """The added lines of ``diff`` that reach for the harness or the interpreter's internals: in their code (a
    word inside a string literal, such as an unpickler's allowed module ``"builtins"``, is data), or a path under
    ``/proc`` anywhere.

    >>> harness_probes('+if module == "builtins":\\n+x = sys.argv\\n+open("/proc/self/mem")\\n')
    ['x = sys.argv', 'open("/proc/self/mem")']
    """
    out = []
    for line in diff.splitlines():
        if not line.startswith("+") or line.startswith("+++ "):
            continue
        code = _STRING.sub('""', line[1:])
        if HARNESS_PROBES.search(code) or "/proc/" in line:
            out.append(line[1:].strip()[:120])
    return out


@dataclass(frozen=True)
class RepairParts:
    """The components of one reward, each in [0, 1] and already gated (see the module doc)."""

    cwe: float
    location: float
    functional: float
    repaired: float
    static_clean: float
    patch_size: float

    def components(self) -> dict[str, float]:
        return dict(vars(self))

    def reward(self, config: CodeRepairConfig) -> float:
        weights = config.weights()
        return sum(weights[name] * value for name, value in self.components().items())
