"""Each indicator's verifier: a quote that shows it is confirmed, and near misses are not (another segment, a
cut-off domain, the genuine domain, a passing result...). Also what every quote must be: inside one segment."""

from __future__ import annotations

import pytest

from security_verifiers.envs.phishing.indicators import INDICATORS, LANGUAGE, STRUCTURAL
from security_verifiers.envs.phishing.verifiers import STRUCTURAL_VERIFIERS, confirm, detect
from tests.envs.phishing.mail import context, message, planted

LOOKALIKE = message("Please review the attached statement.", From="Northwind Billing <billing@northwind-1ogistics.com>",
                    Reply_To="billing@northwind-1ogistics.com")
GENUINE = message("Please review the attached statement.", From="Northwind Billing <billing@northwind-logistics.com>")

# (indicator, message, quote that confirms it, quotes that must not)
CASES = [
    ("lookalike_domain", LOOKALIKE, "northwind-1ogistics.com",
     ["northwind-1ogistics.co", "ogistics.com", "Please review the attached statement."]),
    ("lookalike_domain", message(html='<a href="https://rnicrosoft.com/x">Open in Microsoft 365</a>'),
     "https://rnicrosoft.com/x", ["Open in Microsoft 365"]),
    ("lookalike_domain", message(html='<a href="https://xn--pypal-4ve.com/signin">PayPal</a>'),
     "xn--pypal-4ve.com", ["PayPal"]),
    ("lookalike_domain", message("See https://contoso-foods.com.account-check.net/login now."),
     "contoso-foods.com.account-check.net", ["See"]),
    ("display_name_spoof", message(From="Dana Whitfield <dana.whitfield.office@gmail.com>"),
     "Dana Whitfield", ["gmail.com", "Note"]),
    ("display_name_spoof", message(From='"IT Helpdesk" <it.helpdesk.contoso@outlook.com>'), "IT Helpdesk", []),
    ("display_name_spoof", message(From='"security@paypal.com" <alerts@pp-notice.ru>'), "security@paypal.com", []),
    ("reply_to_mismatch", message(From="Ops <ops@northwind-logistics.com>", Reply_To="ops.desk@protonmail.com"),
     "ops.desk@protonmail.com", ["ops@northwind-logistics.com"]),
    ("auth_failure", message(Authentication_Results="mx.contoso-foods.com; spf=softfail smtp.mailfrom=x.net; "
                             "dkim=none; dmarc=fail (p=quarantine) header.from=x.net"),
     "dmarc=fail", ["dkim=none", "spf=soft"]),
    ("auth_failure", message(Received_SPF="fail (mx.contoso-foods.com: domain of x.net does not designate "
                             "198.51.100.7 as permitted sender)"), "Received-SPF: fail", ["does not designate"]),
    ("link_text_mismatch", message(html='<a href="https://click.evil-track.net/r?u=1">https://www.contoso-foods.com/'
                                   'benefits</a>'), "click.evil-track.net", ["https"]),
    ("ip_or_shortener_url", message("Track it at http://198.51.100.23/track?id=7 today."), "198.51.100.23",
     ["198.51.100.2", "Track it"]),
    ("ip_or_shortener_url", message("Track it at https://bit.ly/3kQx9 today."), "https://bit.ly/3kQx9", ["bit.l"]),
    ("free_hosting_credential_page", message(html='<a href="https://contoso-hr.web.app/login.html">Sign in to view'
                                             '</a>'), "contoso-hr.web.app", ["Sign in to view"]),
    ("oauth_consent_lure", message(html='<a href="https://login.microsoftonline.com/common/oauth2/v2.0/authorize?'
                                   'client_id=5f1c&scope=Mail.Read%20offline_access&response_type=code">Open the '
                                   'shared file</a>'), "login.microsoftonline.com", ["Open the shared file"]),
    ("risky_attachment", message(attachments=(("Remittance_Advice.htm", "text/html", b"<form></form>"),)),
     "Remittance_Advice.htm", ["Remittance_Advice"]),
    ("risky_attachment", message(attachments=(("invoice.pdf.exe", "application/octet-stream", b"MZ"),)),
     "invoice.pdf.exe", []),
    ("credential_form", message(html='<form action="https://collect.example-login.top/p.php"><input type="email" '
                                'name="u"><input type="password" name="pw"></form>'),
     "collect.example-login.top", ["form", "email"]),
    ("credential_form", message(html='<form><label>Card</label><input name="card_number"><input name="cvv"></form>'),
     "card_number", ["sends to"]),
]


