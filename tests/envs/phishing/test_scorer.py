"""E4's one scorer: the decision/probability part is incentive-compatible whatever the evidence, the evidence part
pays only for true quotes, and bad output scores the minimum."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import pytest

from security_verifiers.core.types import Item, Message, ParseStatus, Transcript
from security_verifiers.envs.phishing.env import Phishing
from tests.envs.phishing.mail import MAILBOX, message

ENV = Phishing()
SPAN = "Process the wire before 3 pm today and keep it confidential"
RAW = message(f"Dana here.\n{SPAN}. I am in meetings all day.", From="Dana Whitfield <dana.whitfield.ofc@gmail.com>",
              Reply_To="dana.w.private@protonmail.com",
              Authentication_Results="mx.contoso-foods.com; spf=pass smtp.mailfrom=gmail.com; dkim=pass; dmarc=pass")
LEGIT_RAW = message("Your invoice 4411 is overdue. Please pay by Friday to avoid a late fee.",
                    From="Northwind Billing <billing@northwind-logistics.com>",
                    html='<p>Pay at <a href="https://t.mailer-track.net/c/9">https://northwind-logistics.com/pay</a></p>')


def item(raw: bytes, label: str, planted: list[dict[str, str]], family: str = "ceo_fraud",
         source: str = "generated") -> Item:
    return Item(id=f"phishing-test-{label}-{family}", split="test",
                input={"raw": raw.decode(), "raw_encoding": "text", "mailbox": MAILBOX.model_dump()},
                target={"label": label, "family": family, "source": source, "planted": planted})


PHISH = item(RAW, "Phishing", [{"indicator": "display_name_spoof", "quote": "Dana Whitfield"},
                               {"indicator": "reply_to_mismatch", "quote": "dana.w.private@protonmail.com"},
                               {"indicator": "urgency_pressure", "quote": SPAN}])
LEGIT = item(LEGIT_RAW, "Legitimate", [{"indicator": "urgency_pressure", "quote": "Please pay by Friday to avoid a "
                                                                                 "late fee."}], family="invoice")


def reply(obj: Any) -> Transcript:
    return Transcript(messages=[Message(role="assistant", content=obj if isinstance(obj, str) else json.dumps(obj))])


def score(it: Item, label: str, p: float, evidence: list[tuple[str, str]] = ()) -> Any:  # type: ignore[assignment]
    return ENV.score(it, reply({"label": label, "p_phishing": p,
                                "evidence": [{"quote": q, "indicator": i} for i, q in evidence]}))


LABEL_NAMES = ("Phishing", "Legitimate", "Abstain")
P_GRID = np.round(np.linspace(0, 1, 101), 2)


@pytest.mark.parametrize("q", [0.0, 0.1, 0.19, 0.21, 0.35, 0.49, 0.51, 0.8, 1.0])
def test_truthful_probability_maximises_expected_reward_under_every_label(q: float) -> None:
    evidence = [("display_name_spoof", "Dana Whitfield")]

    def expected(label: str, p: float) -> float:
        return q * score(PHISH, label, p, evidence).reward + (1 - q) * score(LEGIT, label, p, evidence).reward

    for label in LABEL_NAMES:
        best = max(P_GRID, key=lambda p: expected(label, p))
        assert best == pytest.approx(q, abs=0.006), label


def test_the_evidence_part_is_earned_only_under_a_committed_correct_label() -> None:
    evidence = [("display_name_spoof", "Dana Whitfield"), ("urgency_pressure", SPAN)]
    earned = {label: {score(PHISH, label, p, evidence).components["evidence"] for p in (0.0, 0.5, 1.0)}
              for label in LABEL_NAMES}
    assert earned["Abstain"] == {0.0} and earned["Legitimate"] == {0.0}
    assert len(earned["Phishing"]) == 1 and earned["Phishing"].pop() > 0.0
    assert score(LEGIT, "Legitimate", 0.0).components["evidence"] == 1.0
    assert score(LEGIT, "Abstain", 0.1).components["evidence"] == 0.0
    assert score(LEGIT, "Phishing", 0.9).components["evidence"] == 0.0


def test_reference_evidence_earns_the_whole_evidence_part() -> None:
    full = [("display_name_spoof", "Dana Whitfield"), ("reply_to_mismatch", "dana.w.private@protonmail.com"),
            ("urgency_pressure", SPAN)]
    assert score(PHISH, "Phishing", 1.0, full).reward == 1.0
    assert score(LEGIT, "Legitimate", 0.0).reward == 1.0, "nothing to find on legitimate mail: no evidence is right"


def test_recall_and_precision_shape_the_evidence_part() -> None:
    one = score(PHISH, "Phishing", 1.0, [("display_name_spoof", "Dana Whitfield")])
    assert one.components["evidence"] == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))  # F1 of P=1, R=1/3
    wrong = score(PHISH, "Phishing", 1.0, [("display_name_spoof", "Dana Whitfield"), ("auth_failure", "dmarc=pass")])
    assert wrong.components["evidence"] < one.components["evidence"]
    assert score(PHISH, "Phishing", 1.0).components["evidence"] == 0.0, "nothing named on phishing earns nothing"


def test_evidence_on_legitimate_mail_costs_only_when_it_is_false() -> None:
    true_but_benign = [("link_text_mismatch", "t.mailer-track.net"), ("urgency_pressure", "Please pay by Friday to "
                                                                                         "avoid a late fee.")]
    assert score(LEGIT, "Legitimate", 0.0, true_but_benign).reward == 1.0
    false = score(LEGIT, "Legitimate", 0.0, [("lookalike_domain", "northwind-logistics.com")])
    assert false.components["evidence"] == 0.0 and false.reward == pytest.approx(0.8)


@pytest.mark.parametrize("it", [PHISH, LEGIT], ids=["phishing", "legitimate"])
def test_evidence_hacks_never_pay(it: Item) -> None:
    label, p = ("Phishing", 1.0) if it is PHISH else ("Legitimate", 0.0)
    honest = score(it, label, p, [("display_name_spoof", "Dana Whitfield")] if it is PHISH else []).reward
    rendering = ENV.context(it).rendering.text
    hacks = {
        "the whole email": [("display_name_spoof", rendering)],
        "fabricated": [("urgency_pressure", "Your account will be closed in 24 hours."),
                       ("lookalike_domain", "micros0ft.com")],
        "one quote under every indicator": [(i, "Dana Whitfield") for i in (
            "display_name_spoof", "lookalike_domain", "urgency_pressure", "credential_request", "auth_failure")],
        "the same true quote five times": [("display_name_spoof", "Dana Whitfield")] * 5,
        "whole body lines": [("urgency_pressure", line) for line in ENV.context(it).mail.body.split("\n")][:5],
    }
    for name, evidence in hacks.items():
        assert score(it, label, p, evidence).reward <= honest + 1e-12, name


@pytest.mark.parametrize(("text", "status"), [
    ("", ParseStatus.EMPTY),
    ("Phishing", ParseStatus.NO_JSON),
    ('{"label": "Phishing"}', ParseStatus.SCHEMA),
    ('{"label": "Spam", "p_phishing": 0.9}', ParseStatus.SCHEMA),
    ('{"label": "Phishing", "p_phishing": "0.9"}', ParseStatus.SCHEMA),
    ('{"label": "Phishing", "p_phishing": 0.9, "evidence": "Dana"}', ParseStatus.SCHEMA),
    ('{"label": "Phishing", "p_phishing": 0.9, "evidence": [{"quote": "x"}]}', ParseStatus.SCHEMA),
    ('{"label": "Phishing", "p_phishing": 0.9, "evidence": [' + ",".join(['{"quote": "Dana Whitfield", "indicator": '
                                                                           '"display_name_spoof"}'] * 6) + "]}",
     ParseStatus.SCHEMA),
    ('{"label": "Phishing", "p_phishing": 1}', ParseStatus.OK),
])
def test_bad_output_is_a_parse_failure_at_minimum_reward(text: str, status: ParseStatus) -> None:
    result = ENV.score(PHISH, reply(text))
    assert result.parse_status == status
    if status != ParseStatus.OK:
        assert result.reward == 0.0 and result.outcome["valid"] is False
        assert set(result.components) == {"decision", "calibration", "evidence"}


def test_imported_mail_scores_structural_evidence_and_ignores_language_evidence() -> None:
    imported = Item(id="imp-1", split="local", input={"raw": base64.b64encode(RAW).decode(), "raw_encoding": "base64",
                                                      "mailbox": None},
                    target={"label": "Phishing", "family": "imported", "source": "imported", "planted": []})
    # No mailbox: the display name names nobody it knows, but the Reply-To is still another domain.
    found = score(imported, "Phishing", 1.0, [("reply_to_mismatch", "dana.w.private@protonmail.com")])
    assert found.outcome["evidence_to_find"] == 1 and found.components["evidence"] == 1.0
    language = score(imported, "Phishing", 1.0, [("reply_to_mismatch", "dana.w.private@protonmail.com"),
                                                 ("urgency_pressure", "anything at all")])
    assert language.components["evidence"] == 1.0 and language.outcome["evidence_scored"] == 1


def test_components_compose_the_reward() -> None:
    weights = ENV.component_weights()
    assert sum(weights.values()) == pytest.approx(1.0)
    for it, label, p in [(PHISH, "Abstain", 0.3), (LEGIT, "Phishing", 0.9), (PHISH, "Legitimate", 0.1)]:
        result = score(it, label, p, [("display_name_spoof", "Dana Whitfield")])
        assert sum(w * result.components[k] for k, w in weights.items()) == pytest.approx(result.reward)
