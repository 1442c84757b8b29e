"""resolve_policy: ``baseline:<name>`` picks the environment's baseline, anything else a model endpoint."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.base import Environment, get_env
from security_verifiers.harness.policies import resolve_policy
from security_verifiers.models.base import Baseline, Endpoint, Policy, Sampling
from security_verifiers.models.openai_compat import OpenAIChatPolicy


class Yes(Baseline):
    name = "yes"

    def answer(self, item: Item, messages: list[Message]) -> str:
        return "yes"


@pytest.fixture
def env() -> Environment:
    return get_env("network-logs")


@pytest.fixture
def env_with_stub_baselines(env: Environment, monkeypatch: pytest.MonkeyPatch) -> Environment:
    """The real environment with its baselines replaced, so these tests do not depend on that module."""
    monkeypatch.setattr(env, "baselines", lambda: {"yes": Yes, "other": Yes})
    return env


def test_baseline_prefix_resolves_the_factory(env_with_stub_baselines: Environment) -> None:
    policy = resolve_policy("baseline:yes", env_with_stub_baselines)
    assert isinstance(policy, Yes)


@pytest.mark.parametrize("model", ["baseline:nope", "baseline:"])
def test_unknown_baseline_lists_the_known_ones(env_with_stub_baselines: Environment, model: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_policy(model, env_with_stub_baselines)
    message = str(err.value)
    assert "network-logs" in message and "other, yes" in message


def test_other_names_are_openai_compatible_models(env: Environment, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SV_TEST_KEY", "sk-test")
    sampling = Sampling(temperature=0.5, max_tokens=10)
    policy = resolve_policy(
        "gpt-4o-mini",
        env,
        endpoint=Endpoint(base_url="https://api.example.com/v1", api_key_env="SV_TEST_KEY", max_retries=1),
        sampling=sampling,
        timeout_s=7.0,
    )
    assert isinstance(policy, OpenAIChatPolicy) and isinstance(policy, Policy)
    assert policy.name == "gpt-4o-mini"
    assert policy.describe()["base_url"] == "https://api.example.com/v1"
    assert (policy.sampling, policy.timeout_s, policy.max_retries) == (sampling, 7.0, 1)


def test_model_without_key_is_a_config_error(env: Environment, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SV_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="SV_TEST_KEY"):
        resolve_policy("gpt-4o-mini", env,
                       endpoint=Endpoint(base_url="https://api.example.com/v1", api_key_env="SV_TEST_KEY"))


def test_network_logs_baselines_resolve(env: Environment) -> None:
    baselines = pytest.importorskip("security_verifiers.envs.kits.abstaining")  # E1 takes its reference from the kit
    policy = resolve_policy("baseline:reference", env)
    assert isinstance(policy, baselines.ReferenceBaseline) and isinstance(policy, Policy)
    with pytest.raises(ConfigError, match="reference"):
        resolve_policy("baseline:nope", env)


@pytest.mark.parametrize("bad", [{"max_retries": -1}, {"max_retries": 1000}, {"api_key_env": "sk-abc def"},
                                 {"api_key_env": ""}, {"base_url": ""}])
def test_endpoint_rejects_what_no_endpoint_can_use(bad: dict[str, object]) -> None:
    """A negative retry count reached the client's assertion; a key pasted in place of a variable name must stop."""
    with pytest.raises(ValidationError):
        Endpoint.model_validate(bad)
