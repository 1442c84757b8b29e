"""What the Terraform base builders of every cloud share: the base record, the build context, block helpers.

A base is a list of :mod:`hcl_tree` blocks; the cloud modules (``templates_tf_aws`` / ``_gcp`` / ``_azure``) add
resources to it through a :class:`Ctx` that draws names, tags and regions from the item's seeded
``random.Random`` and declares each ``variable`` once (every reference to ``var.x`` has its ``variable`` block
in the same file, or Terraform would reject the file as referring to an undeclared variable).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

from security_verifiers.envs.config_audit.generation.hcl_tree import Block, Raw, render_hcl

COMPANIES = ("acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell", "cyberdyne", "aperture")
ENVS = ("prod", "staging", "shared", "dev")
AWS_REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2")
GCP_REGIONS = ("us-central1", "europe-west1", "europe-west4", "asia-northeast1")
AZ_LOCATIONS = ("westeurope", "northeurope", "eastus2", "uksouth")
PURPOSES = ("data", "uploads", "reports", "artifacts", "exports", "media", "backups", "datalake")
ADMIN_RANGES = ("10.0.0.0/8", "10.20.0.0/16", "172.16.0.0/12", "192.168.10.0/24", "203.0.113.0/24")
#: Private ranges a workload network or a management network is drawn from.
PRIVATE_RANGES = ("10.0.0.0/8", "10.20.0.0/16", "172.16.0.0/12", "192.168.10.0/24")


@dataclass
class TFBase:
    """A secure Terraform file under construction or mutation; operators edit ``blocks`` in place."""

    template: str
    cloud: str
    blocks: list[Block]
    platform: str = "terraform"
    notes: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        return render_hcl(self.blocks)

    def copy(self) -> TFBase:
        return TFBase(self.template, self.cloud, copy.deepcopy(self.blocks), self.platform, dict(self.notes))

    def resources(self, *types: str) -> list[Block]:
        return [b for b in self.blocks if b.type == "resource" and (not types or b.rtype in types)]

    def data(self, *types: str) -> list[Block]:
        return [b for b in self.blocks if b.type == "data" and (not types or b.rtype in types)]

    def find(self, address: str) -> Block:
        for b in self.blocks:
            if b.type in ("resource", "data") and b.address == address:
                return b
        raise KeyError(address)

    def referencing(self, rtype: str, target: str) -> list[Block]:
        """Resources of ``rtype`` whose ``bucket``-like attribute references ``target`` (an address)."""
        out = []
        for b in self.resources(rtype):
            for _, value in (e for e in b.body if isinstance(e, tuple)):
                if getattr(value, "text", "").startswith(target + "."):
                    out.append(b)
                    break
        return out


@dataclass
class Ctx:
    """The build context of one base: its seeded stream, naming, and the variables declared so far."""

    rng: random.Random
    company: str
    env: str
    region: str
    variables: dict[str, Block] = field(default_factory=dict)
    #: Data sources the file reads (``aws_caller_identity`` ...), declared once at the top.
    sources: dict[str, Block] = field(default_factory=dict)

    def name(self, *parts: str) -> str:
        return "-".join((self.company, self.env, *parts))

    def tags(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"environment": self.env, "owner": self.rng.choice(("platform", "data", "security", "web")),
                "managed_by": "terraform", **(extra or {})}

    def variable(self, name: str, description: str, sensitive: bool = False, default: Any = None,
                 type_: str = "string") -> Raw:
        """A reference to ``var.name``; the ``variable`` block is declared once at the top of the file."""
        body: list[Any] = [("description", description), ("type", ref(type_))]
        if default is not None:
            body.append(("default", default))
        if sensitive:
            body.append(("sensitive", True))
        self.variables.setdefault(name, Block("variable", (name,), body))
        return ref(f"var.{name}")

    def source(self, rtype: str, name: str = "current", body: list[Any] | None = None) -> str:
        """The address of data source ``rtype.name`` (declared once); append ``.attr`` to read it."""
        self.sources.setdefault(f"{rtype}.{name}", data(rtype, name, body or []))
        return f"data.{rtype}.{name}"


def ref(text: str) -> Raw:
    return Raw(text)


def resource(rtype: str, name: str, body: list[Any]) -> Block:
    return Block("resource", (rtype, name), body)


def data(rtype: str, name: str, body: list[Any]) -> Block:
    return Block("data", (rtype, name), body)


def suffix(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))


def dashed(name: str) -> str:
    return name.replace("_", "-")
