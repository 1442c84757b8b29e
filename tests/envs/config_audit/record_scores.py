"""Record what E2's scorer, tools, prompt and patch applier give on the public set, as a regression fixture.

Run from the repository root: ``python tests/envs/config_audit/record_scores.py``. It writes
``fixtures/scores_before_kits.json.gz``, which ``test_identical_scores.py`` compares against item by item. The
committed fixture was recorded from the code as it stood before E2 moved onto the shared patch and toolbox kits
(``envs/kits/patching``, ``envs/kits/toolbox``), so the test proves the move changed no reward, outcome, metric,
prompt, tool schema, tool answer or patch verdict. Re-record it only when E2's scoring deliberately changes
(which also bumps ``ConfigAudit.version``).

What is stored:

- for the default configuration (no tools), every baseline's reply to every public item (its hash: the test
  replays the baselines, which are deterministic) and garbage replies (their text), the full ``Score`` of each,
  the metrics and point metrics of each run;
- for a tools configuration whose budget (one call) the tools-calling baselines overrun, the same for the
  baselines that call tools, played through the real episode loop and tool worker: the transcript's hash, its
  final reply and tool-call count, and the score (which costs the over-budget calls);
- the hash of every item's prompt in both modes, and the tool schemas;
- the toolbox's answers to calls with bad arguments, unknown tools and over the budget;
- the patch applier's verdict (the patched text, or the error's message) on a table of tricky diffs.
"""

from __future__ import annotations

import asyncio
import difflib
import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "scores_before_kits.json.gz"
#: The configurations recorded: the default (no tools), and tools mode with a budget the baselines overrun.
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "tools-over-budget": {"mode": "tools", "max_tool_calls": 1, "over_budget_cost": 0.05,
                          "detection_weight": 0.6, "patch_weight": 0.4},
}
BASELINES = ("reference", "autofix", "tools", "claim-everything", "empty", "delete-everything", "comment-out",
             "rename-resources", "equivalent-rewrite", "undeclared-reference")
#: The baselines that call the tools when offered (the rest answer in one turn whatever the mode).
TOOL_BASELINES = ("reference", "autofix", "tools")
#: Replies that are not answers, or not valid ones: the invalid path of the scorer and metrics.
INVALID_REPLIES = ("", "no JSON here", '{"findings": "all of them"}', '{"findings": [], "confidence": 7}',
                   '{"findings": [{"rule_id": "x", "resource": "y"}], "patch": "not a diff"}')

# -- the patch applier's table ---------------------------------------------------------------------------------
K8S = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  hostPID: true\n  containers: []\n"
TF = "".join(f'resource "aws_s3_bucket" "b{i}" {{\n  acl = "private"\n}}\n\n' for i in range(8)) + "# end"
LONG = "".join(f"line{i}\n" for i in range(40))


def _diff(a: str, b: str, name: str) -> str:
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), f"a/{name}", f"b/{name}"))


