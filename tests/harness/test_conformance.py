"""Every registered environment meets the shared contract (see harness/conformance.py)."""

import pytest

from security_verifiers.envs.base import registry
from security_verifiers.harness.conformance import CHECKS

CASES = [(env, check) for env in sorted(registry()) for check in CHECKS]


# The environment-wide checks play every baseline over whole public splits; E3's run every patch in the sandbox
# (about 4 minutes for one check on 2 cores, more beside other tests), past the suite's 5-minute default.
@pytest.mark.timeout(1500)
@pytest.mark.parametrize(("env_name", "check"), CASES)
def test_environment_conformance(env_name: str, check: str) -> None:
    env = registry()[env_name]()
    if (check,) in env.conformance_exceptions:
        pytest.skip(env.conformance_exceptions[(check,)])
    CHECKS[check](env)


# -- the checks themselves fail on a broken environment ---------------------------------------------------------
# Each case breaks one promise of E1 in a subclass (not registered) and expects exactly that check to catch it.
from typing import Any  # noqa: E402

from security_verifiers.envs.kits.abstaining import ReferenceBaseline  # noqa: E402
from security_verifiers.envs.kits.public_sets import PublicSets  # noqa: E402
from security_verifiers.envs.network_logs.env import LABELS, NetworkLogs  # noqa: E402
from security_verifiers.harness.conformance import (  # noqa: E402
    check_baselines_never_read_the_target,
    check_headline_metrics_are_reported,
    check_outcomes_round_trip_through_their_model,
    check_public_sets_are_what_the_builder_declares,
    check_score_many_equals_score,
)


class _Peeking(NetworkLogs):
    """An extra baseline that answers from the target."""

    def baselines(self) -> dict[str, Any]:
        return {**super().baselines(), "peek": lambda: ReferenceBaseline(LABELS)}


class _BatchDrifts(NetworkLogs):
    """``score_many`` that rounds rewards, unlike ``score``."""

    def score_many(self, items, transcripts):  # noqa: ANN001, ANN201
        return [s.model_copy(update={"reward": round(s.reward, 2)}) for s in super().score_many(items, transcripts)]


class _ZeroInterval(NetworkLogs):
    """An undefined metric reported with a ``[0, 0]`` interval (the shape of E2's claim-nothing F1)."""

    def metrics(self, outcomes, items=None):  # noqa: ANN001, ANN201
        result = super().metrics(outcomes, items)
        result["metrics"]["f1"], result["intervals"]["f1"] = None, [0.0, 0.0]
        return result


class _OutcomeDrifts(NetworkLogs):
    """A scorer that stores a key its outcome model does not declare."""

    def score(self, item, transcript):  # noqa: ANN001, ANN201
        score = super().score(item, transcript)
        return score.model_copy(update={"outcome": {**score.outcome, "note": "extra"}})


class _BuilderDrifted(NetworkLogs):
    """A builder that declares a bigger test split than the committed one (a rebuild left uncommitted)."""

    def public_sets(self) -> PublicSets:
        spec = super().public_sets()
        return PublicSets(sizes={**spec.sizes, "test": 250}, generator_version=spec.generator_version, card=spec.card)


@pytest.mark.parametrize(("broken", "check", "message"), [
    (_Peeking, check_baselines_never_read_the_target, "peek"),
    (_BatchDrifts, check_score_many_equals_score, "nl-"),
    (_ZeroInterval, check_headline_metrics_are_reported, "interval"),
    (_BuilderDrifted, check_public_sets_are_what_the_builder_declares, "the builder declares 250 items"),
    (_OutcomeDrifts, check_outcomes_round_trip_through_their_model, "does not read as a ClassifierOutcome"),
])
def test_a_broken_environment_fails_its_check(broken: type, check: Any, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check(broken())
