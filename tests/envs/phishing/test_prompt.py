"""E4's prompt styles: the compact one is a shorter instruction over the same email, scored the same way."""

from __future__ import annotations

import json

from security_verifiers.core.types import Message, Transcript
from security_verifiers.envs.phishing.env import Phishing
from security_verifiers.envs.phishing.indicators import INDICATORS
from tests.envs.phishing.test_scorer import LEGIT, PHISH

FULL = Phishing()
COMPACT = Phishing.from_options({"prompt_style": "compact"})


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
                           for env in (FULL, COMPACT)]
            full, compact = (env.score(it, t) for env, t in zip((FULL, COMPACT), transcripts, strict=True))
            assert compact.reward == full.reward and compact.components == full.components
