"""The committed public sets are what the generator writes today (a generator change that alters them must be
followed by `sv data build phishing --public`), they cover the families and hard cases the card claims, and the
hand-written real-format mail is read by the loaders as its labels say."""

from __future__ import annotations

import json
from collections import Counter

from security_verifiers.core.datasets import write_jsonl
from security_verifiers.envs.kits.public_sets import PUBLIC_SEED
from security_verifiers.envs.phishing.audit import shortcut_audit
from security_verifiers.envs.phishing.env import DATA_DIR, Phishing
from security_verifiers.envs.phishing.generator import generate
from security_verifiers.envs.phishing.sim_to_real import REAL_DIR, evaluate, real_items

MANIFEST = json.loads((DATA_DIR / "manifest.json").read_text())


def test_the_ood_split_is_regenerated_byte_for_byte(tmp_path) -> None:  # noqa: ANN001
    items = generate("ood", MANIFEST["splits"]["ood"]["n"], PUBLIC_SEED)
    assert write_jsonl(items, tmp_path / "ood.jsonl") == MANIFEST["splits"]["ood"]["hash"]


def test_the_test_split_starts_with_what_the_generator_writes() -> None:
    committed = list(Phishing().dataset("test").items)
    assert [i.model_dump() for i in generate("test", 40, PUBLIC_SEED)] == [i.model_dump() for i in committed[:40]]


def test_the_public_sets_hold_the_hard_cases_and_no_shortcut() -> None:
    env = Phishing()
    for split in ("test", "ood"):
        items = list(env.dataset(split).items)
        labels = Counter(i.target["label"] for i in items)
        assert 0.25 <= labels["Phishing"] / len(items) <= 0.5
        assert shortcut_audit(items)["max_balanced_accuracy"] < 0.8
    test_families = {i.target["family"] for i in env.dataset("test").items}
    ood_families = {i.target["family"] for i in env.dataset("ood").items}
    assert {"password_reset", "invoice_reminder", "newsletter", "ceo_wire", "gift_card", "qr_code"} <= test_families
    assert {"oauth_consent", "reply_chain_hijack", "idn_homograph"} <= ood_families
    assert not {"oauth_consent", "reply_chain_hijack", "idn_homograph"} & test_families


def test_the_real_format_mail_is_read_as_its_labels_say() -> None:
    listed = json.loads((REAL_DIR / "labels.json").read_text())
    items = [i for layout in real_items().values() for i in layout]
    assert len(items) == len(listed) == 46
    assert Counter(i.target["label"] for i in items) == Counter(e["label"] for e in listed)
    assert all(i.target["source"] == "imported" and i.input["mailbox"] is None for i in items)


def test_the_classical_model_trained_on_generated_mail_is_measured_on_real_mail() -> None:
    env = Phishing()
    items = [i for layout in real_items().values() for i in layout]
    figures = evaluate(env, items, "classical")
    assert figures["n"] == 46 and figures["fpr"] is not None and figures["tpr"] is not None
    assert figures["evidence_precision"] == 1.0, "what it cites on real mail must be true"
    card = (DATA_DIR / "DATA_CARD.md").read_text()
    assert f"| all | `classical` | 46 | {figures['reward_mean']:.3f} |" in card, "the card states today's figure"
