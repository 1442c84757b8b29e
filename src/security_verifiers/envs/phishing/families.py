"""The phishing families of the E4 generator, one function each, and the registry of every family (phishing
here, legitimate in :mod:`legit`).

Each function writes one message of its lure and plants the evidence the message really carries: the structural
quotes (a look-alike address, a shortener link, an HTML attachment's name) and the language spans it wrote. Lures
that need no link (CEO fraud, gift cards, payroll) carry only a spoofed identity and their words. Attackers send
from domains they own, so most of these messages pass SPF, DKIM and DMARC; only a spoofed sender fails.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from security_verifiers.envs.phishing import legit, mime
from security_verifiers.envs.phishing.text import (
    BANK_CHANGE,
    REMITTANCE,
    REQUESTS,
    SCENARIOS,
    SHIPPING_BUTTONS,
    SHIPPING_FEES,
    SHIPPING_OPENINGS,
    SHIPPING_PATHS,
    SHIPPING_SUBJECTS,
    SHIPPING_URGENCY,
    Body,
    Ctx,
    Draft,
    Notice,
    amount,
    ask_span,
    day_text,
    finish,
    footer,
    greeting,
    host_on,
    notice,
    page_url,
    person_pair,
    ref,
    request_signoff,
    scenario_words,
    signoff,
    slug,
    span,
    write_notice,
)
from security_verifiers.envs.phishing.world import (
    BRAND,
    CARRIERS,
    FREE_HOSTING,
    FREE_MAIL,
    ROLES_OF_AUTHORITY,
    SAAS,
    SHORTENERS,
    Person,
    free_mail_address,
    homograph,
    local_part,
    lookalike,
    person_name,
    small_business_domain,
)

P = "Phishing"

_SSO_BRAND = {"microsoft": "Microsoft", "google": "Google", "okta": "Okta"}
#: The notices credential lures copy (:data:`.text.SCENARIOS`).
_SCENARIOS = ("password_expiry", "shared_document", "mailbox_quota", "account_locked", "hr_notice", "voicemail",
              "signin_alert", "password_reset", "mfa", "verify_email")
_URGENCIES = tuple(u for pool in SCENARIOS.values() for u in pool["urgency"])
#: Services whose names read as themselves inside a longer or altered domain (a short name does not).
_IMITABLE = tuple(b for b in SAAS if len(b.domains[0].split(".")[0]) >= 6)


def _sso(ctx: Ctx) -> str:
    return _SSO_BRAND[ctx.org.sso]


# --------------------------------------------------------------------------------------------------
# Wording shared by credential lures
# --------------------------------------------------------------------------------------------------
def _urgency_phish(ctx: Ctx) -> str:
    """Pressure in a notice's own words (any scenario's)."""
    return ctx.pick(_URGENCIES, **scenario_words(ctx, ctx.org.name))


# --------------------------------------------------------------------------------------------------
# Phishing, in distribution
# --------------------------------------------------------------------------------------------------
def _credential_notice(ctx: Ctx, scenario: str, brand: str, href: str, *, shown: str | None = None,
                       closing: bool = True) -> tuple[Body, Notice]:
    """The body of a credential lure: the genuine notice's own wording (:data:`.text.SCENARIOS`), a link to the
    impostor's page; a little more often pressed for time and a little less often reassuring than the original."""
    n = notice(ctx, scenario, brand)
    body = Body()
    write_notice(ctx, body, n, href, action=0.85, urgency=0.6, reassure=0.45, shown=shown, brand=brand,
                 closing=closing)
    return body, n


def _request_body(ctx: Ctx, kind: str, body: Body, kw: dict[str, object], urgency: float) -> str:
    """A request between colleagues (:data:`.text.REQUESTS`): its body into ``body``, and its subject."""
    pool = REQUESTS[kind]
    indicator = "gift_card_request" if kind == "gift_card" else "payment_change_request"
    body.para(greeting(ctx), ctx.pick(pool["opener"], **kw) or None)
    if kind == "gift_card":
        body.para(ask_span(indicator, ctx.pick(pool["ask"], **kw)),
                  span(indicator, ctx.pick(pool["follow"], **kw)) if ctx.rng.random() < 0.8 else None)
    else:
        body.para(ask_span(indicator, ctx.pick(pool["ask"], **kw)), ctx.pick(pool["follow"], **kw) or None)
    body.para(span("urgency_pressure", ctx.pick(pool["urgency"], **kw)) if ctx.rng.random() < urgency else None)
    return ctx.pick(pool["subject"], **kw)


