"""The verifiers know real lures: lures written the way public phishing collections show them (brands in display
names, squatted and look-alike domains, free hosting, shorteners, credential forms, HTML attachments, image-only
bodies) are detected, each under its indicator, and ordinary legitimate mail (mailing lists, newsletters, brand
notices, developer mail full of dotted names) raises none of them. No mailbox: imported mail has none.

Every message here was written for this test in the layouts real mail uses; none is copied from a corpus."""

from __future__ import annotations

from collections import Counter

import pytest

from security_verifiers.envs.phishing.brand_data import KNOWN_BRANDS
from security_verifiers.envs.phishing.brands import brands_in_display_name, brands_named
from security_verifiers.envs.phishing.domains import hosts_in, imitates, registrable, squatted_brand
from security_verifiers.envs.phishing.heuristic import heuristic_probability, image_only
from security_verifiers.envs.phishing.verifiers import confirm, detect
from tests.envs.phishing.mail import context, message

TO = "kim.lee@fabrikam.example"

# (expected indicator, message)
LURES: list[tuple[str, bytes]] = [
    # display names that name a brand, sent from elsewhere
    ("display_name_spoof", message("Your statement is ready.", From="Chase Online <alerts@secure-mail-notify.com>",
                                   To=TO)),
    ("display_name_spoof", message("Unusual sign-in activity.", From='"Wells Fargo Online" <no-reply@wf-update.co>',
                                   To=TO)),
    ("display_name_spoof", message("Your wallet needs attention.", From="MetaMask Support <support@mm-wallet.app>",
                                   To=TO)),
    ("display_name_spoof", message("Withdrawal pending.", From="Binance <noreply@bnc-notices.com>", To=TO)),
    ("display_name_spoof", message("Parcel on hold.", From="Royal Mail <tracking@rm-delivery-uk.info>", To=TO)),
    ("display_name_spoof", message("Refund available.", From="HMRC <refunds@tax-refund-online.net>", To=TO)),
    ("display_name_spoof", message("Account locked.", From="Apple Support <id@verify-account-center.com>", To=TO)),
    ("display_name_spoof", message("Payment failed.", From="Netflix <info@streaming-billing.org>", To=TO)),
    ("display_name_spoof", message("Mailbox full.", From="Microsoft 365 <admin@mailbox-quota.net>", To=TO)),
    ("display_name_spoof", message("Your Coinbase account.", From="=?UTF-8?B?Q29pbmJhc2U=?= <a@cb-alerts.net>",
                                   To=TO)),
    ("display_name_spoof", message("Claim your prize.", From="T E M U <deals@promo-mailer.example>", To=TO)),
    ("display_name_spoof", message("Limited account.", From="\uff30\uff41\uff59\uff30\uff41\uff4c Service "
                                   "<service@intl-notice.example>", To=TO)),
    # look-alike domains: squats, brand in a sub-domain, homographs, typos of a brand named
    ("lookalike_domain", message(html='<p>Confirm your details.</p><a href="https://paypal.com.account-review.ru/'
                                 'signin">Log in</a>', To=TO)),
    ("lookalike_domain", message(html='<a href="https://secure-chase-verify.com/login">Review your Chase activity</a>',
                                 To=TO)),
    ("lookalike_domain", message(html='<a href="http://wellsfargo-alerts.net/auth">Verify now</a>', To=TO)),
    ("lookalike_domain", message("Track: https://dhl-parcel-redelivery.com/track?id=88", To=TO)),
    ("lookalike_domain", message(html='<a href="https://xn--pple-43d.com/id">Apple ID</a>', From="Apple "
                                 "<noreply@xn--pple-43d.com>", To=TO)),
    ("lookalike_domain", message(html='<a href="https://rnicrosoft-online.com/x">Open in Microsoft</a>', To=TO)),
    ("lookalike_domain", message("Sign in to Coinbase at https://coinbasse.com/login today.", To=TO)),
    ("lookalike_domain", message(html='<a href="https://login.micros0ft.support/owa">Keep my password</a>', To=TO)),
    ("lookalike_domain", message("Your Amazon order.", From="Amazon <order-update@amazon-orders-support.com>", To=TO)),
    # free hosting, shorteners, raw IPs
    ("free_hosting_credential_page", message(html='<a href="https://shared-docs-3381.web.app/index.html">Review '
                                             'Document</a>', To=TO)),
    ("free_hosting_credential_page", message(html='<a href="https://pub-9a8b7c.r2.dev/verify.html">Verify your '
                                             'mailbox</a>', To=TO)),
    ("free_hosting_credential_page", message(html='<a href="https://ipfs.io/ipfs/bafybeigdyrzt/login.html">Access '
                                             'shared file</a>', To=TO)),
    ("ip_or_shortener_url", message("Confirm delivery: https://t2m.io/Xk2b", To=TO)),
    ("ip_or_shortener_url", message(html='<a href="http://185.220.101.4/owa/">Sign in</a>', To=TO)),
    ("ip_or_shortener_url", message(html='<a href="http://0xb9dc6504/secure">Sign in</a>', To=TO)),
    # forms and attachments
    ("credential_form", message(html='<p>Session expired.</p><form action="https://collect.example-login.top/p.php" '
                                'method="post"><input type="email" name="u"><input type="password" name="p">'
                                '<input type="submit" value="Sign in"></form>', To=TO)),
    ("credential_form", message("See the attached remittance.", To=TO,
                                attachments=(("Remittance.shtml", "text/html",
                                              b'<form action="https://x.example-mail.top/r.php"><input name="email">'
                                              b'<input type="password" name="pass"></form>'),))),
    ("risky_attachment", message("Voicemail attached.", To=TO,
                                 attachments=(("VM_0193.html", "text/html", b"<script>location='x'</script>"),))),
    ("risky_attachment", message("Invoice attached.", To=TO,
                                 attachments=(("Invoice_5521.iso", "application/octet-stream", b"CD001"),))),
    ("risky_attachment", message("Notes.", To=TO, attachments=(("Meeting.one", "application/onenote", b"\xe4R"),))),
    ("risky_attachment", message("Scan.", To=TO, attachments=(("Scan_044.lnk", "application/x-ms-shortcut",
                                                                b"L\x00"),))),
    ("risky_attachment", message("Photos.", To=TO, attachments=(("photos.img", "application/octet-stream", b"\0"),))),
]

