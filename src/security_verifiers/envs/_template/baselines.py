"""The template's own baseline: a few analyst rules that read the line and state a probability of an attack.

With the kit's baselines (``envs/kits/abstaining``: ``reference``, the ceiling, and the constants, the floor every
honest policy must clear) it brackets what a model should do. It reads only ``item.input``, never the target or
the metadata, and takes the Bayes action of the cost profile the environment is configured with (the kit's
:class:`~security_verifiers.envs.kits.abstaining.BayesBaseline` binds it).
"""

from __future__ import annotations

import re

from security_verifiers.core.types import Item
from security_verifiers.envs._template.generator import INTERNAL_PREFIX
from security_verifiers.envs.kits.abstaining import BayesBaseline

_LINE = re.compile(r"(?P<failures>\d+) failed logins for (?P<users>\d+) user names? from (?P<source>\S+) in "
                   r"(?P<seconds>\d+) s, (?P<success>then a successful login|no successful login)")


def probability(line: str) -> float:
    """The probability of an attack an analyst would state: outside sources guessing are attacks; inside, a few
    misses before a login are a typo, and an account failing for a long time is a stale script more often than
    an intruder (3 in 10 times, the rate of the template's world). A line it cannot read gets one half.

    >>> probability("sshd on web-01: 3 failed logins for 1 user name from 10.0.0.5 in 9 s, then a successful login")
    0.0
    """
    match = _LINE.search(line)
    if match is None:
        return 0.5
    if not match["source"].startswith(INTERNAL_PREFIX):
        return 1.0
    if match["success"].startswith("then") and int(match["failures"]) <= 5:
        return 0.0
    return 0.3


class HeuristicBaseline(BayesBaseline):
    name = "heuristic"

    def probabilities(self, items: list[Item]) -> list[float]:
        return [probability(item.input["line"]) for item in items]
