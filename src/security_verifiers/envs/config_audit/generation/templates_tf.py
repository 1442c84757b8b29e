"""Secure Terraform base files for E2 (AWS, GCP, Azure), built as :mod:`hcl_tree` trees.

Each cloud module (:mod:`templates_tf_aws`, :mod:`templates_tf_gcp`, :mod:`templates_tf_azure`) holds small
hardened components and the scenarios that compose a few of them into one realistic file; this module
registers the scenarios and writes each file: the ``terraform``/``provider`` header, the ``variable`` blocks
and data sources the resources refer to, then the resources. Secrets are always read from variables marked
``sensitive`` or from files, never written as literals, so every base is clean under all engines of the oracle
and is the item's ``fixed`` answer.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial

from security_verifiers.envs.config_audit.generation.hcl_tree import Block, heredoc
from security_verifiers.envs.config_audit.generation.templates_tf_aws import SCENARIOS as AWS_SCENARIOS
from security_verifiers.envs.config_audit.generation.templates_tf_aws import aws_header
from security_verifiers.envs.config_audit.generation.templates_tf_azure import SCENARIOS as AZURE_SCENARIOS
from security_verifiers.envs.config_audit.generation.templates_tf_azure import azure_header
from security_verifiers.envs.config_audit.generation.templates_tf_gcp import SCENARIOS as GCP_SCENARIOS
from security_verifiers.envs.config_audit.generation.templates_tf_gcp import gcp_header
from security_verifiers.envs.config_audit.generation.templates_tf_kit import (
    AWS_REGIONS,
    AZ_LOCATIONS,
    COMPANIES,
    ENVS,
    GCP_REGIONS,
    Ctx,
    TFBase,
)

_HEADERS = {"aws": aws_header, "gcp": gcp_header, "azure": azure_header}
_REGIONS = {"aws": AWS_REGIONS, "gcp": GCP_REGIONS, "azure": AZ_LOCATIONS}
_SCENARIOS: dict[str, tuple[str, Callable[[Ctx], list[Block]]]] = {
    **{name: ("aws", body) for name, body in AWS_SCENARIOS.items()},
    **{name: ("gcp", body) for name, body in GCP_SCENARIOS.items()},
    **{name: ("azure", body) for name, body in AZURE_SCENARIOS.items()},
}


def build(template: str, rng: random.Random) -> TFBase:
    """One secure file of scenario ``template``: header, variables, data sources, then the resources."""
    cloud, body = _SCENARIOS[template]
    c = Ctx(rng, rng.choice(COMPANIES), rng.choice(ENVS), rng.choice(_REGIONS[cloud]))
    header = _HEADERS[cloud](c)
    resources = body(c)
    variables = [c.variables[k] for k in sorted(c.variables)]
    sources = [c.sources[k] for k in sorted(c.sources)]
    return TFBase(template, cloud, header + variables + sources + resources)


TF_TEMPLATES: dict[str, Callable[[random.Random], TFBase]] = {name: partial(build, name) for name in _SCENARIOS}
TF_CLOUDS: dict[str, str] = {name: cloud for name, (cloud, _) in _SCENARIOS.items()}

__all__ = ["TFBase", "TF_TEMPLATES", "TF_CLOUDS", "heredoc"]
