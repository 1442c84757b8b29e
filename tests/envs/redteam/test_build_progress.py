"""The red-team generators report progress inside an open ``progress_to`` (``sv data build``), item by item."""

from __future__ import annotations

import io
import re

import pytest

from security_verifiers.core.progress import progress_to
from security_verifiers.envs.redteam.scenario.generator import attack_items, defense_items


class NotATerminal(io.StringIO):
    def isatty(self) -> bool:
        return False


@pytest.mark.parametrize(("generate", "step"), [
    (attack_items, "checking reference attacks"),  # each item's reference attack is played against its target
    (defense_items, "checking items"),  # each item is checked against its scripted agent
])
def test_each_generated_item_is_reported(generate, step: str) -> None:
    stream = NotATerminal()
    with progress_to("rt", stream=stream, interval_s=0.0):
        items = generate("test", 3, 0)
    assert len(items) == 3
    lines = [re.sub(r"after \d+s$", "after Ns", line) for line in stream.getvalue().splitlines()]
    assert lines == [f"rt: {step} {k}/3 ({k / 3:.0%}) after Ns" for k in (1, 2, 3)]