LEGITIMATE: list[bytes] = [
    message("Hi all, the 2.4 release is out. See README.md and setup.py; ASP.NET and ODP.NET notes in docs/.",
            html='<p>Release notes</p><a href="https://github.com/example/project/blob/main/README.md">README.md</a>'
                 ' <a href="https://learn.microsoft.com/aspnet">ASP.NET</a> <a href="https://docs.oracle.com/odp">'
                 'ODP.NET</a>', From="Jo Dev <jo@dev-list.example.org>", To=TO),
    message("Your statement is ready. Sign in to chase.com to view it.",
            From="Chase <no.reply.alerts@chase.com>", To=TO),
    message("A new sign-in to your Google Account on Windows.", From="Google <no-reply@accounts.google.com>", To=TO,
            html='<p>New sign-in</p><a href="https://myaccount.google.com/notifications">Check activity</a>'
                 '<img src="https://www.gstatic.com/images/logo.png" alt="Google">'),
    message("Receipt for your payment to Example Shop.", From="PayPal <service@paypal.com>", To=TO,
            html='<a href="https://www.paypal.com/myaccount/transactions">View</a>'
                 '<img src="https://www.paypalobjects.com/logo.png">'),
    message("Chase Miller shared a document with you.", From="Chase Miller <chase.miller@gmail.com>", To=TO),
    # a sign-up confirmed on an Auth0-hosted login page (Auth0 is an identity provider, its hosts are genuine)
    message("Confirm your email address to finish signing up for Example.", To=TO,
            From="Example <no-reply@login.example.com>",
            html='<p>Finish signing up.</p><a href="https://example.us.auth0.com/u/email-verification?ticket=Zx81">'
                 'Verify your email</a> <a href="https://login.example.com/authorize?client_id=abc">Sign in</a>'
                 ' <img src="https://cdn.auth0.com/website/logo.png" alt="Example">'),
    # a brand's own sign-in tenant at Auth0, named after it: Dropbox's tenant is Dropbox's, no squat of Dropbox
    message("Dropbox: confirm your email address to finish setting up your account.", To=TO,
            From="Dropbox <no-reply@dropbox.com>",
            html='<p>Confirm your email address.</p><a href="https://dropbox.auth0.com/u/email-verification?ticket=Q1">'
                 'Confirm</a> <a href="https://www.dropbox.com/login">Sign in to Dropbox</a>'),
    # a brand's own infrastructure, whose name begins with the brand's (Amazon's images, Google's mail domain)
    message("Your Amazon order has shipped. Questions? Write to orders@googlemail.com.", To=TO,
            From="Amazon.com <shipment-tracking@amazon.com>",
            html='<p>Your order has shipped.</p><img src="https://m.media-amazon.com/images/G/01/logo.png" '
                 'alt="Amazon"> <a href="https://www.amazon.com/orders">Your orders</a>'),
    message("The orchard club meets Thursday; bring an apple pie. Target: 40 members.",
            From="Orchard Club <club@orchard-club.example.org>", To=TO),
    message("[python-dev] PEP discussion: see https://discuss.python.org/t/123 and groups.google.com/g/x",
            From="Ann Author via Python-Dev <python-dev@python.org>", To=TO),
    message("Your package from our shop shipped with UPS: tracking 1Z999.", From="Shop <orders@shop.example.com>",
            To=TO, html='<a href="https://www.ups.com/track?tracknum=1Z999">Track</a>'),
    message("Please sign the NDA.", From="Pat Quinn via DocuSign <dse_na2@docusign.net>", To=TO,
            html='<a href="https://na2.docusign.net/Signing/EmailStart.aspx?a=1">REVIEW DOCUMENT</a>'),
    message("Weekly digest from the Fidelity Investments community.", From="Fidelity <news@fidelity.com>", To=TO),
    message("Your AWS bill is available.", From="Amazon Web Services <aws-billing@amazon.com>", To=TO,
            html='<a href="https://console.aws.amazon.com/billing/home">Billing console</a>'
                 '<a href="https://s3.amazonaws.com/bucket/logo.png">logo</a>'),
    message("Meeting notes attached.", From="Sam <sam@fabrikam.example>", To=TO,
            attachments=(("notes.pdf", "application/pdf", b"%PDF-1.4"),)),
    message("Delta Airlines flight 123? No: the delta in the figures is 4%. United we stand.",
            From="Lee <lee@fabrikam.example>", To=TO),
    message("Sign in with your company account to see the new benefits portal: https://benefits.fabrikam.example/",
            From="HR <hr@fabrikam.example>", To=TO),
]