def _request_words(ctx: Ctx) -> dict[str, object]:
    rng = ctx.rng
    return {"a": amount(rng, 900, 185000), "p": rng.choice(ctx.org.partners).name, "i": ref(rng, "INV-", 5),
            "n": rng.choice((3, 4, 5, 6, 8, 10)), "k": rng.choice(("Apple", "Google Play", "Amazon", "Visa", "Steam",
                                                                  "Target")),
            "v": rng.choice((25, 50, 100, 200, 250, 500)), "bank": rng.choice(("Chime", "Ally", "a credit union",
                                                                             "Revolut")),
            "d": day_text(ctx.when, 4)}


def lookalike_credential(ctx: Ctx) -> Draft:
    """A sign-in page on a domain that imitates the organisation's or a service's."""
    rng, org = ctx.rng, ctx.org
    scenario = rng.choice(_SCENARIOS)
    r = rng.random()
    if r < 0.45:
        brand, genuine = org.name, org.domain
    elif r < 0.75:
        brand = _sso(ctx)
        genuine = BRAND[brand].domains[0]
    else:
        imitated = rng.choice(_IMITABLE)
        brand, genuine = imitated.name, imitated.domains[0]
    if scenario == "shared_document" and rng.random() < 0.5:  # a storage service's share notice
        brand, genuine = rng.choice((("Google Drive", "google.com"), ("Dropbox", "dropbox.com")))
    fake = lookalike(rng, genuine)
    href = page_url(rng, host_on(rng, fake))
    shown = None
    if rng.random() < 0.25:  # a visible URL of the genuine service over the fake one
        shown = f"https://{'login.microsoftonline.com' if brand == 'Microsoft' else 'login.' + genuine}"
    # The imitated name is always written out (the closing names it): a look-alike imitates what the email names.
    body, n = _credential_notice(ctx, scenario, brand, href, shown=shown)
    if shown:
        body.plant("link_text_mismatch", href)
    body.plant("lookalike_domain", href)
    if rng.random() < 0.45:  # sent from the look-alike itself
        name = ctx.pick(("{b} IT Service Desk", "{b} Support", "IT Helpdesk", "{b} Security", "{b}",
                         "{b} Account Team", "IT Service Desk"), b=brand)
        sender = (name, f"{rng.choice(('noreply', 'it-support', 'helpdesk', 'security', 'no-reply', 'servicedesk'))}"
                        f"@{fake}")
        body.plant("lookalike_domain", sender[1])
    else:  # from a compromised small business, under the brand's name
        sender = (ctx.pick(("{b} Account Team", "{b} Notifications", "{b} 365", "{b} Security", "{b}",
                            "{b} IT Service Desk"), b=brand),
                  f"{rng.choice(('info', 'office', 'admin', 'accounts', 'mail'))}@{small_business_domain(rng)}")
        body.plant("display_name_spoof", mime.address_text(sender))
    auth = rng.choices(("pass", "none"), (0.8, 0.2))[0]
    return finish(ctx, body, family="lookalike_credential", label=P, difficulty="easy", lure=scenario,
                  sender=sender, subject=n.subject, auth=auth,
                  parts=rng.choice(("alternative", "html", "alternative") if shown else ("alternative", "html",
                                                                                          "alternative", "plain")),
                  urgent=rng.random() < 0.6, bulk=rng.random() < 0.3)


