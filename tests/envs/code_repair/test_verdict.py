"""The host's verdict from observations alone (no sandbox): fail-closed on every missing piece, the canary found in
every form, both callers (live and the replayed script) counted."""

from __future__ import annotations

import json
import random

import pytest

from security_verifiers.envs.code_repair.execution import Execution, ProbeRun
from security_verifiers.envs.code_repair.families.command_injection import FAMILY
from security_verifiers.envs.code_repair.program import Detect, Probe, Program
from security_verifiers.envs.code_repair.verdict import judge, substantive

CANARY = "cnabc123"


def program(**changes: object) -> Program:
    base = FAMILY.build(random.Random(0), "log_search")
    return base.model_copy(update=changes)


def execution(observations: dict, markers: list[str] | None = None, script: dict | None = None,
              tampered: list[str] | None = None) -> Execution:
    """A judged run with one live run per probe (markers seen during probe ``x``) and the given script runs."""
    effects = {"markers": [], "tampered": tampered or []}
    serve = {k: [ProbeRun(v, {**effects, "markers": markers or [] if k == "x" else []})]
             for k, v in observations.items()}
    replays = {k: [ProbeRun(v, {"markers": [], "tampered": []})] for k, v in (script or {}).items()}
    return Execution(serve=serve, script=replays, canary=CANARY, wall_s=0.05)


def with_probes(*probes: Probe, tests: str) -> Program:
    return program(probes=list(probes), tests=tests)


TESTS = "".join(f"def probe_{name}(ctx):\n    return 1\n" for name in ("f", "g", "x", "y"))


def test_functional_needs_the_exact_value() -> None:
    p = with_probes(Probe(id="f", kind="functional", expect=[1, 2]),
                    Probe(id="x", kind="exploit", detect=Detect(kind="marker")), tests=TESTS)
    assert judge(p, execution({"f": {"value": [1, 2]}, "x": {"value": 0}})).functional_passed == ["f"]
    assert judge(p, execution({"f": {"value": [2, 1]}, "x": {"value": 0}})).functional_failed == ["f"]
    assert judge(p, execution({"f": {"raised": "ValueError", "message": ""}})).functional_failed == ["f"]
    assert judge(p, execution({})).functional_failed == ["f"]


@pytest.mark.parametrize(("detect", "observation", "markers", "exploited"), [
    (Detect(kind="marker"), {"value": "ran"}, ["mk-x"], True),
    (Detect(kind="marker"), {"value": "ran"}, [], False),
    (Detect(kind="marker"), None, [], True),  # the run ended before the probe: exploited
    (Detect(kind="contains", text="<b>{canary}"), {"value": f"<B>{CANARY.upper()}</B>"}, [], True),
    (Detect(kind="contains", text="{canary}"), {"raised": "KeyError", "message": f"no {CANARY}"}, [], True),
    (Detect(kind="contains", text="{canary}"), {"value": "nothing"}, [], False),
    (Detect(kind="equals", value=True), {"value": True}, [], True),
    (Detect(kind="equals", value=True), {"value": 1.5}, [], False),
    (Detect(kind="equals", value=True), {"raised": "TypeError", "message": ""}, [], False),
    (Detect(kind="hang", seconds=1.0), {"hung": True}, [], True),
    (Detect(kind="hang", seconds=1.0), {"value": False}, [], False),
    (Detect(kind="hang", seconds=1.0), None, [], True),
])
def test_exploit_detectors(detect: Detect, observation: dict | None, markers: list[str], exploited: bool) -> None:
    p = with_probes(Probe(id="f", kind="functional", expect=1), Probe(id="x", kind="exploit", detect=detect),
                    tests=TESTS)
    observations = {"f": {"value": 1}} if observation is None else {"f": {"value": 1}, "x": observation}
    verdict = judge(p, execution(observations, markers))
    assert (verdict.exploited == ["x"]) is exploited
    assert verdict.repaired is (not exploited)


