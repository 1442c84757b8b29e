"""report.md's context around the numbers: the constant floor, the breakdowns under the headline, the mark on
small breakdown rows, and the example failures."""

from pathlib import Path

from security_verifiers.core.types import RolloutRecord
from security_verifiers.envs.config_audit import ConfigAudit
from security_verifiers.report.markdown import write_report
from security_verifiers.report.summary import build_summary
from tests.envs.config_audit.test_metrics import missed
from tests.report.test_summary import ENV, METADATA, RIGHT, WRONG, scored

ABSTAIN = '{"label": "Abstain", "p_malicious": 0.4}'
# Family "x" (Malicious) has three items, family "benign" twelve.
RECORDS = [scored(0, "Malicious", RIGHT), scored(1, "Malicious", WRONG), scored(2, "Malicious", ABSTAIN),
           *(scored(10 + i, "Benign", '{"label": "Benign", "p_malicious": 0.1}') for i in range(12))]


def report(tmp_path: Path, env=ENV, records=RECORDS, summary=None) -> str:
    summary = summary or build_summary(env, records, METADATA)
    return write_report(tmp_path, env, summary, []).read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def test_the_constant_floor_sits_under_the_headline(tmp_path: Path) -> None:
    summary = build_summary(ENV, RECORDS, METADATA)
    constant = summary["constant_policy"]
    assert summary["metrics"]["constant_reward"] == constant["reward_mean"]
    text = report(tmp_path, summary=summary)
    headline = section(text, "## Headline metrics")
    assert f"answering `{constant['answer']}` to every item (`{constant['policy']}`)" in headline
    assert f"**{constant['reward_mean']:.4f}**" in headline
    delta = summary["metrics"]["reward_mean"] - constant["reward_mean"]
    assert f"this run: {summary['metrics']['reward_mean']:.4f} ({delta:+.4f})" in headline


def test_a_breakdown_row_with_three_items_is_marked_and_explained(tmp_path: Path) -> None:
    family = section(report(tmp_path), "### By family")
    assert "| x† | 3 |" in family and "| benign | 12 |" in family
    assert "† fewer than 10 items" in family
    assert "few_items" not in family  # the flag is the mark, not a column
    assert "reward_ci" in family


def test_the_failure_section_lists_the_lowest_reward_item_first(tmp_path: Path) -> None:
    failures = section(report(tmp_path), "## Example failures")
    # WRONG (reward 0.108) on nl-1, then the abstention (0.857) on nl-2; the best answers are not failures.
    assert failures.index("`nl-1`") < failures.index("`nl-2`")
    assert "`nl-0`" not in failures and "`nl-10`" not in failures
    assert "  family=x; difficulty=easy; y=1; action=negative; p=0.2000; cost=10.0000\n" in failures
    assert f"  Answer:\n\n  ```text\n  {WRONG}\n  ```" in failures


def test_an_answer_holding_a_fence_cannot_close_its_block(tmp_path: Path) -> None:
    sneaky = "```\n# Injected heading\n````"
    text = report(tmp_path, records=[scored(0, "Malicious", sneaky), scored(1, "Malicious", RIGHT)])
    assert "  `````text\n  ```\n  # Injected heading\n  ````\n  `````" in section(text, "## Example failures")


def test_a_long_answer_says_it_is_cut_and_the_same_mistake_is_counted(tmp_path: Path) -> None:
    long = "x" * 1000
    records = [scored(i, "Malicious", long) for i in range(3)] + [scored(9, "Malicious", RIGHT)]
    failures = section(report(tmp_path, records=records), "## Example failures")
    assert "- `nl-0` sample 0 (and 2 more item(s) alike): reward 0.0000, parse no_json" in failures
    assert "  Answer (its first 300 of 1000 characters):" in failures and "x" * 301 not in failures


def test_a_run_without_failures_says_so(tmp_path: Path) -> None:
    text = report(tmp_path, records=[scored(i, "Malicious", RIGHT) for i in range(3)])
    assert "None: every scored rollout parsed and earned the same reward." in text


def audit_record(i: int, outcome: dict) -> RolloutRecord:
    return RolloutRecord(env="config-audit", env_version=ConfigAudit.version, item_id=f"ca-{i}", split="test",
                         reward=outcome["reward"], outcome=outcome, parse_status="ok")


def test_e2_shows_recall_by_severity_and_the_worst_rules_under_its_headline(tmp_path: Path) -> None:
    env = ConfigAudit()
    outcomes = [*missed("cfg-hardcoded-aws-key", 3), *missed("k8s-host-pid", 12, found=12)]
    text = report(tmp_path, env=env, records=[audit_record(i, o) for i, o in enumerate(outcomes)])
    top = text[text.index("## Headline metrics"):text.index("## All metrics")]
    # A micro F1 of 12 found out of 15 hides the critical secret found 0 times out of 3; these tables do not.
    assert "### Detection by severity" in top and "### Worst rules" in top
    assert "| critical† | 0 | 0 | 3 | 3 | n/a | 0.0000 |" in top
    assert "| cfg-hardcoded-aws-key† | critical | 3 | 0 | 3 | 0.0000 |" in top
    assert "† fewer than 10 oracle findings" in top
    assert "empty-answer" in top  # its constant floor
    breakdowns = section(text, "## Breakdowns")
    assert "### By severity" not in breakdowns and "### By worst_rules" not in breakdowns
    assert "### By rule" in breakdowns


def test_a_summary_written_before_these_sections_still_renders(tmp_path: Path) -> None:
    summary = build_summary(ENV, RECORDS, METADATA)
    for key in ("constant_policy", "failure_examples", "headline_breakdowns"):
        del summary[key]
    del summary["metrics"]["constant_reward"]
    text = report(tmp_path, summary=summary)
    assert "## Headline metrics" in text and "Constant floor" not in text and "## Example failures" not in text
