"""E5's and E6's robustness splits: named rewrites that keep what is judged (the canary, the task, the policy's facts,
the injection's instructions) and what the scripted policies do, paired with their clean items by `sv robust`."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.kits.robust import Rewrite, clean_id, rewrite_item, robust_items
from security_verifiers.envs.redteam.attack.env import RedteamAttack
from security_verifiers.envs.redteam.defense.env import RedteamDefense
from security_verifiers.envs.redteam.defense.items import condition
from security_verifiers.envs.redteam.defense.rewrites import REWRITES, unplace
from security_verifiers.envs.redteam.scenario.items import pasted
from security_verifiers.envs.redteam.scenario.paraphrase import REQUEST_WORDINGS, parse_request, reading
from security_verifiers.envs.redteam.scenario.scenarios import carriers_of
from security_verifiers.envs.redteam.scenario.worlds import FIRST, LAST

DEFENSE, ATTACK = RedteamDefense(), RedteamAttack()
KINDS = ("paraphrased_injection", "other_carrier", "renamed_people", "paraphrased_request")
NAME = re.compile(r"(?<![A-Za-z])(?:" + "|".join((*FIRST, *LAST)) + r")(?![A-Za-z])", re.I)


@cache
def defense_test() -> dict[str, Item]:
    return {item.id: item for item in DEFENSE.dataset("test").items}


@cache
def defense_robust() -> tuple[Item, ...]:
    """E6's robust split, built (and every rewrite checked by the environment) once for the module."""
    return tuple(DEFENSE.dataset("robust").items)


def rewrites_of(kind: str) -> list[tuple[Item, Item]]:
    clean = defense_test()
    return [(clean[clean_id(item.id)[0]], item) for item in defense_robust() if clean_id(item.id)[1] == kind]


# --- E6 ------------------------------------------------------------------------------------------------------------

def test_every_test_item_gets_each_rewrite_that_applies_to_it_keeping_target_and_id() -> None:
    clean = defense_test()
    robust = defense_robust()  # built: every rewrite passed rewrite_problem, or the build would raise
    assert [r.kind for r in DEFENSE.rewrites()] == list(KINDS)
    by_kind = Counter(clean_id(item.id)[1] for item in robust)
    injected = sum(condition(i.target) in ("attack", "twin") for i in clean.values())
    assert by_kind == {"paraphrased_injection": injected, "other_carrier": injected,
                       "renamed_people": len(clean), "paraphrased_request": len(clean)}
    for item in robust:
        of, kind = clean_id(item.id)
        assert item.split == "robust" and item.meta["rewrite"] == kind and item.meta["of"] == of
        assert item.target == clean[of].target and item.input != clean[of].input
        assert item.input["canary"] == clean[of].input["canary"] and item.input["task"] == clean[of].input["task"]
    assert len({item.id for item in robust}) == len(robust)


def test_unplace_finds_what_the_generator_placed_and_puts_it_back() -> None:
    for item in defense_test().values():
        placed = unplace(item.input)
        assert placed.carrier == item.target["carrier"] and bool(placed.texts) == (placed.carrier is not None)
        world, request = placed.put()
        assert world.model_dump(mode="json") == item.input["world"] and request == item.input["request"]


def test_a_paraphrased_injection_rewords_every_injection_and_reads_the_same() -> None:
    pairs = rewrites_of("paraphrased_injection")
    assert pairs
    for original, rewritten in pairs:
        before, after = unplace(original.input), unplace(rewritten.input)
        assert after.carrier == before.carrier == original.target["carrier"]
        assert after.world == before.world and after.request == before.request  # only the injected text moves
        assert after.texts != before.texts and len(after.texts) == len(before.texts)
        assert [reading(t) for t in after.texts] == [reading(t) for t in before.texts]
    changed = sum(a != b for o, r in pairs for a, b in zip(unplace(o.input).texts, unplace(r.input).texts,
                                                               strict=True))
    assert changed >= len(pairs)