def patch_cases() -> dict[str, tuple[str, str, str]]:
    """name -> (original, diff, filename): diffs a model may send, well-formed or not."""
    k8s_fix = K8S.replace("hostPID: true", "hostPID: false")
    good = _diff(K8S, k8s_fix, "manifest.yaml")
    two = _diff(LONG, LONG.replace("line3\n", "LINE3\n").replace("line30\n", "LINE30\n"), "f.txt")
    return {
        "difflib": (K8S, good, "manifest.yaml"),
        "no-prefixes": (K8S, good.replace("--- a/", "--- ").replace("+++ b/", "+++ "), "manifest.yaml"),
        "timestamps-in-headers": (K8S, good.replace("a/manifest.yaml\n", "a/manifest.yaml\t2024-01-01 00:00\n"),
                                  "manifest.yaml"),
        "no-file-headers": (K8S, good.split("\n", 2)[2], "manifest.yaml"),
        "wrong-counts": (K8S, good.replace("@@ -3,5 +3,5 @@", "@@ -1,9 +1,2 @@"), "manifest.yaml"),
        "start-far-off": (K8S, good.replace("@@ -3,5 +3,5 @@", "@@ -60,5 +60,5 @@"), "manifest.yaml"),
        "git-headers": (K8S, "diff --git a/manifest.yaml b/manifest.yaml\nindex 1..2 100644\n" + good,
                        "manifest.yaml"),
        "crlf-diff": (K8S, good.replace("\n", "\r\n"), "manifest.yaml"),
        "crlf-original": (K8S.replace("\n", "\r\n"), good, "manifest.yaml"),
        "append": (K8S, _diff(K8S, K8S + "---\nkind: X\n", "manifest.yaml"), "manifest.yaml"),
        "two-hunks": (LONG, two, "f.txt"),
        "hunks-out-of-order": (LONG, "--- a/f.txt\n+++ b/f.txt\n@@ -30,3 +30,3 @@\n line29\n-line30\n+LINE30\n"
                               " line31\n@@ -3,3 +3,3 @@\n line2\n-line3\n+LINE3\n line4\n", "f.txt"),
        "overlapping-hunks": (LONG, "--- a/f.txt\n+++ b/f.txt\n@@ -3,2 +3,2 @@\n line2\n-line3\n+LINE3\n"
                              "@@ -4,2 +4,2 @@\n-line3\n+L3\n line4\n", "f.txt"),
        "no-newline-both": (TF, "--- a/main.tf\n+++ b/main.tf\n@@ -31,2 +31,2 @@\n \n-# end\n"
                            "\\ No newline at end of file\n+# the end\n\\ No newline at end of file\n", "main.tf"),
        "add-final-newline": (TF, "--- a/main.tf\n+++ b/main.tf\n@@ -32 +32 @@\n-# end\n"
                              "\\ No newline at end of file\n+# end\n", "main.tf"),
        "remove-final-newline": (K8S, "--- a/manifest.yaml\n+++ b/manifest.yaml\n@@ -7 +7 @@\n-  containers: []\n"
                                 "+  containers: []\n\\ No newline at end of file\n", "manifest.yaml"),
        "blank-context-line": (LONG.replace("line5\n", "\n"), "--- a/f.txt\n+++ b/f.txt\n@@ -5,3 +5,3 @@\n line4\n"
                               "\n-line6\n+LINE6\n", "f.txt"),
        "pure-insertion-at-start": (K8S, "--- a/manifest.yaml\n+++ b/manifest.yaml\n@@ -0,0 +1 @@\n+# head\n",
                                    "manifest.yaml"),
        "empty-original": ("", "--- a/manifest.yaml\n+++ b/manifest.yaml\n@@ -0,0 +1 @@\n+kind: Pod\n",
                           "manifest.yaml"),
        "delete-everything": (K8S, _diff(K8S, "", "manifest.yaml"), "manifest.yaml"),
        "other-file": (K8S, good.replace("manifest.yaml", "other.yaml"), "manifest.yaml"),
        "plus-header-other-file": (K8S, good.replace("+++ b/manifest.yaml", "+++ b/other.yaml"), "manifest.yaml"),
        "second-section-other-file": (K8S, good + _diff("x\n", "y\n", "../../etc/passwd"), "manifest.yaml"),
        "second-section-same-file": (LONG, "".join(_diff(LONG, LONG.replace(f"line{k}\n", f"L{k}\n"), "f.txt")
                                                   for k in (3, 30)), "f.txt"),
        "context-mismatch": (K8S, good.replace("-  hostPID: true", "-  hostPID: maybe"), "manifest.yaml"),
        "prose": (K8S, "just text, no diff", "manifest.yaml"),
        "prose-before-diff": (K8S, "Here is the fix:\n" + good, "manifest.yaml"),
        "headers-only": (K8S, "--- a/manifest.yaml\n+++ b/manifest.yaml\n", "manifest.yaml"),
        "dev-null": (K8S, "--- /dev/null\n+++ b/manifest.yaml\n@@ -0,0 +1 @@\n+x\n", "manifest.yaml"),
        "deleted-file": (K8S, "diff --git a/manifest.yaml b/manifest.yaml\ndeleted file mode 100644\n" + good,
                         "manifest.yaml"),
        "rename": (K8S, "diff --git a/manifest.yaml b/x.yaml\nrename from manifest.yaml\n" + good, "manifest.yaml"),
        "mode-change": (K8S, "diff --git a/manifest.yaml b/manifest.yaml\nold mode 100644\nnew mode 100755\n" + good,
                        "manifest.yaml"),
        "empty-hunk": (K8S, "--- a/manifest.yaml\n+++ b/manifest.yaml\n@@ -1,0 +1,0 @@\n", "manifest.yaml"),
        "bad-hunk-line": (K8S, good.replace(" spec:", "*spec:"), "manifest.yaml"),
        "trailing-prose": (K8S, good + "\nThat fixes it.\n", "manifest.yaml"),
        "too-large-absolute": (K8S, good + "+" + "x" * 300_000 + "\n", "manifest.yaml"),
        "too-large-relative": (K8S, good + "+" + "x" * 5_000 + "\n", "manifest.yaml"),
        "just-within-relative": (K8S, good + "+" + "x" * (int(4 * len(K8S) + 4000) - len(good) - 2) + "\n",
                                 "manifest.yaml"),
        "dot-slash-path": (K8S, good.replace("a/manifest.yaml", "./manifest.yaml"), "manifest.yaml"),
        "absolute-path": (K8S, good.replace("a/manifest.yaml", "/manifest.yaml"), "manifest.yaml"),
        "no-newline-marker-mid-hunk": (LONG, "--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2,2 @@\n line1\n"
                                       "\\ No newline at end of file\n-line2\n+LINE2\n", "f.txt"),
    }


