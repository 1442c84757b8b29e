"""E4 generator: deterministic, parseable, contract-valid items whose planted evidence is really in the message,
with every family present, OOD families and organisations kept out of train/dev/test, and no single shortcut."""

import email
import email.policy
from collections import Counter

import pytest

from security_verifiers.core.datasets import content_hash
from security_verifiers.core.errors import DatasetError
from security_verifiers.envs.phishing import generator as gen
from security_verifiers.envs.phishing.audit import bag_of_words_audit, shortcut_audit
from security_verifiers.envs.phishing.brands import OWNER
from security_verifiers.envs.phishing.domains import within
from security_verifiers.envs.phishing.families import FAMILIES
from security_verifiers.envs.phishing.generator import OOD_ONLY, SPLITS, generate, self_check
from security_verifiers.envs.phishing.items import PhishingInput, PhishingTarget
from security_verifiers.envs.phishing.message import parse
from security_verifiers.envs.phishing.render import render
from security_verifiers.envs.phishing.world import IN_DIST_ORGS, MAIL_BRANDS, OOD_ORGS


@pytest.fixture(scope="module")
def test_items():
    return generate("test", 2000, seed=0)


@pytest.fixture(scope="module")
def ood_items():
    return generate("ood", 600, seed=0)


def test_same_seed_same_items_and_other_seeds_or_splits_differ() -> None:
    first = content_hash(generate("test", 30, seed=1))
    assert content_hash(generate("test", 30, seed=1)) == first
    assert content_hash(generate("test", 30, seed=2)) != first
    assert [i.input for i in generate("dev", 30, seed=1)] != [i.input for i in generate("test", 30, seed=1)]


def test_prefix_is_stable_when_n_grows_and_ids_are_positional() -> None:
    items = generate("train", 20, seed=9)
    assert items == generate("train", 40, seed=9)[:20]
    assert [i.id for i in items[:3]] == ["phishing-train-000000", "phishing-train-000001", "phishing-train-000002"]


@pytest.mark.parametrize("split", ["validation", "", "TEST"])
def test_unknown_split_is_an_error(split: str) -> None:
    with pytest.raises(DatasetError, match="unknown split"):
        generate(split, 5, seed=0)


def test_every_family_appears_where_it_belongs(test_items, ood_items) -> None:
    in_dist = {i.target["family"] for i in test_items}
    ood = {i.target["family"] for i in ood_items}
    assert in_dist == {f.name for f in FAMILIES if not f.ood}
    assert ood == {f.name for f in FAMILIES if f.ood or f.shared}
    assert OOD_ONLY == {"oauth_consent", "reply_chain_hijack", "idn_homograph", "esign_request", "helpdesk_ticket"}


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_ood_families_and_organisations_never_leave_the_ood_split(split: str) -> None:
    items = generate(split, 400, seed=4)
    assert not {i.target["family"] for i in items} & OOD_ONLY
    ood_orgs = {o.name for o in OOD_ORGS}
    assert not {i.meta["organisation"] for i in items} & ood_orgs
    for item in items:  # not even a partner or a domain of an OOD organisation
        raw = item.input["raw"].lower()
        assert not any(d in raw for o in OOD_ORGS for d in o.domains)
        assert not any(d in raw for o in OOD_ORGS for p in o.partners for d in p.domains)
    assert {o.name for o in IN_DIST_ORGS}.isdisjoint(ood_orgs)


@pytest.mark.parametrize("split", SPLITS)
def test_phishing_share_is_between_a_quarter_and_a_half(split: str) -> None:
    items = generate(split, 800, seed=6)
    share = sum(i.target["label"] == "Phishing" for i in items) / len(items)
    assert 0.25 <= share <= 0.5, share


