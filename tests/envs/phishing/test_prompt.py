"""E4's prompt styles: the compact one is a shorter instruction over the same email, the checked one adds the signals
code finds in it, and both are scored the same way."""

from __future__ import annotations

import json
import math

from security_verifiers.core.types import Message, Transcript
from security_verifiers.envs.phishing.env import Phishing
from security_verifiers.envs.phishing.heuristic import (
    HEURISTIC_PRIOR,
    SIGNAL_WEIGHTS,
    heuristic_logit,
    heuristic_signals,
)
from security_verifiers.envs.phishing.indicators import INDICATORS
from tests.envs.phishing.test_scorer import LEGIT, PHISH

FULL = Phishing()
COMPACT = Phishing.from_options({"prompt_style": "compact"})
CHECKED = Phishing.from_options({"prompt_style": "checked"})


def test_the_compact_prompt_shows_the_same_email_under_a_shorter_instruction() -> None:
    for it in (PHISH, LEGIT):
        (full_system, full_user), (compact_system, compact_user) = FULL.prompt(it), COMPACT.prompt(it)
        assert compact_user == full_user
        assert len(compact_system.content) < len(full_system.content) / 3
        # Every indicator is named, so evidence stays answerable; the costs are the configured ones.
        assert all(name in compact_system.content for name in INDICATORS)
        assert "missed phishing 5.0, false alarm 2.0, Abstain 1.0" in compact_system.content


def test_the_prompt_style_changes_no_reward() -> None:
    answers = [{"label": "Phishing", "p_phishing": 0.9, "evidence": [{"quote": "dana.w.private@protonmail.com",
                                                                        "indicator": "reply_to_mismatch"}]},
               {"label": "Legitimate", "p_phishing": 0.1}, {"label": "Abstain", "p_phishing": 0.4}, "not json"]
    for it in (PHISH, LEGIT):
        for answer in answers:
            text = answer if isinstance(answer, str) else json.dumps(answer)
            transcripts = [Transcript(messages=[*env.prompt(it), Message(role="assistant", content=text)])
                           for env in (FULL, COMPACT, CHECKED)]
            full, *others = (env.score(it, t) for env, t in zip((FULL, COMPACT, CHECKED), transcripts, strict=True))
            assert all(o.reward == full.reward and o.components == full.components for o in others)


def test_the_checked_prompt_adds_the_heuristics_signals_after_the_same_email() -> None:
    for it in (PHISH, LEGIT):
        (compact_system, compact_user), (checked_system, checked_user) = COMPACT.prompt(it), CHECKED.prompt(it)
        assert checked_system == compact_system
        head, checks = checked_user.content.rsplit("\n\n", 1)
        assert head == compact_user.content
        signals = heuristic_signals(CHECKED.context(it))
        assert checks == f"Checks: {', '.join(signals) or 'none'}"
    assert heuristic_signals(CHECKED.context(PHISH)) == ["display_name_spoof", "reply_to_mismatch"]
    assert heuristic_signals(CHECKED.context(LEGIT)) == ["link_text_mismatch"]  # honest mail has signals too
    # Built from the input alone: a changed target changes nothing shown.
    flipped = PHISH.model_copy(update={"target": {**PHISH.target, "label": "Legitimate", "planted": []}})
    assert CHECKED.prompt(flipped) == CHECKED.prompt(PHISH)


def test_the_signals_shown_are_everything_the_heuristic_counts() -> None:
    """The heuristic's log-odds is the prior plus the weights of the signals the checked prompt names, on every
    public test and ood email, so the line carries all it reads and nothing it does not."""
    for split in ("test", "ood"):
        for it in CHECKED.dataset(split).items:
            ctx = CHECKED.context(it)
            signals = heuristic_signals(ctx)
            assert len(set(signals)) == len(signals)
            assert math.isclose(heuristic_logit(ctx), math.fsum([HEURISTIC_PRIOR, *map(SIGNAL_WEIGHTS.get, signals)]),
                                abs_tol=1e-12), it.id