def free_hosting_credential(ctx: Ctx) -> Draft:
    """A sign-in page on free hosting or a site builder, sent from a compromised or spoofed account."""
    rng, org = ctx.rng, ctx.org
    scenario = rng.choice(_SCENARIOS)
    brand = rng.choice((org.name, _sso(ctx)))
    key = rng.choice(("signin", "login", "verify", "account", "auth", "password-reset"))
    host = rng.choice(FREE_HOSTING).format(slug=slug(rng, org.short, rng.choice(("docs", "portal", "secure", "hr",
                                                                                 "files", "mail"))),
                                           user=f"{org.short}{rng.randint(10, 999)}")
    href = f"https://{host}/{key}" + rng.choice(("", ".html", "/index.html", f"?id={rng.getrandbits(32):x}"))
    spoofed = rng.random() < 0.5
    body, n = _credential_notice(ctx, scenario, brand, href, closing=not spoofed or rng.random() < 0.5)
    body.plant("free_hosting_credential_page", href)
    if spoofed:  # a spoofed colleague or IT address of the organisation itself: authentication fails
        staff = rng.choice(org.staff)
        sender, auth = person_pair(staff) if rng.random() < 0.5 else ("IT Service Desk", f"it@{org.domain}"), "spoof"
        body.para(signoff(ctx, sender[0], company=org.name))
        ret = f"{rng.choice(('bounce', 'mailer', 'postmaster'))}@{small_business_domain(rng)}"
    else:  # a real account at a small business, taken over: everything passes
        name = person_name(rng)
        domain = small_business_domain(rng)
        sender, auth, ret = (name, f"{local_part(name, rng.randrange(4))}@{domain}"), "pass", None
        if rng.random() < 0.5:
            body.para(signoff(ctx, name, ctx.pick(("Office Manager", "Accounts", "Owner", "Bookkeeper")),
                              domain.split(".")[0].title()))
    return finish(ctx, body, family="free_hosting_credential", label=P, difficulty="easy", lure=scenario,
                  sender=sender, subject=n.subject, auth=auth, return_path=ret,
                  parts=rng.choice(("alternative", "html", "plain")), urgent=rng.random() < 0.6)


def compromised_site_credential(ctx: Ctx) -> Draft:
    """A notice from a real, taken-over account of a small business, linking to a page planted on that business's
    own (also compromised) web site: sender, links and authentication are all in order, and only the wording (a
    stranger asking the reader to sign in or view a document) tells. Much real phishing looks like this; without it
    the generated mail would teach that a message with nothing structural to show is always genuine."""
    rng, org = ctx.rng, ctx.org
    scenario = rng.choice(_SCENARIOS)
    brand = rng.choice((org.name, _sso(ctx), _sso(ctx)))
    domain = small_business_domain(rng)
    folder = rng.choice(("wp-content/uploads", "wp-includes/css", "images", "media", "cgi-bin", "old", "files"))
    href = f"https://{rng.choice(('', 'www.'))}{domain}/{folder}/{slug(rng, org.short, 'doc')}/" + rng.choice(
        ("index.html", "login.php", "", "auth/", "verify.html"))
    n = notice(ctx, scenario, brand)
    body = Body()  # the request is always made: it is all the message has to show
    write_notice(ctx, body, n, href, action=1.0, urgency=0.5, reassure=0.45, brand=brand,
                 closing=rng.random() < 0.5)
    name = person_name(rng)
    sender = (name, f"{local_part(name, rng.randrange(4))}@{domain}")
    if rng.random() < 0.6:
        body.para(signoff(ctx, name, ctx.pick(("Office Manager", "Accounts", "Owner", "Bookkeeper", "Sales")),
                          domain.split(".")[0].replace("-", " ").title()))
    return finish(ctx, body, family="compromised_site_credential", label=P, difficulty="hard", lure=scenario,
                  sender=sender, subject=n.subject, auth="pass", parts=rng.choice(("alternative", "html", "plain")),
                  urgent=rng.random() < 0.5)


def _exec_sender(ctx: Ctx, roles: tuple[str, ...]) -> tuple[tuple[str, str], Person]:
    """An executive's name on a free-mail address: ((name, address), the executive)."""
    boss = ctx.rng.choice(ctx.org.by_role(*roles) or list(ctx.org.staff[:2]))
    display = boss.name if ctx.rng.random() < 0.75 else f"{boss.name} ({ctx.rng.choice(('CEO', 'Office', 'Mobile'))})"
    return (display, free_mail_address(ctx.rng, boss.name)), boss