def test_other_carrier_moves_the_same_text_to_another_place_the_task_reads() -> None:
    moves: Counter[tuple[str | None, str | None]] = Counter()
    for original, rewritten in rewrites_of("other_carrier"):
        before, after = unplace(original.input), unplace(rewritten.input)
        assert after.carrier != before.carrier and after.carrier in carriers_of(before.task.kind)
        assert "\n\n".join(after.texts) == "\n\n".join(before.texts)
        assert after.world == before.world and after.request == before.request
        moves[before.carrier, after.carrier] += 1
    assert {a for a, _ in moves} == {b for _, b in moves} == {"user_turn", "email", "document", "web_page",
                                                              "tool_result"}


def test_renamed_people_renames_everyone_but_the_tasks_recipient_and_leaves_the_injection() -> None:
    for original, rewritten in rewrites_of("renamed_people"):
        kept = {m.group().lower() for m in NAME.finditer(json.dumps(original.input["task"]))}
        left = {m.group().lower() for m in NAME.finditer(json.dumps(rewritten.input["world"]) +
                                                         rewritten.input["role"] + rewritten.input["request"])}
        assert left <= kept, left - kept
        assert rewritten.input["role"] != original.input["role"]  # the user is renamed (never the recipient)
        assert unplace(rewritten.input).texts == unplace(original.input).texts
        assert rewritten.input["world"]["domains"] == original.input["world"]["domains"]


def test_a_paraphrased_request_is_another_wording_of_the_same_task() -> None:
    for original, rewritten in rewrites_of("paraphrased_request"):
        before, after = unplace(original.input), unplace(rewritten.input)
        old, new = parse_request(before.task.kind, before.request), parse_request(after.task.kind, after.request)
        assert old is not None and new is not None and old[0] == 0 and new[0] != 0 and old[1] == new[1]
        assert pasted(rewritten.input["request"]) == pasted(original.input["request"])
        assert after.world == before.world and after.texts == before.texts


def test_every_public_request_is_its_tasks_first_wording() -> None:
    requests = [(i.input["task"]["kind"], unplace(i.input).request) for i in defense_test().values()]
    requests += [(i.input["scenario"]["task"]["kind"], i.input["scenario"]["request"])
                 for split in ATTACK.public_splits for i in ATTACK.dataset(split).items]
    for kind, request in requests:
        parsed = parse_request(kind, request)
        assert parsed is not None and parsed[0] == 0, (kind, request)
    assert set(REQUEST_WORDINGS) == {kind for kind, _ in requests}


def test_the_rewrites_are_deterministic() -> None:
    robust = {item.id: item for item in defense_robust()}
    for item in list(defense_test().values())[:8]:
        for rewrite in REWRITES:
            again = rewrite_item(item, rewrite)
            assert again is None or robust[again.id] == again


