"""A reply cannot take scoring down or out of the metrics (issue 14, section 3).

What the model's text causes (an engine crashing or running past the time or memory limit on its patch or on a
tool draft) is that rollout's scored failure; the other rollouts of its batch score exactly as alone; only what
does not depend on the model's text (the original file itself blowing the limits) is an infrastructure error.
The limits are enforced by killing a worker process, so they hold even while an engine holds the GIL.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.types import Completion, Item, Message, Score, ToolCall, Transcript
from security_verifiers.core.workers import LimitedWorker, WorkerLimits
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit import ConfigAudit, ConfigAuditConfig
from security_verifiers.envs.config_audit.baselines import AutofixBaseline
from security_verifiers.envs.config_audit.tools import AuditToolbox
from security_verifiers.envs.kits.patching import MAX_DIFF_CHARS, MAX_DIFF_RATIO, unified_diff
from security_verifiers.harness.episode import play_episode
from security_verifiers.harness.scoring_pool import ScorerPool

ENV = ConfigAudit()
K8S: list[Item] = [i for i in ENV.dataset("test").items if i.input["platform"] == "kubernetes"][:4]
TARGET, OTHERS = K8S[0], K8S[1:]
#: A marker that makes the slowed engines below spin (``SPIN``) or allocate without end (``EAT``) on a text.
SPIN, EAT = "# sv-test: spin-forever", "# sv-test: eat-memory"


def _misbehave(text: str) -> None:
    if SPIN in text:
        while True:  # holds the GIL: no thread-based timeout could stop this
            pass
    if EAT in text:
        hoard = []
        while True:  # 128 MiB a step, every page written (a memset): fast, so the memory limit fires first
            hoard.append(b"x" * (128 << 20))


def _slow_engines() -> None:
    """Wrap the Rego engine of this process's oracle so that the markers above misbehave inside it."""
    from security_verifiers.engines.oracle import get_oracle

    oracle = get_oracle()
    oracle.store = None  # a result stored by another process (a run without this wrapper) would skip the engine
    rego = oracle.rego
    scan = rego.scan

    def slowed(platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
        _misbehave(text)
        return scan(platform, text, context)

    rego.scan = slowed  # type: ignore[method-assign]


class SlowEnginesAudit(ConfigAudit):
    """config-audit whose Rego engine spins or eats memory on the markers (in scoring workers only)."""

    def tool_versions(self) -> dict[str, str]:
        versions = super().tool_versions()
        _slow_engines()
        return versions


def reply(text: str) -> Transcript:
    return Transcript(messages=[Message(role="assistant", content=text)])


def honest(item: Item) -> Transcript:
    return reply(asyncio.run(AutofixBaseline().respond(item, ENV.prompt(item), None, 0)).text)


def with_patch(item: Item, new_text: str, findings: list[dict[str, str]] | None = None) -> Transcript:
    claims = findings if findings is not None else [
        {"rule_id": f["rule_id"], "resource": f["resource"]} for f in item.target["findings"]]
    patch = unified_diff(item.input["text"], new_text, item.input["filename"])
    return reply(json.dumps({"findings": claims, "patch": patch}))


def alias_bomb(depth: int, width: int = 9) -> str:
    """A ConfigMap whose YAML aliases expand to ``width ** (depth + 1)`` strings."""
    lines = ["a: &a [" + ",".join(['"lol"'] * width) + "]"]
    for level in range(depth):
        name, previous = chr(ord("b") + level), chr(ord("a") + level)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * width) + "]")
    return "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n" + "".join(
        f"  {line}\n" for line in lines)


def many_pods(n: int) -> str:
    return "".join(f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: extra-{i}\n  namespace: apps\nspec:\n"
                   f"  containers:\n  - name: c\n    image: registry.example.com/app:1.{i}\n" for i in range(n))


