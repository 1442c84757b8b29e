"""The item contract of E1 ``network-logs``: what ``item.input`` and ``item.target`` hold, as pydantic models.

Every path that brings items in (the committed public splits, ``sv data build``, ``sv eval --data``,
``sv data import``, the loaders) validates against these models before anything runs, so that the prompt
and the scorer can index the item without checking it. The same models give ``sv envs --json`` its JSON
Schemas, for users who write their own items.

Strict where the prompt, the features or the scorer rely on a key (every conn field is present, numbers are
numbers, the family is one of :data:`families.FAMILIES` and agrees with the label); permissive only where
real captures legitimately vary: a conn record may carry more of Zeek's fields (``uid``, ``missed_bytes``...),
which are ignored, and the fields a capture lacks are ``null`` (listed in ``capture.unrecorded``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from security_verifiers.envs.kits.abstaining import Labels
from security_verifiers.envs.network_logs.families import FAMILIES

#: E1's names for the kit's actions and probability (here, with the items and the answer, so that the modules that
#: read answers need not import the environment).
LABELS = Labels(positive="Malicious", negative="Benign", probability="p_malicious")

#: The conn fields a capture may lack (:data:`capture.FIELDS`, as a type).
ConnField = Literal["ts", "id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "proto", "service", "duration",
                    "orig_bytes", "resp_bytes", "conn_state", "history", "orig_pkts", "resp_pkts"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ConnRecord(BaseModel):
    """One connection, as a Zeek ``conn.log`` row: the fields of :data:`capture.FIELDS`, every one present.

    ``null`` marks a value Zeek leaves unset (``-``) or the capture does not record. Further Zeek fields are
    allowed and ignored."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    ts: float | None = Field(description="Start time, seconds since the epoch; null if the capture has no clock.")
    id_orig_h: str = Field(alias="id.orig_h", min_length=1, description="Originating host (\"unknown\" if "
                           "unrecorded).")
    id_orig_p: int = Field(alias="id.orig_p", ge=0, le=65535, description="Originating port (0 if unrecorded).")
    id_resp_h: str = Field(alias="id.resp_h", min_length=1, description="Responding host.")
    id_resp_p: int = Field(alias="id.resp_p", ge=0, le=65535, description="Responding port.")
    proto: Literal["tcp", "udp", "icmp"]
    service: str | None = Field(description="Zeek's service guess (dns, http, ssl...), or null.")
    duration: float | None = Field(ge=0, description="Seconds, or null when unset.")
    orig_bytes: int | None = Field(ge=0)
    resp_bytes: int | None = Field(ge=0)
    conn_state: str = Field(min_length=1, description="Zeek's conn_state (SF, S0, REJ, RSTO...).")
    history: str = Field(description="Zeek's history letters; empty if unrecorded.")
    orig_pkts: int = Field(ge=0)
    resp_pkts: int = Field(ge=0)


class Host(_Strict):
    ip: str = Field(min_length=1, description="The host whose connection is classified.")
    role: str = Field(min_length=1, description="Its device role (iot_camera, workstation...; \"unknown\").")


class Capture(_Strict):
    """What the capture records (see :mod:`capture`): its timestamp resolution and the fields it lacks."""

    ts_resolution: float | None = Field(gt=0, description="Seconds (1e-06 for Zeek); null: no timestamps.")
    unrecorded: list[ConnField] = Field(description="Conn fields the capture lacks (shown as -).")


class Presentation(_Strict):
    """How the prompt spells the connections (see :mod:`presentation`); absent: Zeek's conn.log layout."""

    field_order: list[ConnField] = Field(description="The columns' order, a permutation of the conn fields.")
    ts_format: Literal["epoch", "iso8601"] = Field(description="Seconds since the epoch, or ISO 8601 in UTC.")
    duration_unit: Literal["s", "ms"] = Field(description="Durations in seconds, or in milliseconds.")

    @model_validator(mode="after")
    def _a_permutation(self) -> Presentation:
        if sorted(self.field_order) != sorted(ConnField.__args__):  # type: ignore[attr-defined]
            raise ValueError("field_order must name every conn field exactly once")
        return self


class NetworkLogsInput(_Strict):
    """``item.input``: the connection to classify, its host, the host's preceding connections and the capture."""

    host: Host
    flow: ConnRecord
    window: list[ConnRecord] = Field(description="The host's preceding connections, oldest first.")
    capture: Capture
    presentation: Presentation | None = Field(None, description="How the prompt writes the connections; absent: "
                                              "Zeek's own layout (the robust split's rewrites set it).")


class NetworkLogsTarget(_Strict):
    """``item.target``: the label, the family of :data:`families.FAMILIES`, and the probability of maliciousness."""

    label: Literal["Malicious", "Benign"]
    family: str = Field(description="A family of the one taxonomy (envs/network_logs/families.py).")
    p_malicious: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _family_of_label(self) -> NetworkLogsTarget:
        known = FAMILIES.get(self.family)
        if known is None:
            raise ValueError(f"unknown family {self.family!r} (not in envs/network_logs/families.py)")
        if known[0] != self.label:
            raise ValueError(f"family {self.family!r} is {known[0]}, but the label is {self.label}")
        return self