def patch_verdicts(apply: Any) -> dict[str, str]:
    """``apply(original, diff, filename)`` on every case: the patched text, or ``PatchError: <message>``."""
    out = {}
    for name, (original, diff, filename) in patch_cases().items():
        try:
            out[name] = "OK: " + apply(original, diff, filename)
        except ValueError as err:  # PatchError
            out[name] = f"{type(err).__name__}: {err}"
    return out


#: Tool calls that are not ordinary scans: (tool name, arguments text).
TOOL_CALLS = (
    ("scan_policies", '{"path": "/etc/passwd"}'),
    ("scan_policies", '{"config": {"$ref": "/etc/passwd"}}'),
    ("scan_policies", '{"config": 7}'),
    ("scan_policies", '{"config": null}'),
    ("scan_policies", '{"config": "x", "extra": 1}'),
    ("scan_policies", "[1, 2]"),
    ("scan_policies", '"config"'),
    ("scan_policies", "not json"),
    ("scan_policies", ""),
    ("scan_policies", "   "),
    ("scan_checkov", json.dumps({"config": "x" * 100_001})),
    ("validate_schema", json.dumps({"config": "y" * 100_000})),
    ("rm_rf", "{}"),
    ("validate_schema", '{"config": "kind: ["}'),
    ("scan_policies", "{}"),
    ("validate_schema", "{}"),
)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def _play(env: Any, policy: Any, items: list[Any]) -> list[Any]:
    from security_verifiers.harness.episode import play_episode

    out = []
    for item in items:
        record, transcript = asyncio.run(play_episode(env, policy, item))
        if transcript is None:
            raise RuntimeError(f"{policy.name} on {item.id}: {record.error}")
        out.append(transcript)
    return out


def record() -> dict[str, Any]:
    from security_verifiers.core.types import Message, Transcript
    from security_verifiers.envs.config_audit import ConfigAudit
    from security_verifiers.envs.config_audit.env import apply_patch

    runs: dict[str, Any] = {}
    prompts: dict[str, list[str]] = {}
    for config_name, options in CONFIGS.items():
        env = ConfigAudit.from_options(options)
        items = list(env.dataset("test").items)
        prompts[config_name] = [_digest([m.model_dump(mode="json") for m in env.prompt(i)]) for i in items]
        tools_mode = options.get("mode") == "tools"
        for name in (*(TOOL_BASELINES if tools_mode else BASELINES), "invalid"):
            if name == "invalid":
                transcripts = [Transcript(messages=[Message(role="assistant", content=INVALID_REPLIES[k % 5])])
                               for k in range(len(items))]
            else:
                transcripts = _play(env, env.baselines()[name](), items)
            scores = env.score_many(items, transcripts)
            outcomes = [s.outcome for s in scores]
            runs[f"{config_name}/test/{name}"] = {
                "items": [i.id for i in items],
                # the replies themselves only where they are not a baseline's (the baselines replay them: a
                # reply's hash is enough to know it is the same, and patches of whole files weigh megabytes)
                "replies": [t.final_text for t in transcripts] if name == "invalid" else None,
                "reply_hashes": [_digest(t.final_text) for t in transcripts],
                "tool_calls": [t.tool_calls for t in transcripts],
                "transcripts": [_digest([m.model_dump(mode="json") for m in t.messages]) for t in transcripts],
                "scores": [s.model_dump(mode="json") for s in scores],
                "metrics": env.metrics(outcomes, [i.id for i in items]),
                "point_metrics": env.point_metrics(outcomes),
            }
            print(f"recorded {config_name}/test/{name}", flush=True)
    tools_env = ConfigAudit.from_options({"mode": "tools", "max_tool_calls": len(TOOL_CALLS) - 1})
    item = next(i for i in tools_env.dataset("test").items if i.input["platform"] == "kubernetes")
    box = tools_env.tools(item)
    assert box is not None
    answers = [asyncio.run(box.call(name, arguments)) for name, arguments in TOOL_CALLS]
    return {"env_version": ConfigAudit.version, "configs": CONFIGS, "runs": runs, "prompts": prompts,
            "tool_schemas": box.schemas(), "tool_item": item.id, "tool_answers": answers,
            "patches": patch_verdicts(apply_patch)}


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(record(), sort_keys=True, separators=(",", ":")).encode()
    FIXTURE.write_bytes(gzip.compress(data, mtime=0))
    print(f"wrote {FIXTURE} ({len(data)} bytes, {FIXTURE.stat().st_size} compressed)")