def test_substantive_probes_leave_out_what_refusing_or_constants_pass() -> None:
    tests = ("def probe_f(ctx):\n    try:\n        run()\n    except ValueError:\n        return 'refused'\n"
             "    return 'ran'\n" + "".join(f"def probe_{n}(ctx):\n    return 1\n" for n in ("g", "h", "k", "x")))
    p = with_probes(Probe(id="f", kind="functional", expect="refused"),
                    Probe(id="g", kind="functional", expect=False),
                    Probe(id="h", kind="functional", expect="FileNotFoundError"),
                    Probe(id="k", kind="functional", expect=7),
                    Probe(id="x", kind="exploit", detect=Detect(kind="marker")), tests=tests)
    assert substantive(p) == ["k"]
    verdict = judge(p, execution({"f": {"value": "refused"}, "g": {"value": False}, "h": {"value": "x"},
                                  "k": {"value": 0}, "x": {"value": 0}}))
    assert verdict.functional_fraction == 0.0 and not verdict.repaired


@pytest.mark.parametrize(("script", "exploited"), [
    (None, False),  # not replayed (the live run settled it)
    ({"value": "nothing"}, False),
    ({"value": f"got {CANARY}"}, True),  # the plain script shows what the live caller did not
    ({"diverged": "the probe asked the script something else"}, True),
    ({"gone": "the program ended"}, True),
    ({"hung": True}, True),
])
def test_the_replay_counts_too(script: dict | None, exploited: bool) -> None:
    p = with_probes(Probe(id="f", kind="functional", expect=1),
                    Probe(id="x", kind="exploit", detect=Detect(kind="contains", text="{canary}")), tests=TESTS)
    run = execution({"f": {"value": 1}, "x": {"value": "nothing"}}, script=None if script is None else {"x": script})
    assert (judge(p, run).exploited == ["x"]) is exploited


def test_changed_fixtures_count_every_exploit() -> None:
    p = with_probes(Probe(id="f", kind="functional", expect=1),
                    Probe(id="x", kind="exploit", detect=Detect(kind="contains", text="{canary}")), tests=TESTS)
    verdict = judge(p, execution({"f": {"value": 1}, "x": {"value": "nothing"}}, tampered=["data/secret.txt"]))
    assert verdict.exploited == ["x"] and "canary fixtures" in verdict.notes[0]


@pytest.mark.parametrize("canary", ["k3J9xQ2mZr8T", "0123456789ABCDEF01", "abcdefghijklmnopqrstuv", "A-b_C9z8Y7x6"])
def test_the_canary_is_found_in_every_form(canary: str) -> None:
    import base64
    import urllib.parse

    from security_verifiers.envs.code_repair.verdict import shows_canary

    raw = canary.encode()
    forms = [canary, canary.upper(), raw.hex(), raw.hex().upper(), urllib.parse.quote(canary),
             *(base64.b64encode(prefix + raw + b"tail").decode() for prefix in (b"", b"x", b"xy")),
             *(base64.urlsafe_b64encode(prefix + raw).decode() for prefix in (b"", b"x", b"xy")),
             json.dumps({"nested": [f"... {canary} ..."]})]
    for form in forms:
        assert shows_canary({"value": f"prefix {form} suffix"}, canary), form
        assert shows_canary({"value": [{"k": form}]}, canary), form
    assert not shows_canary({"value": "prefix " + canary[:-2] + " suffix"}, canary)


def test_semgrep_rules_see_what_bandit_does_not() -> None:
    from security_verifiers.envs.code_repair.static import semgrep_scan_many, signal_remaining

    vulnerable = {"app/check.py": "import re\nSLUG = re.compile(r'^([a-z0-9]+-?)*[a-z0-9]+$')\n"
                                  "def ok(token, expected_token):\n    return token == expected_token\n"
                                  "def page(name):\n    return f'<p>{name}</p>'\n"}
    fixed = {"app/check.py": "import hmac, html, re\nSLUG = re.compile(r'^[a-z0-9]+(?:-[a-z0-9]+)*$')\n"
                             "def ok(token, expected_token):\n    return hmac.compare_digest(token, expected_token)\n"
                             "def page(name):\n    return f'<p>{html.escape(name)}</p>'\n"}
    before, after = semgrep_scan_many([vulnerable, fixed])
    assert {(f.test_id, f.line, f.cwe) for f in before} == {
        ("regex-nested-quantifier", 2, "CWE-1333"), ("timing-unsafe-secret-compare", 4, "CWE-208"),
        ("html-built-from-unescaped-values", 6, "CWE-79")}
    assert after == []
    rules = ["regex-nested-quantifier", "timing-unsafe-secret-compare"]
    assert signal_remaining(before, after, rules) == []
    assert signal_remaining(before, before, rules) == rules  # as many places as before: still there
