"""Security Verifiers: security RL environments whose rewards come from executable checks.

The public API, importable from the package itself (``from security_verifiers import get_env, run_eval``); each
name is loaded on first use, so ``import security_verifiers`` (and the ``sv`` command) stays fast. Anything not
listed here is internal and may change between versions.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_PUBLIC: dict[str, str] = {
    # Environments: the protocol, the registry, and the suite a new one must pass.
    "Environment": "security_verifiers.envs.base",
    "EnvConfig": "security_verifiers.envs.base",
    "ItemContract": "security_verifiers.envs.base",
    "Toolbox": "security_verifiers.envs.base",
    "register": "security_verifiers.envs.base",
    "registry": "security_verifiers.envs.base",
    "get_env": "security_verifiers.envs.base",
    "check_environment": "security_verifiers.harness.conformance",
    # What flows between the layers.
    "Item": "security_verifiers.core.types",
    "Message": "security_verifiers.core.types",
    "Transcript": "security_verifiers.core.types",
    "Completion": "security_verifiers.core.types",
    "Score": "security_verifiers.core.types",
    "RolloutRecord": "security_verifiers.core.types",
    "Dataset": "security_verifiers.core.datasets",
    "MetricsReport": "security_verifiers.core.metrics_report",
    "ConfigError": "security_verifiers.core.errors",
    "InfraError": "security_verifiers.core.errors",
    # Policies and running them.
    "Policy": "security_verifiers.models.base",
    "Sampling": "security_verifiers.models.base",
    "Endpoint": "security_verifiers.models.base",
    "resolve_policy": "security_verifiers.harness.policies",
    "RunConfig": "security_verifiers.harness.runner",
    "run_eval": "security_verifiers.harness.runner",
    "RunDir": "security_verifiers.core.rundir",
    # Reports.
    "regenerate": "security_verifiers.report",
    "compare_runs": "security_verifiers.report.compare",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'security_verifiers' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