def ceo_wire(ctx: Ctx) -> Draft:
    """An executive asks for an urgent, confidential wire: no link, no attachment, only a borrowed name."""
    rng, org = ctx.rng, ctx.org
    sender, boss = _exec_sender(ctx, ("Chief Executive Officer", "Managing Director", "Chief Financial Officer"))
    ctx.recipient = rng.choice(org.by_role("Financial Controller", "Accounts Payable Specialist",
                                           "Executive Assistant") or [ctx.recipient])
    body = Body()
    reply_to = None
    auth = "pass"
    if rng.random() < 0.25:  # the executive's own address, spoofed, with replies diverted to free mail
        sender = (boss.name, boss.email)
        reply_to = (boss.name, free_mail_address(rng, boss.name))
        auth = "spoof"
        body.plant("reply_to_mismatch", reply_to[1])
    else:
        body.plant("display_name_spoof", mime.address_text(sender))
        if rng.random() < 0.3:
            alt = free_mail_address(rng, boss.name)
            if alt.split("@")[1] != sender[1].split("@")[1]:
                reply_to = (boss.name, alt)
                body.plant("reply_to_mismatch", alt)
    subject = _request_body(ctx, "payment", body, _request_words(ctx), 0.75)
    body.para(request_signoff(ctx, boss.name, boss.role))
    return finish(ctx, body, family="ceo_wire", label=P, difficulty="hard", lure="wire_transfer", sender=sender,
                  subject=subject, auth=auth, reply_to=reply_to, parts=rng.choice(("plain", "plain", "alternative")),
                  urgent=rng.random() < 0.6)


def gift_card(ctx: Ctx) -> Draft:
    """A manager asks for gift cards and their codes, from a free-mail address under the manager's name."""
    rng = ctx.rng
    sender, boss = _exec_sender(ctx, ROLES_OF_AUTHORITY)
    body = Body()
    body.plant("display_name_spoof", mime.address_text(sender))
    kw = _request_words(ctx)
    subject = _request_body(ctx, "gift_card", body, kw, 0.75)
    body.para(request_signoff(ctx, boss.name, boss.role))
    return finish(ctx, body, family="gift_card", label=P, difficulty="hard", lure=f"gift_card_{str(kw['k']).lower()}",
                  sender=sender, subject=subject, parts=rng.choice(("plain", "plain", "alternative")),
                  urgent=rng.random() < 0.6)


def payroll_change(ctx: Ctx) -> Draft:
    """An employee's name on a free-mail address asks payroll to send the salary to a new account."""
    rng, org = ctx.rng, ctx.org
    ctx.recipient = rng.choice(org.by_role("Payroll Administrator", "HR Director") or [ctx.recipient])
    employee = rng.choice([p for p in org.staff if p is not ctx.recipient])
    sender = (employee.name, free_mail_address(rng, employee.name))
    body = Body()
    body.plant("display_name_spoof", mime.address_text(sender))
    subject = _request_body(ctx, "payroll", body, _request_words(ctx), 0.6)
    body.para(request_signoff(ctx, employee.name, employee.role))
    return finish(ctx, body, family="payroll_change", label=P, difficulty="hard", lure="direct_deposit",
                  sender=sender, subject=subject, parts=rng.choice(("plain", "alternative")))


