"""The item contract of E4 ``phishing``: what ``item.input`` and ``item.target`` hold.

The input is the raw RFC 5322 message, exactly as it arrived (``raw``: its text, or its bytes in base64 when they
are not UTF-8), and what the recipient's mail system knows of its own organisation (``mailbox``). The target is
the label, the family, and the evidence the generator planted: each indicator with one quote that confirms it.
Imported mail has no planted evidence (``source="imported"``): its structural indicators are found by code when it
is scored, and its language indicators are not scored.
"""

from __future__ import annotations

import base64
import binascii
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from security_verifiers.envs.kits.abstaining import Labels
from security_verifiers.envs.phishing.indicators import IndicatorId

#: E4's names for the kit's actions and probability (here, with the items and the answer, so that the modules that
#: read answers need not import the environment).
LABELS = Labels(positive="Phishing", negative="Legitimate", probability="p_phishing")

#: The largest raw message an item may hold (10 MiB of text): a real message with attachments fits.
MAX_RAW_CHARS = 10 * 1024 * 1024


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Partner(_Strict):
    """An organisation the recipient's organisation deals with (a supplier, a bank, a payroll provider)."""

    name: str = Field(min_length=1, max_length=200)
    domains: list[str] = Field(min_length=1, max_length=20)


class Mailbox(_Strict):
    """What the recipient's mail system knows of its own organisation (shown in the prompt): its name and mail
    domains, the staff whose names impostors use (executives, finance, IT), and its partners' domains."""

    organisation: str = Field(min_length=1, max_length=200)
    domains: list[str] = Field(min_length=1, max_length=20, description="The organisation's own mail domains.")
    people: list[str] = Field(default_factory=list, max_length=50)
    partners: list[Partner] = Field(default_factory=list, max_length=50)


class PhishingInput(_Strict):
    """``item.input``: the message and the recipient's organisation (``null`` when unknown, as for imported mail)."""

    raw: str = Field(min_length=1, max_length=MAX_RAW_CHARS)
    raw_encoding: Literal["text", "base64"] = Field("text", description="base64: the message's bytes are not UTF-8.")
    mailbox: Mailbox | None = None

    @model_validator(mode="after")
    def _decodable(self) -> PhishingInput:
        if self.raw_encoding == "base64":
            try:
                base64.b64decode(self.raw, validate=True)
            except (binascii.Error, ValueError) as err:
                raise ValueError(f"raw is not base64: {err}") from err
        return self

    def message_bytes(self) -> bytes:
        """The message as it arrived."""
        return base64.b64decode(self.raw) if self.raw_encoding == "base64" else self.raw.encode("utf-8")


class Planted(_Strict):
    """One indicator the generator put in the message, with a quote that confirms it."""

    indicator: IndicatorId
    quote: str = Field(min_length=1, max_length=300)


class PhishingTarget(_Strict):
    """``item.target``: the label, the family (a generator family, or ``imported``), and the planted evidence."""

    label: Literal["Phishing", "Legitimate"]
    family: str = Field(min_length=1, max_length=80)
    source: Literal["generated", "imported"] = "generated"
    planted: list[Planted] = Field(default_factory=list)

    @model_validator(mode="after")
    def _planted_only_when_generated(self) -> PhishingTarget:
        if self.source == "imported" and self.planted:
            raise ValueError("imported mail has no planted evidence (its structural indicators are found when scored)")
        if self.source == "generated" and self.label == "Phishing" and not self.planted:
            raise ValueError("a generated phishing item plants at least one indicator")
        return self
