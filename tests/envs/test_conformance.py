"""Every registered environment meets the shared contract (see envs/conformance.py)."""

import pytest

from security_verifiers.envs.base import registry
from security_verifiers.envs.conformance import CHECKS, KNOWN_EXCEPTIONS

CASES = [(env, check) for env in sorted(registry()) for check in CHECKS]


@pytest.mark.parametrize(("env_name", "check"), CASES)
def test_environment_conformance(env_name: str, check: str) -> None:
    if (env_name, check) in KNOWN_EXCEPTIONS:
        pytest.skip(KNOWN_EXCEPTIONS[(env_name, check)])
    CHECKS[check](registry()[env_name]())