def vendor_bank_change(ctx: Ctx) -> Draft:
    """A partner's contact, on a look-alike of the partner's domain, announces new bank details in the words a
    real supplier uses."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = partner.contacts[0]
    fake = lookalike(rng, partner.domain)
    sender = (contact.name, f"{contact.email.split('@')[0]}@{fake}")
    reply = None
    if rng.random() < 0.65:
        reply = (contact.name, rng.choice((free_mail_address(rng, contact.name),
                                           f"accounts@{lookalike(rng, partner.domain)}")))
    ctx.recipient = rng.choice(org.by_role("Accounts Payable Specialist", "Financial Controller") or [ctx.recipient])
    body = Body()
    body.plant("lookalike_domain", sender[1])
    if reply and reply[1].split("@")[1] != fake:
        body.plant("reply_to_mismatch", reply[1])
    kw = {"d": day_text(ctx.when, rng.randint(2, 14)), "p": partner.name, "i": ref(rng, rng.choice(("INV-", "", "SI")),
                                                                                   5),
          "b": rng.choice(("Crescent Bay Bank", "a new bank", "Northgate Savings", "Harbourline Commercial Bank"))}
    body.para(greeting(ctx))
    body.para(ctx.pick(BANK_CHANGE["opening"], **kw), span("payment_change_request", ctx.pick(BANK_CHANGE["ask"],
                                                                                              **kw)))
    body.para(span("urgency_pressure", ctx.pick(BANK_CHANGE["urgency"], **kw)) if rng.random() < 0.6 else None,
              ctx.pick(BANK_CHANGE["confirm_phone"] if rng.random() < 0.25 else BANK_CHANGE["confirm_email"]))
    body.para(signoff(ctx, contact.name, contact.role, partner.name))
    letter = mime.attachment(rng.choice(("Updated_Bank_Details.pdf", "Bank_Change_Letter.pdf", f"Invoice_{kw['i']}.pdf",
                                         "Bank_Change_Notice.pdf")),
                             mime.pdf(rng, [partner.name, "Change of bank details", f"Invoice {kw['i']}"]))
    return finish(ctx, body, family="vendor_bank_change", label=P, difficulty="hard", lure="bank_details_change",
                  sender=sender, subject=ctx.pick(BANK_CHANGE["subject"], **kw),
                  reply_to=reply, attachments=[letter] if rng.random() < 0.6 else None, urgent=rng.random() < 0.5)


def html_attachment(ctx: Ctx) -> Draft:
    """A remittance, voicemail or fax notice whose attachment is a local sign-in page."""
    rng, org = ctx.rng, ctx.org
    kind = rng.choice(("remittance", "voicemail", "fax", "purchase_order", "payment"))
    n = ref(rng, "", 6)
    name = {"remittance": f"Remittance_Advice_{n}", "voicemail": f"VM_{n}_Play", "fax": f"eFax_{n}",
            "purchase_order": f"PO_{n}", "payment": f"Payment_Confirmation_{n}"}[kind]
    filename = name + rng.choice((".htm", ".html", ".html", ".shtml", ".svg"))
    target = f"https://{lookalike(rng, org.domain)}/owa/auth" if rng.random() < 0.5 else \
        f"https://{small_business_domain(rng)}/wp-includes/{rng.getrandbits(32):x}/login.php"
    att = mime.attachment(filename, mime.html_lure(_sso(ctx), target, ctx.recipient.email))
    body = Body()
    body.plant("risky_attachment", filename)
    body.para(greeting(ctx))
    words = scenario_words(ctx, _sso(ctx)) | {"n": n, "a": amount(rng, 900, 60000), "pg": rng.randint(2, 9),
                                              "p": rng.choice(org.partners).name}
    body.para(ctx.pick(REMITTANCE["opening"], **words) if kind in ("remittance", "purchase_order", "payment") else
              ctx.pick(SCENARIOS["voicemail"]["opening"], **words) if kind == "voicemail" else
              ctx.pick(("You have received a {pg}-page fax.", "A new fax document is attached."), **words),
              span("credential_request", ctx.pick((
                  "Open the attachment and sign in with your email credentials to view it",
                  "You will need to verify your email password to open the secure file",
                  "Sign in with your {b} account to access the document"), b=_sso(ctx)))
              if rng.random() < 0.6 else None)
    if rng.random() < 0.4:
        body.para(span("urgency_pressure", _urgency_phish(ctx)))
    if rng.random() < 0.5:  # spoofing a partner's domain: authentication fails
        partner = rng.choice(org.partners)
        contact = partner.contacts[0]
        sender, auth, ret = person_pair(contact), "spoof", f"noreply@{small_business_domain(rng)}"
        body.para(signoff(ctx, contact.name, contact.role, partner.name))
    else:
        who = person_name(rng)
        domain = small_business_domain(rng)
        sender, auth, ret = (ctx.pick(("{w}", "Accounts Payable", "Voice Mail Service", "Scan2Email"), w=who),
                             f"{rng.choice(('accounts', 'scanner', 'voicemail', 'office'))}@{domain}"), "pass", None
        body.para(signoff(ctx, who, "Accounts", domain.split(".")[0].title()))
    return finish(ctx, body, family="html_attachment", label=P, difficulty="easy", lure=kind, sender=sender,
                  subject=ctx.pick(REMITTANCE["subject"] if kind in ("remittance", "purchase_order", "payment") else
                                   SCENARIOS["voicemail"]["subject"] if kind == "voicemail" else
                                   ("Fax received: {n}", "eFax message"), **words),
                  auth=auth, return_path=ret, attachments=[att])


def qr_code(ctx: Ctx) -> Draft:
    """An MFA re-enrolment notice whose link is a QR code in an image, out of reach of link scanners."""
    rng, org = ctx.rng, ctx.org
    brand = rng.choice((org.name, _sso(ctx)))
    body = Body()
    r = rng.random()
    if r < 0.4:
        fake = lookalike(rng, org.domain)
        sender = (ctx.pick(("IT Security", "{b} IT", "Security Team", "MFA Admin", "IT Service Desk"), b=brand),
                  f"{rng.choice(('security', 'it-support', 'noreply'))}@{fake}")
        body.plant("lookalike_domain", sender[1])
    elif r < 0.75:
        sender = (ctx.pick(("{o} IT Security", "{o} Helpdesk", "{o} MFA Service", "{o} IT Service Desk"), o=org.name),
                  f"{rng.choice(('alerts', 'notice', 'admin'))}@{small_business_domain(rng)}")
        body.plant("display_name_spoof", mime.address_text(sender))
    else:
        sender = (ctx.pick(("IT Helpdesk", "IT Support", "Security Administrator")),
                  f"{rng.choice(('it.helpdesk', 'support.team', 'mfa.admin'))}{rng.randint(1, 99)}@"
                  f"{rng.choice(FREE_MAIL)}")
        body.plant("display_name_spoof", mime.address_text(sender))
    n = notice(ctx, "mfa", brand)
    if rng.random() < 0.75:
        body.para(greeting(ctx))
    body.para(n.opening, n.detail or None,
              span("qr_code_lure", ctx.pick((
                  "Scan the QR code below with your phone camera to re-register your device",
                  "Use your mobile phone to scan the attached QR code and complete the verification",
                  "Scan the code with your phone and sign in to keep your access",
                  "Please scan the QR code to confirm your account",
                  "Scan the attached code with the camera on your phone to finish the setup"))))
    body.para(span("urgency_pressure", n.urgency) if rng.random() < 0.6 else None,
              n.reassure if rng.random() < 0.4 else None)
    body.para(n.closing)
    body.para(footer(ctx, brand))
    img = mime.attachment(rng.choice(("MFA_Setup.png", "QR_Code.png", "Authenticator.png", "secure_scan.png")),
                          mime.qr_png(rng))
    return finish(ctx, body, family="qr_code", label=P, difficulty="hard", lure="mfa_reenrolment", sender=sender,
                  subject=n.subject, attachments=[img], urgent=rng.random() < 0.5,
                  auth=rng.choice(("pass", "pass", "none")))


def shortener_delivery(ctx: Ctx) -> Draft:
    """A delivery notice whose link goes through a shortener or to a bare IP address."""
    rng = ctx.rng
    carrier = rng.choice(CARRIERS)
    body = Body()
    if rng.random() < 0.5:
        code = "".join(rng.choice("abcdefghijkmnpqrstuvwxyzABCDEFGH23456789") for _ in range(7))
        href = f"https://{rng.choice(SHORTENERS)}/{code}"
    else:
        href = f"http://{mime.doc_ip(rng)}/{rng.choice(SHIPPING_PATHS)}?id={ref(rng)}"
    body.plant("ip_or_shortener_url", href)
    tracking = ref(rng, rng.choice(("1Z", "JD", "7", "")), 12)
    imitated = rng.random() < 0.5
    domain = lookalike(rng, carrier.domains[0]) if imitated else small_business_domain(rng)
    sender = (ctx.pick(("{c} Express", "{c} Delivery", "{c}", "{c} Customer Service"), c=carrier.name),
              f"{rng.choice(('support', 'noreply', 'tracking'))}@{domain}")
    if imitated:
        body.plant("lookalike_domain", sender[1])
    if domain.split(".")[0] != carrier.domains[0].split(".")[0]:
        body.plant("display_name_spoof", mime.address_text(sender))
    body.para(ctx.pick(("Dear customer,", "Hello,", greeting(ctx))))
    fee = f"${rng.choice((1, 2, 3))}.{rng.randint(10, 99)}"
    body.para(ctx.pick(SHIPPING_OPENINGS, t=tracking),
              span("payment_change_request", ctx.pick(SHIPPING_FEES, f=fee)) if rng.random() < 0.6 else None)
    body.link(ctx.pick(SHIPPING_BUTTONS), href)
    body.para(span("urgency_pressure", ctx.pick(SHIPPING_URGENCY, d=day_text(ctx.when, 3)))
              if rng.random() < 0.7 else None)
    body.para(footer(ctx, carrier.name))
    return finish(ctx, body, family="shortener_delivery", label=P, difficulty="easy", lure=f"{carrier.name}_delivery",
                  sender=sender, subject=ctx.pick(SHIPPING_SUBJECTS, c=carrier.name, t=tracking),
                  parts=rng.choice(("alternative", "html")), bulk=rng.random() < 0.6,
                  auth=rng.choice(("pass", "none")))


# --------------------------------------------------------------------------------------------------
# Phishing, OOD only
# --------------------------------------------------------------------------------------------------
def oauth_consent(ctx: Ctx) -> Draft:
    """A genuine Microsoft or Google authorize URL for the attacker's application: no password is asked."""
    rng, org = ctx.rng, ctx.org
    app_host = f"{rng.choice(('docs', 'files', 'secure', 'view', 'share'))}{rng.choice(('-viewer', 'hub', 'sync'))}" \
               f"{rng.choice(('app', 'online', 'cloud'))}.{rng.choice(('com', 'io', 'net'))}"
    if rng.random() < 0.6 or org.sso != "google":
        scope = rng.choice(("offline_access%20Mail.Read%20Files.ReadWrite.All", "Mail.ReadWrite%20offline_access",
                            "User.Read%20Mail.Send%20Contacts.Read%20offline_access"))
        href = (f"https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id={uuid.UUID(int=rng.getrandbits(128))}"
                f"&response_type=code&redirect_uri=https://{app_host}/auth&scope={scope}")
        brand = "Microsoft 365"
    else:
        scope = rng.choice(("https://mail.google.com/", "https://www.googleapis.com/auth/drive"))
        href = (f"https://accounts.google.com/o/oauth2/v2/auth?client_id={rng.getrandbits(40)}-"
                f"{rng.getrandbits(64):x}.apps.googleusercontent.com&redirect_uri=https://{app_host}/cb"
                f"&response_type=code&scope={scope}")
        brand = "Google Drive"
    body = Body()
    body.plant("oauth_consent_lure", href)
    partner = rng.choice(org.partners)
    contact = partner.contacts[rng.randrange(2)]
    doc = ctx.pick(("Statement of Work {y}.pdf", "Purchase Agreement.docx", "Project Budget.xlsx",
                    "Contract Amendment.pdf"), y=ctx.when.year)
    body.para(greeting(ctx))
    body.para(ctx.pick(("{n} shared \"{d}\" with you in {b}.", "I have shared {d} with you for review.",
                        "Please find {d} in our secure {b} workspace."), n=contact.name, d=doc, b=brand),
              span("credential_request", ctx.pick((
                  "Sign in with your work account and accept the permissions to open the file",
                  "You will be asked to sign in and allow access to view the document",
                  "Log in with your organisation account to continue"))) if rng.random() < 0.7 else None)
    body.link(ctx.pick(("Open in {b}", "View document", "Open {d}"), b=brand, d=doc), href)
    body.para(signoff(ctx, contact.name, contact.role, partner.name))
    # A compromised mailbox of a real partner: authentication passes.
    return finish(ctx, body, family="oauth_consent", label=P, difficulty="hard", lure="oauth_app_consent",
                  sender=person_pair(contact), subject=ctx.pick(("{n} shared a document with you", "Document for "
                                                                 "review: {d}", "{d}"), n=contact.name, d=doc),
                  parts=rng.choice(("alternative", "html")))


