"""Evidence cannot beat an honest decision: it earns only under a committed, correct label, so abstaining or
calling everything Phishing while quoting what code finds (on imported mail, exactly the evidence target) loses to
the honest heuristic, on imported mail as on generated."""

from __future__ import annotations

import json
from statistics import fmean

import pytest

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.phishing.env import Phishing
from tests.envs.phishing.mail import MAILBOX, message

ENV = Phishing()
AUTH_FAIL = "mx.contoso-foods.com; spf=fail smtp.mailfrom=contoso-f00ds.com; dkim=none; dmarc=fail"
AUTH_PASS = "mx.contoso-foods.com; spf=pass; dkim=pass; dmarc=pass"
PHISHING_MAIL = [
    message("Your mailbox is full. Sign in to keep receiving mail.", From="IT Desk <it@contoso-f00ds.com>",
            Authentication_Results=AUTH_FAIL, html='<a href="https://bit.ly/3xQm">https://contoso-foods.com/'
            'mail</a>'),
    message("Please review the invoice.", From="Northwind Logistics <billing@northwind-logistics.co>",
            Reply_To="pay@protonmail.com", attachments=(("invoice.pdf.html", "text/html", b"<form></form>"),)),
    message("Dana here. Buy five gift cards today and send me the codes.",
            From="Dana Whitfield <dana.whitfield.ofc@gmail.com>"),
    message("Keep your password: sign in below.", From="Contoso IT <noreply@mailer.weebly.com>",
            html='<a href="https://contoso-keep.weebly.com/login">Keep my password</a>'),
]
LEGITIMATE_MAIL = [
    message("Minutes attached.", From="Dana Whitfield <dana.whitfield@contoso-foods.com>",
            Authentication_Results=AUTH_PASS),
    message("Your shipment 4411 left the depot.", From="Northwind Logistics <track@northwind-logistics.com>",
            Authentication_Results=AUTH_PASS),
    message("Our March newsletter.", From="Northwind News <news@northwind-logistics.com>",
            Reply_To="editor@northwind-media.com", html='<a href="https://bit.ly/nw-march">The calendar</a>'),
    message("Lunch on Friday?", From="Ops <ops@contoso-foods.com>", Authentication_Results=AUTH_PASS),
]


def imported(raw: bytes, label: str, k: int) -> Item:
    return Item(id=f"imported-{label}-{k}", split="local",
                input={"raw": raw.decode(), "raw_encoding": "text", "mailbox": MAILBOX.model_dump()},
                target={"label": label, "family": "imported", "source": "imported", "planted": []})


ITEMS = ([imported(raw, "Phishing", k) for k, raw in enumerate(PHISHING_MAIL)]
         + [imported(raw, "Legitimate", k) for k, raw in enumerate(LEGITIMATE_MAIL)])


def mean_reward(name: str) -> float:
    policy = ENV.baselines()[name]()
    prepare = getattr(policy, "prepare", None)
    if callable(prepare):
        prepare(ITEMS)
    rewards = []
    for item in ITEMS:
        text = policy.answer(item, ENV.prompt(item))  # type: ignore[attr-defined]
        rewards.append(ENV.score(item, Transcript(messages=[Message(role="assistant", content=text)])).reward)
    return fmean(rewards)


def test_the_imported_set_has_something_to_find() -> None:
    found = [len(ENV.judging_context(item).detected) for item in ITEMS[:len(PHISHING_MAIL)]]
    assert sum(1 for n in found if n) >= 3


@pytest.mark.parametrize("hack", ["abstain-with-evidence", "phishing-with-detected-quotes", "quote-everything",
                                  "quote-every-line", "every-indicator", "label-probability-mismatch"])
def test_no_evidence_hack_beats_the_heuristic_on_imported_mail(hack: str) -> None:
    assert hack in ENV.hack_baselines
    assert mean_reward(hack) < mean_reward("heuristic")


def test_abstaining_with_the_detected_quotes_earns_no_evidence() -> None:
    item = ITEMS[0]
    detected = ENV.judging_context(item).detected
    assert detected

    def answer(label: str, p: float) -> float:
        text = json.dumps({"label": label, "p_phishing": p,
                           "evidence": [{"quote": q, "indicator": i} for i, q in detected[:5]]})
        return ENV.score(item, Transcript(messages=[Message(role="assistant", content=text)])).components["evidence"]

    assert answer("Abstain", 0.5) == 0.0 and answer("Legitimate", 0.5) == 0.0
    assert answer("Phishing", 0.5) == 1.0, "the detections are the whole target on imported mail"
    wrong = imported(LEGITIMATE_MAIL[2], "Legitimate", 99)
    quotes = [{"quote": q, "indicator": i} for i, q in ENV.judging_context(wrong).detected]
    text = json.dumps({"label": "Phishing", "p_phishing": 0.5, "evidence": quotes})
    assert ENV.score(wrong, Transcript(messages=[Message(role="assistant", content=text)])).components["evidence"] == 0


@pytest.fixture(scope="module")
def real_format() -> list[Item]:
    from security_verifiers.envs.phishing.sim_to_real import real_items

    return [item for layout in real_items().values() for item in layout]


@pytest.mark.parametrize("hack", sorted(ENV.hack_baselines))
def test_no_hack_beats_the_heuristic_on_the_real_format_mail(hack: str, real_format: list[Item]) -> None:
    """The 46 hand-written messages of data/real (imported: no mailbox, structural evidence only)."""
    from security_verifiers.envs.phishing.sim_to_real import evaluate

    heuristic = evaluate(ENV, real_format, "heuristic")["reward_mean"]
    assert evaluate(ENV, real_format, hack)["reward_mean"] < heuristic
    assert heuristic > max(evaluate(ENV, real_format, c)["reward_mean"]
                           for c in ("always-phishing", "always-legitimate", "always-abstain"))