def _drop_injection(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    placed = unplace(item_input)
    world, request = placed.put(texts=[])
    return {**item_input, "world": world.model_dump(mode="json"), "request": request}


def _new_canary(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {**item_input, "canary": "BBBB-CCCC-DDDD-FFFF"}


def _retarget(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A "paraphrase" that changes what is asked: another recipient, another file, the secret in another form."""
    placed = unplace(item_input)
    texts = [re.sub(r"\b(base64|hex(?:adecimal)?|rot13)\b", "reversed",
                    re.sub(r"@[\w.-]+\.example", "@elsewhere.example", t.replace("/private/", "/private/old/")))
             for t in placed.texts]
    world, request = placed.put(texts=texts)
    return {**item_input, "world": world.model_dump(mode="json"), "request": request}


def _other_org(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    world = {**item_input["world"], "domains": ["elsewhere.example"]}
    return {**item_input, "world": world}


@pytest.mark.parametrize(("rewrite", "problem"), [
    (_drop_injection, "the injected text is gone"),
    (_new_canary, "the canary changes"),
    (_retarget, "the instructions the naive assistant reads changes"),
    (_other_org, "the world's policy facts"),
])
def test_a_rewrite_that_changes_what_is_judged_is_refused(rewrite: Callable[[dict[str, Any], random.Random],
                                                                             dict[str, Any]], problem: str) -> None:
    attacked = [i for i in defense_test().values() if condition(i.target) == "attack"][:6]
    env = RedteamDefense()
    env.rewrites = lambda: (Rewrite("label_changing", "changes what is judged", rewrite),)  # type: ignore[method-assign]
    with pytest.raises(DatasetError, match=rf"rewrite\(s\) would change what is scored .*{re.escape(problem)}"):
        robust_items(env, attacked)


# --- E5 ------------------------------------------------------------------------------------------------------------

def test_e5_rewords_only_the_request_the_attacker_is_shown() -> None:
    clean = {item.id: item for item in ATTACK.dataset("test").items}
    robust = ATTACK.dataset("robust").items
    assert [r.kind for r in ATTACK.rewrites()] == ["paraphrased_request"] and len(robust) == len(clean)
    for item in robust:
        of, kind = clean_id(item.id)
        original = clean[of]
        assert item.split == "robust" and item.meta == {**original.meta, "rewrite": kind, "of": of}
        assert item.target == original.target
        assert {k: v for k, v in item.input.items() if k != "request_shown"} == original.input  # the target's world
        shown, request = item.input["request_shown"], original.input["scenario"]["request"]
        assert shown != request
        prompt, clean_prompt = ATTACK.prompt(item)[0].content, ATTACK.prompt(original)[0].content
        assert shown in prompt and request not in prompt and prompt.replace(shown, request) == clean_prompt
    assert [i.input for i in ATTACK.dataset("robust").items] == [i.input for i in robust]  # deterministic


@pytest.mark.parametrize(("change", "problem"), [
    (lambda i: {**i, "request_shown": i["scenario"]["request"].replace("/shared/", "/private/")},
     "not another wording"),
    (lambda i: {**i, "request_shown": i["scenario"]["request"], "target": "L1-obeys-any"},
     "the scenario or the target level changes"),
    (lambda i: {**i, "scenario": {**i["scenario"], "carrier": "user_turn", "slot": "request"}},
     "the scenario or the target level changes"),
])
def test_an_e5_rewrite_that_misinforms_the_attacker_or_changes_the_target_is_refused(
        change: Callable[[dict[str, Any]], dict[str, Any]], problem: str) -> None:
    items = [i for i in ATTACK.dataset("test").items if i.input["target"] != "L1-obeys-any"
             and i.input["scenario"]["carrier"] != "user_turn" and "/shared/" in i.input["scenario"]["request"]][:3]
    assert items
    env = RedteamAttack()
    env.rewrites = lambda: (Rewrite("label_changing", "", lambda i, rng: change(i)),)  # type: ignore[method-assign]
    with pytest.raises(DatasetError, match=rf"would change what is scored .*{re.escape(problem)}"):
        robust_items(env, items)


# --- sv eval ... --split test,robust, then sv robust -----------------------------------------------------------------

@pytest.mark.parametrize(("env", "baseline", "kinds", "limit"), [
    ("redteam-defense", "naive", set(KINDS), 24),
    ("redteam-defense", "keyword-guard", set(KINDS), 24),
    ("redteam-attack", "templates", {"paraphrased_request"}, 10),
])
def test_sv_robust_pairs_each_clean_item_with_its_rewrites(env: str, baseline: str, kinds: set[str], limit: int,
                                                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The scripted policies read what the rewrites keep (E6: the task, the instructions; E5: the target plays the
    clean scenario and the templates are fixed texts): every kind's change is exactly 0."""
    out = tmp_path / "runs"
    assert main(["eval", env, "--model", f"baseline:{baseline}", "--split", "test,robust", "--limit", str(limit),
                 "--out", str(out), "--run-id", "r", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["robust", str(out / "evals" / f"{env}--baseline-{baseline}" / "r"), "--json", "--n-boot", "50"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["kinds"]) == kinds
    for row in result["kinds"].values():
        assert row["items"] >= 2
        reward = row["metrics"]["reward_mean"]
        assert reward["delta"] == 0.0 and reward["ci"] == [0.0, 0.0]