def test_the_knowledge_base_is_large_registrable_and_unambiguous() -> None:
    assert len(KNOWN_BRANDS) >= 300
    names = Counter(n.lower() for b in KNOWN_BRANDS for n in (b.name, *b.aliases))
    assert not [n for n, k in names.items() if k > 1], "a name names one brand"
    for brand in KNOWN_BRANDS:
        assert brand.domains, brand.name
        for domain in brand.domains:
            assert registrable(domain) == domain, (brand.name, domain)
    assert {b.category for b in KNOWN_BRANDS} >= {"bank", "crypto", "shipping", "saas", "telecom", "government"}


@pytest.mark.parametrize(("indicator", "raw"), LURES, ids=[f"{i}-{n}" for n, (i, _) in enumerate(LURES)])
def test_a_real_lure_is_detected_under_its_indicator(indicator: str, raw: bytes) -> None:
    ctx = context(raw, mailbox=None, imported=True)
    found = dict(detect(ctx))
    assert indicator in found, ctx.rendering.text
    assert confirm(indicator, found[indicator], ctx)
    assert heuristic_probability(ctx) >= 0.5, "one indicator is enough to doubt it"


@pytest.mark.parametrize("raw", LEGITIMATE, ids=[str(n) for n in range(len(LEGITIMATE))])
def test_ordinary_legitimate_mail_raises_no_indicator(raw: bytes) -> None:
    ctx = context(raw, mailbox=None, imported=True)
    assert detect(ctx) == [], ctx.rendering.text
    assert heuristic_probability(ctx) < 0.5


def test_a_token_is_a_domain_only_in_a_url_or_host_context() -> None:
    assert hosts_in("ASP.NET and ODP.NET, README.md, setup.py, VB.NET") == ()
    assert hosts_in("https://README.md/x www.ASP.NET mail@HOST.EXAMPLE.COM") == ("readme.md", "www.asp.net",
                                                                                  "host.example.com")
    assert hosts_in("visit paypal.com or PayPal.com today") == ("paypal.com", "paypal.com")


def test_display_names_name_brands_only_in_a_brand_context() -> None:
    assert brands_in_display_name("Apple Support") == ["Apple"]
    assert brands_in_display_name("Chase Miller") == []
    assert brands_in_display_name("chase online") == [], "an ordinary word names a brand only as written"
    assert brands_in_display_name("Pat Quinn via DocuSign") == ["DocuSign"]
    assert "PayPal" in brands_in_display_name("PAYPAL Service")
    assert brands_named("an apple, a target, the delta of two groups") == []


