"""A config-audit episode with native tool calling through the real OpenAI client, on a loopback server."""

import json
from pathlib import Path

from security_verifiers.cli import main
from security_verifiers.core.rundir import read_records
from tests.fakeserver import FakeOpenAIServer


def model(request: dict) -> dict:
    """Turn 1: call scan_policies on the file. Turn 2: report what the tool found, no patch."""
    tool_messages = [m for m in request["messages"] if m["role"] == "tool"]
    if not tool_messages:
        return {"content": None, "tool_calls": [{"id": "call_1", "type": "function",
                                                  "function": {"name": "scan_policies", "arguments": "{}"}}]}
    found = json.loads(tool_messages[-1]["content"])["findings"]
    claims = [{"rule_id": f["rule_id"], "resource": f["resource"]} for f in found]
    return {"content": json.dumps({"findings": claims, "patch": "", "confidence": 0.7})}


def test_native_tool_calls_are_executed_recorded_and_scored(tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=model) as server:
        argv = ["eval", "config-audit", "--model", "tool-user", "--base-url", server.base_url, "--n", "4",
                "--env-option", "mode=tools", "--out", str(tmp_path), "--run-id", "t", "--no-cache", "--quiet"]
        assert main(argv) == 0
        requests = server.requests
    assert len(requests) == 8  # two turns per item
    assert all({t["function"]["name"] for t in r["tools"]} == {"scan_policies", "scan_checkov", "validate_schema"}
               for r in requests)
    follow_ups = [r for r in requests if r["messages"][-1]["role"] == "tool"]
    assert len(follow_ups) == 4 and all(r["messages"][-1]["tool_call_id"] == "call_1" for r in follow_ups)
    records = read_records(tmp_path / "evals" / "config-audit--tool-user" / "t" / "results.jsonl")
    assert len(records) == 4 and all(r.error is None for r in records)
    assert all(r.transcript.tool_calls == 1 and r.outcome["tool_calls"] == 1 for r in records)
    # scan_policies runs our Rego library: the model claims what it reported, all of it true
    assert all(r.outcome["fp"] == 0 for r in records)
    assert sum(r.outcome["tp"] for r in records) > 0