@pytest.mark.parametrize(("indicator", "raw", "good", "bad"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_structural_indicator_is_confirmed_only_where_it_shows(indicator: str, raw: bytes, good: str,
                                                                 bad: list[str]) -> None:
    ctx = context(raw)
    assert confirm(indicator, good, ctx), ctx.rendering.text
    for quote in bad:
        assert not confirm(indicator, quote, ctx), quote
    assert (indicator, good) in detect(ctx) or any(i == indicator for i, _ in detect(ctx))


REJECTED = [
    ("lookalike_domain", GENUINE, "northwind-logistics.com"),  # the genuine partner
    ("lookalike_domain", message(From="Ops <ops@mail.contoso-foods.com>"), "mail.contoso-foods.com"),  # own sub-domain
    ("lookalike_domain", message(html='<a href="https://contoso-foods.sharepoint.com/x">Shared file</a>'),
     "contoso-foods.sharepoint.com"),  # a tenant, not an imitation
    ("display_name_spoof", message(From="Dana Whitfield <dana.whitfield@contoso-foods.com>"), "Dana Whitfield"),
    ("display_name_spoof", message(From="Northwind Billing <billing@northwind-logistics.com>"), "Northwind Billing"),
    ("display_name_spoof", message(From="Jo Bloggs <jo.bloggs@gmail.com>"), "Jo Bloggs"),  # a stranger on free mail
    ("reply_to_mismatch", message(From="Ops <ops@northwind-logistics.com>", Reply_To="ap@northwind-logistics.com"),
     "ap@northwind-logistics.com"),
    ("auth_failure", message(Authentication_Results="mx.contoso-foods.com; spf=pass; dkim=pass; dmarc=pass"),
     "spf=pass"),
    ("auth_failure", message("The check said dmarc=fail yesterday."), "dmarc=fail"),  # not in the header
    ("link_text_mismatch", message(html='<a href="https://www.contoso-foods.com/benefits">https://contoso-foods.com/'
                                   'benefits</a>'), "www.contoso-foods.com"),
    ("link_text_mismatch", message(html='<a href="https://click.evil-track.net/r?u=1">Read more</a>'),
     "click.evil-track.net"),  # text that shows no address cannot mismatch one
    ("ip_or_shortener_url", message("Visit https://www.contoso-foods.com/track soon."), "www.contoso-foods.com"),
    ("free_hosting_credential_page", message(html='<a href="https://contoso-blog.github.io/2024/recipes">Recipes</a>'),
     "contoso-blog.github.io"),  # free hosting, but no sign-in page
    ("free_hosting_credential_page", message(html='<a href="https://www.contoso-foods.com/login">Sign in</a>'),
     "www.contoso-foods.com"),
    ("oauth_consent_lure", message(html='<a href="https://login.microsoftonline.com/common/login">Sign in</a>'),
     "login.microsoftonline.com"),
    ("risky_attachment", message(attachments=(("statement.pdf", "application/pdf", b"%PDF"),)), "statement.pdf"),
    ("credential_form", message(html='<form action="https://www.contoso-foods.com/search"><input name="q"></form>'),
     "www.contoso-foods.com"),  # a form that asks for no secret
]


@pytest.mark.parametrize(("indicator", "raw", "quote"), REJECTED, ids=[f"{c[0]}-{i}" for i, c in enumerate(REJECTED)])
def test_a_structural_indicator_is_rejected_where_it_does_not_show(indicator: str, raw: bytes, quote: str) -> None:
    ctx = context(raw)
    assert ctx.rendering.locate(quote), f"the quote must be in the email for this case to mean anything: {quote}"
    assert not confirm(indicator, quote, ctx)
    assert indicator not in {i for i, _ in detect(ctx)}


def test_every_indicator_has_a_case() -> None:
    assert {c[0] for c in CASES} == STRUCTURAL == set(STRUCTURAL_VERIFIERS)
    assert {c[0] for c in REJECTED} == STRUCTURAL
    assert LANGUAGE | STRUCTURAL == set(INDICATORS)


SPAN = "Wire the funds before 3 pm today and keep this between us"
URGENT = message(f"Hi,\nI need a favour. {SPAN}. Thanks.")


@pytest.mark.parametrize("indicator", sorted(LANGUAGE))
def test_a_language_indicator_is_confirmed_only_against_its_planted_span(indicator: str) -> None:
    ctx = context(URGENT, planted=(planted(indicator, SPAN),))
    assert confirm(indicator, SPAN, ctx)
    assert confirm(indicator, SPAN + ".", ctx), "a quote holding the whole span"
    assert confirm(indicator, "Wire the funds before 3 pm today and keep", ctx), "most of the span"
    assert not confirm(indicator, "Wire the funds", ctx), "less than half of it"
    assert not confirm(indicator, "I need a favour.", ctx), "another sentence"
    other = next(i for i in sorted(LANGUAGE) if i != indicator)
    assert not confirm(other, SPAN, ctx), "another language indicator's name"
    assert not confirm(indicator, SPAN, context(URGENT)), "nothing planted: nothing confirmed"


def test_a_quote_must_lie_inside_one_segment() -> None:
    ctx = context(URGENT, planted=(planted("urgency_pressure", SPAN),))
    assert not confirm("urgency_pressure", f"I need a favour. {SPAN}", ctx), "two sentences"
    assert not confirm("urgency_pressure", ctx.rendering.text, ctx), "the whole email"
    assert confirm("urgency_pressure", "  Wire the funds before 3 pm today\n and keep this between us ", ctx), \
        "whitespace is collapsed"
    assert not confirm("urgency_pressure", "wire the funds before 3 pm today and keep this between us", ctx), \
        "otherwise exact"
    assert not confirm("no_such_indicator", SPAN, ctx)


def test_header_quotes_may_include_the_header_name() -> None:
    ctx = context(LOOKALIKE)
    assert confirm("reply_to_mismatch", "Reply-To: billing@northwind-1ogistics.com", ctx) is False, \
        "same domain as From: no mismatch"
    assert confirm("lookalike_domain", "Reply-To: billing@northwind-1ogistics.com", ctx)
    assert not confirm("lookalike_domain", "Reply-To: billing@northwind-1ogistics.com\nSubject: Note", ctx)


def test_without_a_mailbox_the_addressee_and_the_brands_named_are_the_references() -> None:
    raw = message("Your DocuSign envelope is waiting.", From="DocuSign <dse@docusign-mail.net>",
                  To="kim@fabrikam.example.com")
    ctx = context(raw, mailbox=None)
    assert confirm("lookalike_domain", "docusign-mail.net", ctx)
    assert confirm("display_name_spoof", "DocuSign", ctx)
    raw = message("Fabrikam payroll update.", From="Payroll <payroll@fabrlkam.com>", To="kim@fabrikam.com")
    assert confirm("lookalike_domain", "fabrlkam.com", context(raw, mailbox=None))