@pytest.mark.parametrize(("host", "brand"), [
    ("paypal.com.secure-login.ru", "PayPal"), ("login-paypa1.com", "PayPal"), ("mywellsfargo-alert.com", "Wells Fargo"),
    ("dhl-express-parcel.top", "DHL"), ("coinbase-support.help", "Coinbase"), ("binance.verify-kyc.site", "Binance"),
    ("paypalauth0.com", "PayPal"), ("paypalcenter1.com", "PayPal"),
])
def test_a_brand_squatted_in_a_host_is_found(host: str, brand: str) -> None:
    assert squatted_brand(host) == brand


@pytest.mark.parametrize("host", ["www.paypal.com", "googleapis.com", "googlegroups.com", "contoso.sharepoint.com",
                                  "pop-ups.example.org", "purchase.example.com", "mailing.example.org",
                                  "pineapple-farm.example", "lists.python.org", "10.0.0.1", "example.auth0.com",
                                  "example.us.auth0.com", "auth0.com", "cdn.auth0.com", "login.example.com",
                                  "dropbox.auth0.com", "paypal.us.auth0.com", "acme.onelogin.com"])
def test_an_honest_host_squats_nothing(host: str) -> None:
    assert squatted_brand(host) is None


@pytest.mark.parametrize("host", ["paypal.com.secure-login.ru", "paypalsecure.net", "mypaypal-auth0.com",
                                  "secure-paypa1-login.com", "paypalcenter1.com", "purchase-paypa.com",
                                  "paypalpine.com", "pineapple.example", "paypal.auth0.com", "paypal.googleapis.com",
                                  "paypal.paypalobjects.com", "paypal.sharepoint.com"])
def test_a_squat_of_a_brand_and_a_look_alike_of_its_domain_read_the_name_alike(host: str) -> None:
    """Squatting PayPal's name and imitating paypal.com find a name inside a host by one reading, and neither reads
    one in a tenancy host or a brand's infrastructure."""
    assert (squatted_brand(host) == "PayPal") == imitates(host, "paypal.com")


@pytest.mark.parametrize(("host", "genuine"), [
    ("dropbox.auth0.com", "dropbox.com"), ("acme.us.auth0.com", "acme.com"), ("googlemail.com", "google.com"),
    ("m.media-amazon.com", "amazon.com"), ("x.microsoftonline-p.com", "microsoft.com"),
    ("dropbox.oktapreview.com", "dropbox.com"), ("facebookmail.com", "facebook.com"),
    ("youtube-nocookie.com", "youtube.com"), ("contoso.sharepoint.com", "contoso.com"),
])
def test_a_tenancy_host_or_a_brands_infrastructure_imitates_nothing(host: str, genuine: str) -> None:
    """Genuine hosts whose names hold or begin with a brand's: ``imitates`` agrees with ``squatted_brand`` and the
    scorer (the generator asks ``imitates`` alone whether a plant is a look-alike)."""
    assert not imitates(host, genuine)
    assert squatted_brand(host) is None


@pytest.mark.parametrize(("host", "genuine"), [
    ("dropbox-auth0.com", "dropbox.com"), ("dropbox.auth0-login.com", "dropbox.com"),
    ("media-amazon.top", "amazon.com"), ("googlemail.help", "google.com"),
    ("amazon.com.media-amazon.top", "amazon.com"),
])
def test_a_host_posing_as_a_tenancy_or_infrastructure_still_imitates(host: str, genuine: str) -> None:
    assert imitates(host, genuine)


def test_an_image_only_body_is_a_signal_of_the_heuristic() -> None:
    lure = context(message("", html='<a href="https://example-promo.top/x"><img src="https://example-promo.top/'
                                    'i.png" alt="Your invoice"></a>', To=TO), mailbox=None, imported=True)
    assert image_only(lure)
    newsletter = context(message("", html="<p>" + "This week in the project we shipped many fixes. " * 4 + "</p>"
                                          '<img src="https://news.example.org/h.png"><a href="https://news.example.'
                                          'org/more">More</a>', To=TO), mailbox=None, imported=True)
    assert not image_only(newsletter)
    assert heuristic_probability(lure) > heuristic_probability(newsletter)


def test_recall_per_indicator_is_complete_on_these_lures() -> None:
    """The per-indicator recall the closing note quotes: every lure here found under its own indicator."""
    recall: Counter[str] = Counter()
    totals: Counter[str] = Counter(i for i, _ in LURES)
    for indicator, raw in LURES:
        recall[indicator] += indicator in dict(detect(context(raw, mailbox=None, imported=True)))
    assert recall == totals