def test_items_parse_and_follow_the_contract(test_items, ood_items) -> None:
    for item in [*test_items[:600], *ood_items[:200]]:
        inp = PhishingInput.model_validate(item.input)
        target = PhishingTarget.model_validate(item.target)
        msg = email.message_from_bytes(inp.message_bytes(), policy=email.policy.default)
        assert msg["From"] and msg["Subject"] and msg["Message-ID"] and len(msg.get_all("Received")) in range(2, 6)
        assert target.source == "generated" and (target.label == "Legitimate" or target.planted)
        assert item.meta["difficulty"] in ("easy", "hard") and item.meta["lure"] and item.meta["organisation"]
        assert inp.mailbox is not None and inp.mailbox.organisation == item.meta["organisation"]


def test_planted_quotes_lie_inside_one_segment_of_the_rendering(test_items, ood_items) -> None:
    for item in [*test_items[:500], *ood_items[:200]]:
        rendering = render(parse(item.input["raw"].encode()))
        for planted in item.target["planted"]:
            assert rendering.locate(" ".join(planted["quote"].split())), (item.id, planted)


def test_indicators_are_planted_on_both_labels(test_items) -> None:
    by_label: dict[str, Counter[str]] = {"Phishing": Counter(), "Legitimate": Counter()}
    for item in test_items:
        by_label[item.target["label"]].update(p["indicator"] for p in item.target["planted"])
    for indicator in ("credential_request", "payment_change_request", "urgency_pressure", "auth_failure",
                      "reply_to_mismatch", "link_text_mismatch", "risky_attachment"):
        assert by_label["Phishing"][indicator] and by_label["Legitimate"][indicator], indicator


def test_no_single_header_domain_or_word_decides_the_label(test_items) -> None:
    audit = shortcut_audit(test_items)
    assert audit["n"] == 2000 and len(audit["top"]) == 10
    assert audit["max_balanced_accuracy"] < 0.8, audit["top"]


def test_words_alone_do_not_decide_the_label(test_items) -> None:
    """Both classes write the same notices (sign-in alerts, resets, invoices, deliveries, shares), so TF-IDF and a
    logistic regression fitted on generated train mail stay well short of solving the test split, and no single
    feature decides it either."""
    audit = bag_of_words_audit(generate("train", 1500, seed=3), test_items)
    assert audit["n"] == 2000 and audit["n_train"] == 1500
    assert audit["accuracy"] <= 0.90, audit
    assert 0.0 <= audit["brier"] <= 0.25 and audit["fpr"] is not None and audit["recall"] is not None
    assert shortcut_audit(test_items)["max_balanced_accuracy"] < 0.8


def test_the_bag_of_words_audit_needs_both_labels_to_train() -> None:
    legitimate = [i for i in generate("train", 40, seed=1) if i.target["label"] == "Legitimate"]
    with pytest.raises(ValueError, match="both labels"):
        bag_of_words_audit(legitimate, legitimate)


def test_self_check_rejects_evidence_its_verifier_does_not_confirm() -> None:
    item = generate("test", 1, seed=0)[0]
    inp = PhishingInput.model_validate(item.input)
    bad = PhishingTarget(label="Phishing", family="x", planted=[{"indicator": "risky_attachment",
                                                                  "quote": "nothing-like-this.exe"}])
    with pytest.raises(DatasetError, match="not confirmed"):
        self_check(inp, bad, "test")
    self_check(inp, PhishingTarget.model_validate(item.target), "test")  # the real target passes


def test_generator_version_is_recorded() -> None:
    assert generate("dev", 1, seed=0)[0].meta["generator_version"] == gen.GENERATOR_VERSION


def test_the_brands_the_generator_writes_are_the_knowledge_bases() -> None:
    """One record of who owns what (``brand_data.KNOWN_BRANDS``): each brand the generator writes mail of is the
    known brand of its name, its domains are among that brand's and its sender is at one of them, so the scorer
    takes its genuine mail as genuine and never plants one of its domains as a look-alike."""
    for brand in MAIL_BRANDS:
        known = OWNER[brand.name]
        assert known.name == brand.name
        assert set(brand.domains) <= set(known.domains), brand.name
        assert within(brand.sender.rpartition("@")[2], frozenset(brand.domains)), brand.sender
