"""Turn a ``--model`` string into a policy: an environment's baseline or an OpenAI-compatible model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from security_verifiers.core.cache import ResponseCache
from security_verifiers.core.errors import ConfigError
from security_verifiers.models.base import Endpoint, Policy, Sampling

if TYPE_CHECKING:
    from security_verifiers.envs.base import Environment

BASELINE_PREFIX = "baseline:"
HF_PREFIX = "hf:"


def resolve_policy(
    model: str,
    env: Environment,
    *,
    endpoint: Endpoint | None = None,
    sampling: Sampling | None = None,
    timeout_s: float = 120.0,
    cache: ResponseCache | None = None,
) -> Policy:
    """``baseline:<name>`` is ``env``'s built-in baseline of that name; ``hf:<path or hub name>`` a transformers
    model run in this process; anything else is a model name at an OpenAI-compatible endpoint.

    Baselines are per environment (a baseline reads that environment's items), hence ``env``.
    The endpoint (default: ``Endpoint()``) applies only to served models, but for its ``max_reply_bytes``, which
    caps a local model's replies too; ``sampling=None`` means ``Sampling()``.
    """
    if model.startswith(BASELINE_PREFIX):
        name = model.removeprefix(BASELINE_PREFIX)
        factories = env.baselines()
        if name not in factories:
            raise ConfigError(
                f"unknown baseline {name!r} for environment {env.name}; known: {', '.join(sorted(factories))}"
            )
        return factories[name]()
    if model.startswith(HF_PREFIX):
        from security_verifiers.models.hf_local import HFLocalPolicy  # torch's import costs seconds

        policy = HFLocalPolicy(model.removeprefix(HF_PREFIX), sampling=sampling)
        policy.max_reply_bytes = (endpoint or Endpoint()).max_reply_bytes  # --max-reply-bytes caps it too
        return policy
    from security_verifiers.models.openai_compat import OpenAIChatPolicy  # openai's import costs ~0.5 s

    return OpenAIChatPolicy(
        model,
        endpoint=endpoint,
        sampling=sampling,
        timeout_s=timeout_s,
        cache=cache,
    )
