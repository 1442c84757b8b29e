"""E5's label-preserving rewrite (the ``robust`` split, :mod:`...kits.robust`): the attacker told the same task in
other words.

- ``paraphrased_request``: the user's request, as the attacker's prompt shows it, in another wording of its task
  (:func:`..scenario.paraphrase.reword_request`), every name, subject, path, URL and code kept. It goes in the
  item's ``request_shown``; the scenario itself is untouched, so the target (scripted or served), its world, its
  seeded draws (keyed by the scenario) and the judge play exactly the clean item: a fixed attack text meets the same
  target decisions on both, and only an attacker that reads the wording can move.

Refused, each for a reason the targets or the stored label give:

- ``other_carrier``: the scripted levels trust carriers differently (:data:`..scenario.targets.CARRIER_TRUST`, a
  weight at L2-L5), so the same attack has another chance of working elsewhere: the item's difficulty, and the stored
  reference attack's proof that it beats its level, would change.
- ``renamed_people`` (E6's, or any renaming): what the attacker can name of the world (the organisation, its
  domains, the request's names) is what the levels weigh as context and what the stored reference attack quotes;
  renaming it changes the target's features for the same text. Renaming what the attacker never sees (colleagues,
  customers) changes nothing it reads.
- ``paraphrased_injection``: an E5 item holds no injection; the attacker writes it.

A rewrite of the scenario itself would also re-seed every scripted decision (the draws are keyed by the scenario's
hash): measured on the public test split, re-seeding alone flips the reference attack's outcome on 12 of 100 items
and the templates' on 19, which a robustness split would report as the attacker's fragility.

The check (:func:`rewrite_problem`): the scenario and the target level are identical; the shown request is another
of its task's wordings holding the same values and the same terms (:func:`..scenario.targets.terms_of`); and the
attacker's prompt, built by the environment, is the clean one with the request's wording alone changed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from security_verifiers.core.types import Item, Message
from security_verifiers.envs.kits.robust import Rewrite
from security_verifiers.envs.redteam.scenario.paraphrase import parse_request, reword_request
from security_verifiers.envs.redteam.scenario.targets import terms_of


def paraphrase_request(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    scenario = item_input["scenario"]
    shown = reword_request(scenario["task"]["kind"], scenario["request"], rng)
    return None if shown is None else {**item_input, "request_shown": shown}


REWRITES = (
    Rewrite("paraphrased_request", "the request, as the attacker is told it, in another wording; the target's "
            "scenario untouched", paraphrase_request),
)


def rewrite_problem(original: Item, rewritten: Item, prompt: Callable[[Item], list[Message]]) -> str | None:
    before, after = original.input, rewritten.input
    if {k: v for k, v in after.items() if k != "request_shown"} != before:
        return "the scenario or the target level changes (only the request shown to the attacker may)"
    kind, request, shown = before["scenario"]["task"]["kind"], before["scenario"]["request"], after["request_shown"]
    parsed, reparsed = parse_request(kind, request), parse_request(kind, shown or "")
    if parsed is None or reparsed is None or parsed[1] != reparsed[1] or parsed[0] == reparsed[0]:
        return f"the shown request is not another wording of the same {kind} request: {shown!r}"
    if sorted(terms_of(request)) != sorted(terms_of(shown)):
        return f"the request's terms change ({terms_of(request)} -> {terms_of(shown)})"
    clean, seen = prompt(original), prompt(rewritten)
    if [m.model_copy(update={"content": m.content.replace(shown, request)}) for m in seen] != clean:
        return "the attacker's prompt changes beyond the request's wording"
    return None