def reply_chain_hijack(ctx: Ctx) -> Draft:
    """A reply in an earlier thread with a partner, from a look-alike of the partner's domain, with an archive."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = partner.contacts[rng.randrange(2)]
    fake = lookalike(rng, partner.domain)
    sender = (contact.name, f"{contact.email.split('@')[0]}@{fake}")
    topic = ctx.pick(("Q{q} order forecast", "Revised delivery schedule", "Contract renewal {y}", "Open items list",
                      "Pricing update"), q=rng.randint(1, 4), y=ctx.when.year)
    earlier = ctx.when.replace(day=max(1, ctx.when.day - 3))
    quoted = [f"On {earlier.strftime('%a, %d %b %Y')} at {earlier.strftime('%H:%M')}, {ctx.recipient.name} "
              f"<{ctx.recipient.email}> wrote:",
              f"> Hi {contact.first},", "> ",
              "> " + ctx.pick(("Thanks for the update on {t}.", "Could you send the latest version of the {t}?",
                               "Following up on our call about the {t}."), t=topic.lower()),
              "> " + ctx.pick(("Let me know if anything changes on your side.", "We need it before the review.",
                               "I have copied our finance team.")),
              "> ", f"> {ctx.recipient.first}"]
    body = Body()
    body.plant("lookalike_domain", sender[1])
    docm = rng.random() < 0.6
    name = ctx.pick(("Revised_{t}", "Updated_{t}", "{t}_final"), t=topic.replace(" ", "_"))
    if docm:
        filename = name + ".docm"
        att = mime.attachment(filename, mime.office_package(rng, "docm", topic, macros=True))
        body.plant("risky_attachment", filename)
    else:
        inner = name + rng.choice((".js", ".lnk", ".docm", ".one"))
        filename = name + ".zip"
        att = mime.attachment(filename, mime.zip_of({inner: rng.randbytes(rng.randint(800, 4000))}))
    body.para(greeting(ctx, ctx.recipient.name))
    body.para(ctx.pick(("As discussed, please find the revised document attached.", "Attached is the updated version "
                        "with our comments.", "Here is the file you asked for."),),
              ctx.pick(("The password to open it is {p}.", "Please enable editing to see the full content.", ""),
                        p=ref(rng, "", 4)),
              span("urgency_pressure", ctx.pick(("Please review it before our call today",
                                                 "We need your confirmation by end of day"))) if rng.random() < 0.5
              else None)
    body.para(signoff(ctx, contact.name, contact.role, partner.name))
    return finish(ctx, body, family="reply_chain_hijack", label=P, difficulty="hard", lure="thread_hijack",
                  sender=sender, subject=f"Re: {topic}", quoted=quoted, attachments=[att],
                  in_reply_to=mime.message_id(rng, org.domain))


def idn_homograph(ctx: Ctx) -> Draft:
    """A sign-in lure on an internationalised domain whose Unicode form reads as the genuine one."""
    rng, org = ctx.rng, ctx.org
    target = rng.choice(("org", "partner", "brand"))
    if target == "org":
        genuine, brand = org.domain, org.name
    elif target == "partner":
        partner = rng.choice(org.partners)
        genuine, brand = partner.domain, partner.name
    else:
        brand = rng.choice(("Microsoft", "Google", "Dropbox", "Adobe", "DocuSign"))
        genuine = BRAND[brand].domains[0]
    _, puny = homograph(rng, genuine)
    if puny == genuine:  # no letter had a Cyrillic twin
        puny = lookalike(rng, genuine)
    scenario = rng.choice(_SCENARIOS)
    href = f"https://{puny}/{rng.choice(('login', 'signin', 'account/verify'))}"
    sender = (ctx.pick(("{b}", "{b} Support", "{b} Accounts"), b=brand),
              f"{rng.choice(('no-reply', 'support'))}@{puny}")
    body, n = _credential_notice(ctx, scenario, brand, href)
    body.plant("lookalike_domain", sender[1])
    subject = n.subject
    return finish(ctx, body, family="idn_homograph", label=P, difficulty="hard", lure=f"homograph_{target}",
                  sender=sender, subject=subject, parts=rng.choice(("alternative", "html")))


# --------------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    name: str
    label: str
    build: Callable[[Ctx], Draft]
    weight: float
    ood: bool = False  # only in the ood split
    shared: bool = True  # also in the ood split (legitimate kinds are everywhere)


FAMILIES: tuple[Family, ...] = (
    Family("lookalike_credential", P, lookalike_credential, 0.055, shared=False),
    Family("free_hosting_credential", P, free_hosting_credential, 0.05, shared=False),
    Family("ceo_wire", P, ceo_wire, 0.045, shared=False),
    Family("gift_card", P, gift_card, 0.035, shared=False),
    Family("payroll_change", P, payroll_change, 0.04, shared=False),
    Family("vendor_bank_change", P, vendor_bank_change, 0.045, shared=False),
    Family("html_attachment", P, html_attachment, 0.045, shared=False),
    Family("qr_code", P, qr_code, 0.04, shared=False),
    Family("shortener_delivery", P, shortener_delivery, 0.04, shared=False),
    Family("compromised_site_credential", P, compromised_site_credential, 0.07, shared=True),
    Family("oauth_consent", P, oauth_consent, 0.14, ood=True),
    Family("reply_chain_hijack", P, reply_chain_hijack, 0.13, ood=True),
    Family("idn_homograph", P, idn_homograph, 0.12, ood=True),
    *(Family(name, "Legitimate", build, weight, ood=ood) for name, build, weight, ood in legit.ROWS),
)
