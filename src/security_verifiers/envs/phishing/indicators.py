"""The fixed taxonomy of evidence indicators, each with what a quote under it must show.

Two kinds. A *structural* indicator is confirmed by code from the message itself (its headers, links and
attachments), on any email, generated or imported. A *language* indicator (a request for credentials, pressure of
time...) is a reading of the text that no code can confirm reliably, so it is confirmed only against the spans the
generator planted in the text; on imported mail it is not scored at all (neither for nor against).
"""

from __future__ import annotations

from typing import Literal

IndicatorKind = Literal["structural", "language"]

#: id -> (kind, what a quote under it must show). The order is the order of the system prompt.
INDICATORS: dict[str, tuple[IndicatorKind, str]] = {
    "lookalike_domain": ("structural", "a sender, reply or link domain that imitates the domain of an organisation "
                         "the email names or is addressed to (typo, swapped or added letters, homoglyphs, punycode, "
                         "the brand inside another domain)"),
    "display_name_spoof": ("structural", "a From display name that claims an identity (an organisation, a role of "
                           "authority, an email address, a colleague) that the sending address does not belong to"),
    "reply_to_mismatch": ("structural", "a Reply-To address whose domain differs from the From address's domain "
                          "(a mailing list's own address, in List-Id or To, is no mismatch)"),
    "auth_failure": ("structural", "a failing SPF, DKIM or DMARC result in Authentication-Results or Received-SPF"),
    "link_text_mismatch": ("structural", "a link whose visible text shows one web address or domain while it "
                           "points to another domain"),
    "ip_or_shortener_url": ("structural", "a link to a bare IP address or through a URL shortener"),
    "free_hosting_credential_page": ("structural", "a link to a page on free hosting, a site builder or a form "
                                     "service, offered as a sign-in or verification page"),
    "oauth_consent_lure": ("structural", "a link that asks to grant an application access (an OAuth authorize URL "
                           "requesting scopes)"),
    "risky_attachment": ("structural", "an attachment of a type that runs code or opens a local web page (HTML, "
                         "script, executable, macro document, disk image, shortcut, double extension)"),
    "credential_form": ("structural", "an HTML form in the body or in an attached page that asks for a password, a "
                        "PIN, a one-time code or card details"),
    "credential_request": ("language", "a request to sign in, verify an account, or give a password or code"),
    "payment_change_request": ("language", "a request to pay, wire money or change bank or payroll details"),
    "gift_card_request": ("language", "a request to buy gift cards or send their codes"),
    "urgency_pressure": ("language", "pressure of time, secrecy or consequences (act now, account closed today)"),
    "qr_code_lure": ("language", "a request to scan a QR code to sign in, verify or pay"),
}

STRUCTURAL = frozenset(k for k, (kind, _) in INDICATORS.items() if kind == "structural")
LANGUAGE = frozenset(k for k, (kind, _) in INDICATORS.items() if kind == "language")
IndicatorId = Literal[
    "lookalike_domain", "display_name_spoof", "reply_to_mismatch", "auth_failure", "link_text_mismatch",
    "ip_or_shortener_url", "free_hosting_credential_page", "oauth_consent_lure", "risky_attachment",
    "credential_form", "credential_request", "payment_change_request", "gift_card_request", "urgency_pressure",
    "qr_code_lure",
]
#: At most this many pieces of evidence in one answer.
MAX_EVIDENCE = 5