ALONE = ENV.score_many(OTHERS, [honest(i) for i in OTHERS])
TEXT = TARGET.input["text"]
PATCH_LIMIT = min(MAX_DIFF_CHARS, MAX_DIFF_RATIO * len(TEXT) + 4000)  # the largest patch apply_patch accepts
BAD_PATCHES = {
    # an alias bomb of ~4.5 KB (depth 7: 9^8 = 43 M strings once expanded): refused by the parser's node cap
    "alias-bomb": TEXT + alias_bomb(7, width=9) + "".join(f"# {'x' * 60}\n" for _ in range(60)),
    "nested-1000": TEXT + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nx: " + "[" * 1000
                   + "]" * 1000 + "\n",
    "annotations-true": TEXT.replace("metadata:\n", "metadata:\n  annotations: {true: x}\n", 1),
    "security-context-abc": TEXT.replace("    spec:\n      containers:\n",
                                         "    spec:\n      securityContext: abc\n      containers:\n", 1),
    "size-limit": TEXT + many_pods(max(n for n in range(1, 800) if len(unified_diff(
        TEXT, TEXT + many_pods(n), TARGET.input["filename"])) <= PATCH_LIMIT)),
}


@pytest.fixture(scope="module")
def pool() -> Any:
    scorer = ScorerPool(SlowEnginesAudit(ConfigAuditConfig(score_time_limit_s=10, memory_limit_mb=1536)), 1)
    yield scorer
    scorer.close()


def dumps(scores: list[Score | InfraError]) -> list[Any]:
    return [s.model_dump() if isinstance(s, Score) else repr(s) for s in scores]


@pytest.mark.parametrize("case", sorted(BAD_PATCHES))
def test_a_hostile_patch_is_the_models_failure_and_leaves_its_batch_alone(pool: ScorerPool, case: str) -> None:
    bad = with_patch(TARGET, BAD_PATCHES[case])
    assert len(json.loads(bad.final_text)["patch"]) <= 200_000, "the patch must fit the answer's size limit"
    scores = asyncio.run(pool.score([TARGET, *OTHERS], [bad, *(honest(i) for i in OTHERS)]))
    culprit = scores[0]
    assert isinstance(culprit, Score), culprit
    if case == "size-limit":  # a legal patch of 400 extra Pods is judged, well inside the limits
        assert culprit.outcome["patch_valid"] is True and culprit.outcome["patch_inventory_ok"] is True
    else:
        assert culprit.outcome["patch_valid"] is False and culprit.outcome["patch_score"] == 0.0
    assert culprit.outcome["detection"] == 1.0  # the findings still count
    assert dumps(scores[1:]) == dumps(ALONE)


@pytest.mark.parametrize(("marker", "limit"), [(SPIN, "time limit of 10 s"), (EAT, "memory limit of 1536 MiB")],
                         ids=["spin", "eat-memory"])
def test_a_patch_that_blows_a_limit_is_scored_invalid_and_only_it(pool: ScorerPool, marker: str, limit: str) -> None:
    bad = with_patch(TARGET, TEXT + marker + "\n")
    scores = asyncio.run(pool.score([TARGET, *OTHERS], [bad, *(honest(i) for i in OTHERS)]))
    culprit = scores[0]
    assert isinstance(culprit, Score), culprit
    assert culprit.outcome["patch_valid"] is False and limit in culprit.outcome["patch_error"]
    assert culprit.outcome["detection"] == 1.0 and culprit.reward == pytest.approx(0.5)
    assert dumps(scores[1:]) == dumps(ALONE)
    # the pool recovered: a new worker scores the next batch as usual
    assert dumps(asyncio.run(pool.score(OTHERS, [honest(i) for i in OTHERS]))) == dumps(ALONE)


def test_an_original_that_blows_the_limit_is_an_infrastructure_error(pool: ScorerPool) -> None:
    broken = TARGET.model_copy(update={"input": {**TARGET.input, "text": TEXT + SPIN + "\n"}})
    scores = asyncio.run(pool.score([broken, *OTHERS], [honest(TARGET), *(honest(i) for i in OTHERS)]))
    assert isinstance(scores[0], InfraError) and scores[0].kind is ErrorKind.SCORER
    assert "even without the reply's content" in scores[0].message
    assert dumps(scores[1:]) == dumps(ALONE)


# -- tools -------------------------------------------------------------------------------------------------------

def _slow_tool_engines() -> None:
    _slow_engines()


@pytest.fixture(scope="module")
def tool_worker() -> Any:
    worker = LimitedWorker(_slow_tool_engines, (), ErrorKind.TOOL)
    yield worker
    worker.close()


def toolbox(worker: LimitedWorker, max_calls: int = 3, time_s: float = 5) -> AuditToolbox:
    return AuditToolbox("kubernetes", TEXT, max_calls, WorkerLimits(time_s=time_s, memory_mb=1536), worker)


@pytest.mark.parametrize(
    ("tool", "draft", "expected"),
    [
        ("scan_checkov", TEXT.replace("metadata:\n", "metadata:\n  annotations: {true: x}\n", 1),
         "scan_checkov failed on this config: TypeError"),  # Checkov crashes on a boolean key
        ("scan_policies", TEXT + SPIN + "\n", "exceeded the time limit of 5 s"),  # the GIL is held: killed
        ("scan_policies", TEXT + EAT + "\n", "exceeded the memory limit of 1536 MiB"),
    ],
    ids=["checkov-crash", "spin", "eat-memory"],
)
def test_a_draft_that_breaks_a_tool_answers_an_error_and_counts(tool_worker: LimitedWorker, tool: str, draft: str,
                                                                  expected: str) -> None:
    # the memory case gets a time limit it cannot reach on a loaded machine, so the memory limit is what fires
    box = toolbox(tool_worker, time_s=60 if EAT in draft else 5)
    answer = json.loads(asyncio.run(box.call(tool, json.dumps({"config": draft}))))
    assert expected in answer["error"] and box.calls == 1
    assert "findings" in json.loads(asyncio.run(box.call("scan_policies", "{}")))  # the worker is back


def test_a_tool_failing_on_the_file_under_audit_is_an_infrastructure_error(tool_worker: LimitedWorker) -> None:
    box = AuditToolbox("kubernetes", TEXT + SPIN + "\n", 3, WorkerLimits(time_s=5, memory_mb=1536), tool_worker)
    with pytest.raises(InfraError, match="on the file under audit"):
        asyncio.run(box.call("scan_policies", "{}"))


class CrashDraftPolicy:
    """Sends a draft that crashes Checkov, then answers the item's findings with no patch."""

    name = "crash-draft"

    def describe(self) -> dict[str, Any]:
        return {"kind": "test", "name": self.name}

    async def respond(self, item: Item, messages: list[Message], tools: Any, sample: int) -> Completion:
        if not any(m.role == "tool" for m in messages):
            draft = item.input["text"].replace("metadata:\n", "metadata:\n  annotations: {true: x}\n", 1)
            call = ToolCall(id="c1", name="scan_checkov", arguments=json.dumps({"config": draft}))
            return Completion(text="", tool_calls=[call], finish_reason="tool_calls")
        claims = [{"rule_id": f["rule_id"], "resource": f["resource"]} for f in item.target["findings"]]
        return Completion(text=json.dumps({"findings": claims, "patch": ""}), finish_reason="stop")


def test_a_tool_crash_on_a_draft_leaves_the_rollout_scored() -> None:
    env = ConfigAudit(ConfigAuditConfig(mode="tools"))
    record, transcript = asyncio.run(play_episode(env, CrashDraftPolicy(), TARGET))  # type: ignore[arg-type]
    assert record.error is None and transcript is not None and transcript.tool_calls == 1
    assert "scan_checkov failed on this config" in json.loads(transcript.messages[-2].content)["error"]
    score = env.score(TARGET, transcript)
    assert score.outcome["detection"] == 1.0 and score.outcome["tool_calls"] == 1
