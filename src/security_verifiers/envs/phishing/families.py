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
    Body,
    Ctx,
    Draft,
    amount,
    day_text,
    finish,
    greeting,
    person_pair,
    ref,
    signoff,
    slug,
    span,
)
from security_verifiers.envs.phishing.world import (
    BRAND,
    CARRIERS,
    FREE_HOSTING,
    FREE_MAIL,
    ROLES_OF_AUTHORITY,
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
_PRETEXTS = ("password_expiry", "shared_document", "mailbox_quota", "account_locked", "hr_policy", "voicemail")


def _sso(ctx: Ctx) -> str:
    return _SSO_BRAND[ctx.org.sso]


# --------------------------------------------------------------------------------------------------
# Wording shared by credential lures
# --------------------------------------------------------------------------------------------------
def _credential_pretext(ctx: Ctx, pretext: str, brand: str) -> tuple[str, str, str, str]:
    """(subject, opening sentence, credential clause, button text) of a credential lure."""
    c = ctx
    mailbox = c.recipient.email
    if pretext == "password_expiry":
        return (c.pick(("Password expiry notice for {m}", "Your password expires today", "Action required: "
                        "password expiration", "{b} password reset required", "Reminder: update your password"),
                       m=mailbox, b=brand),
                c.pick(("The password for {m} is set to expire {d}.", "Our records show your {b} password has not "
                        "been changed in 90 days.", "Your network password expires in less than 24 hours."),
                       m=mailbox, d=c.pick(("today", "tonight", "at midnight")), b=brand),
                c.pick(("Sign in below to keep your current password", "Please confirm your current password to "
                        "retain access", "Use the secure portal to verify your login details",
                        "Log in with your {b} credentials to keep the same password"), b=brand),
                c.pick(("Keep current password", "Keep my password", "Verify now", "Update password")))
    if pretext == "shared_document":
        doc = c.pick(("Q{q} Budget Review.xlsx", "Signed Agreement.pdf", "Payment Schedule {y}.pdf",
                      "Staff Bonus Allocation.xlsx", "Revised Proposal.docx", "Remittance Copy.pdf"),
                     q=c.rng.randint(1, 4), y=c.when.year)
        return (c.pick(("{n} shared \"{d}\" with you", "Document shared with you: {d}", "New file in your shared "
                        "folder", "You have a new secure document", "Review requested: {d}"),
                       n=person_name(c.rng), d=doc),
                c.pick(("A document has been shared with you through {b}.", "You have received a secure file "
                        "({d}).", "{d} is waiting for your review."), b=brand, d=doc),
                c.pick(("Sign in with your work email to view the document", "Verify your email account to open "
                        "the shared file", "Enter your {b} password to access the document",
                        "Log in to confirm your identity and view the file"), b=brand),
                c.pick(("Open document", "View shared file", "Review document", "Open in {b}"), b=brand))
    if pretext == "mailbox_quota":
        return (c.pick(("Mailbox storage full", "Your mailbox has exceeded its quota", "Incoming mail on hold",
                        "Action needed: mailbox storage limit")),
                c.pick(("Your mailbox {m} has reached {p}% of its storage limit.", "{n} incoming messages are "
                        "being held because your mailbox is full."), m=mailbox, p=c.rng.randint(96, 99),
                       n=c.rng.randint(4, 37)),
                c.pick(("Sign in to release your pending messages", "Validate your account to increase your "
                        "storage", "Log in with your email password to restore delivery",
                        "Confirm your account details to upgrade your quota")),
                c.pick(("Release messages", "Increase storage", "Restore delivery", "Validate account")))
    if pretext == "account_locked":
        return (c.pick(("Unusual sign-in activity", "Your account has been temporarily locked", "Security alert "
                        "for {m}", "Verify your account"), m=mailbox),
                c.pick(("We detected a sign-in attempt from an unrecognized device in {city}.", "Your {b} account "
                        "was locked after several failed sign-in attempts.", "Suspicious activity was detected "
                        "on your account."), city=c.pick(("Lagos", "Minsk", "Jakarta", "São Paulo", "Hanoi")), b=brand),
                c.pick(("Verify your identity to unlock your account", "Sign in now to confirm it was you",
                        "Please re-enter your password to restore access", "Confirm your login details to "
                        "secure your account")),
                c.pick(("Unlock account", "Secure my account", "Verify identity", "Review activity")))
    if pretext == "hr_policy":
        return (c.pick(("Updated employee handbook: acknowledgement required", "Annual benefits confirmation",
                        "Salary adjustment letter for {y}", "HR: policy acknowledgement due"), y=c.when.year),
                c.pick(("Human Resources has published the revised handbook for {y}.", "Your {y} salary "
                        "adjustment letter is available.", "All staff must acknowledge the updated "
                        "remote-work policy."), y=c.when.year),
                c.pick(("Sign in with your employee account to acknowledge it", "Log in to the HR portal with "
                        "your network credentials", "Verify your account to view your letter")),
                c.pick(("Acknowledge policy", "View letter", "Open HR portal")))
    return (c.pick(("New voicemail from {p}", "Missed call and voicemail ({s} sec)", "Voice message received"),
                   p=f"+1 ({c.rng.randint(201, 989)}) ***-**{c.rng.randint(10, 99)}", s=c.rng.randint(18, 95)),
            c.pick(("You received a new voice message at {t}.", "A caller left you a voicemail."),
                   t=c.when.strftime("%H:%M")),
            c.pick(("Sign in with your {b} account to listen to the message", "Verify your mailbox to play the "
                    "recording", "Log in to access your voice message"), b=brand),
            c.pick(("Play voicemail", "Listen now", "Open message")))


def _urgency_phish(ctx: Ctx) -> str:
    return ctx.pick((
        "Failure to do so within 24 hours will result in permanent suspension of your account",
        "Your access will be disabled at 5 PM today if no action is taken",
        "This must be completed before the end of the day",
        "Accounts not verified within 48 hours will be deactivated",
        "If you do not respond today your messages will be deleted",
        "Please complete this immediately to avoid interruption of service",
        "You have {h} hours left before your access is removed",
        "This request expires at midnight tonight",
    ), h=ctx.rng.randint(2, 24))


def _brand_footer(ctx: Ctx, brand: str) -> str | None:
    if ctx.rng.random() < 0.5:
        return None
    return ctx.pick(("This message was sent to {m}. {b} respects your privacy. Unsubscribe | Privacy Statement",
                     "© {y} {b}. All rights reserved.", "You are receiving this email because you have an account "
                     "with {b}.", "Please do not reply to this automated message."),
                    m=ctx.recipient.email, b=brand, y=ctx.when.year)


# --------------------------------------------------------------------------------------------------
# Phishing, in distribution
# --------------------------------------------------------------------------------------------------
def lookalike_credential(ctx: Ctx) -> Draft:
    """A sign-in page on a domain that imitates the organisation's or a service's."""
    rng, org = ctx.rng, ctx.org
    pretext = rng.choice(_PRETEXTS)
    imitate_org = rng.random() < 0.5
    brand = org.name if imitate_org else _sso(ctx)
    genuine = org.domain if imitate_org else BRAND[brand].domains[0]
    fake = lookalike(rng, genuine)
    subject, opening, cred, button = _credential_pretext(ctx, pretext, brand)
    href = f"https://{rng.choice(('', 'login.', 'secure.', 'portal.', 'sso.'))}{fake}/" + rng.choice(
        ("login", "auth/signin", "verify", "sso/session", "account/confirm", "owa/auth.html")) + \
        f"?{rng.choice(('u', 'id', 'session', 'ref'))}={rng.getrandbits(48):x}"
    body = Body()
    body.para(greeting(ctx))
    body.para(opening, span("credential_request", cred))
    if rng.random() < 0.3:  # a visible URL of the genuine service over the fake one
        shown = f"https://{'login.microsoftonline.com' if brand == 'Microsoft' else 'login.' + genuine}"
        body.link(shown, href)
        body.plant("link_text_mismatch", href)
    else:
        body.link(button, href)
    body.plant("lookalike_domain", href)
    body.para(span("urgency_pressure", _urgency_phish(ctx)) if rng.random() < 0.8 else None)
    # The imitated name is always written out: a look-alike imitates what the email names.
    body.para(ctx.pick(("Thank you,\n{b} IT Service Desk", "Regards,\n{b} Support Team", "{b} Account Team",
                        "Sincerely,\nThe {b} Security Team"), b=brand))
    body.para(_brand_footer(ctx, brand))
    r = rng.random()
    if r < 0.45:  # sent from the look-alike itself
        sender_domain, name = fake, ctx.pick(("{b} IT Service Desk", "{b} Support", "IT Helpdesk", "{b} Security"),
                                             b=brand)
        sender = (name, f"{rng.choice(('noreply', 'it-support', 'helpdesk', 'security', 'admin'))}@{sender_domain}")
        body.plant("lookalike_domain", sender[1])
    else:  # from a compromised small business, under the brand's name
        sender_domain = small_business_domain(rng)
        sender = (ctx.pick(("{b} Account Team", "{b} Notifications", "{b} 365", "{b} Security"), b=brand),
                  f"{rng.choice(('info', 'office', 'admin', 'accounts', 'mail'))}@{sender_domain}")
        body.plant("display_name_spoof", mime.address_text(sender))
    auth = rng.choices(("pass", "none"), (0.8, 0.2))[0]
    return finish(ctx, body, family="lookalike_credential", label=P, difficulty="easy", lure=pretext,
                  sender=sender, subject=subject, auth=auth, parts=rng.choice(("alternative", "html")),
                  urgent=True, bulk=rng.random() < 0.3)


def free_hosting_credential(ctx: Ctx) -> Draft:
    """A sign-in page on free hosting or a site builder, sent from a compromised or spoofed account."""
    rng, org = ctx.rng, ctx.org
    pretext = rng.choice(_PRETEXTS[:5])
    brand = rng.choice((org.name, _sso(ctx)))
    subject, opening, cred, button = _credential_pretext(ctx, pretext, brand)
    key = rng.choice(("signin", "login", "verify", "account", "auth", "password-reset"))
    host = rng.choice(FREE_HOSTING).format(slug=slug(rng, org.short, rng.choice(("docs", "portal", "secure", "hr",
                                                                                 "files", "mail"))),
                                           user=f"{org.short}{rng.randint(10, 999)}")
    href = f"https://{host}/{key}" + rng.choice(("", ".html", "/index.html", f"?id={rng.getrandbits(32):x}"))
    body = Body()
    body.para(greeting(ctx))
    body.para(opening, span("credential_request", cred))
    body.link(button, href)
    body.plant("free_hosting_credential_page", href)
    if rng.random() < 0.6:
        body.para(span("urgency_pressure", _urgency_phish(ctx)))
    if rng.random() < 0.5:  # a spoofed colleague or IT address of the organisation itself: authentication fails
        staff = rng.choice(org.staff)
        sender, auth = person_pair(staff) if rng.random() < 0.5 else ("IT Service Desk", f"it@{org.domain}"), "spoof"
        body.para(signoff(ctx, sender[0], company=org.name))
        ret = f"{rng.choice(('bounce', 'mailer', 'postmaster'))}@{small_business_domain(rng)}"
    else:  # a real account at a small business, taken over: everything passes
        name = person_name(rng)
        domain = small_business_domain(rng)
        sender, auth, ret = (name, f"{local_part(name, rng.randrange(4))}@{domain}"), "pass", None
        body.para(signoff(ctx, name, ctx.pick(("Office Manager", "Accounts", "Owner", "Bookkeeper")),
                          domain.split(".")[0].title()))
    return finish(ctx, body, family="free_hosting_credential", label=P, difficulty="easy", lure=pretext,
                  sender=sender, subject=subject, auth=auth, return_path=ret,
                  parts=rng.choice(("alternative", "html")), urgent=True)


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
    amt = amount(rng, 9000, 185000)
    body.para(greeting(ctx), ctx.pick(("Are you at your desk?", "Are you available?", "I need a favour.",
                                       "Something time-sensitive has come up.", "")))
    body.para(span("payment_change_request", ctx.pick((
        "I need you to process a wire transfer of {a} to a new supplier today",
        "Please send a payment of {a} by wire to the account below before the cut-off",
        "I need an outgoing transfer of {a} arranged this morning for the {p} acquisition",
        "Can you wire {a} to our legal counsel for the escrow deposit",
        "Please initiate a same-day transfer of {a} to the beneficiary I will send you"),
        a=amt, p=rng.choice(org.partners).name)),
        ctx.pick(("The bank details will follow in my next email.", "I will send the account details once you "
                  "confirm.", "Let me know when it is done and send me the confirmation.", "")))
    body.para(span("urgency_pressure", ctx.pick((
        "Keep this between us until the announcement on Monday",
        "This is confidential and must not be discussed with anyone else in the office",
        "It has to go out within the hour",
        "I am in meetings all afternoon so handle this quickly and discreetly",
        "Time is critical and I cannot take calls right now",
        "Do not mention this to the rest of the team yet"))))
    body.para(ctx.pick(("Thanks,\n{f}", "{f}", "Sent from my iPhone", "Regards,\n{n}\nSent from my mobile",
                        "{f}\n\nSent from Outlook for iOS"), f=boss.first, n=boss.name))
    return finish(ctx, body, family="ceo_wire", label=P, difficulty="hard", lure="wire_transfer", sender=sender,
                  subject=ctx.pick(("Quick request", "Confidential", "Are you available?", "Urgent payment",
                                    "Re: Wire transfer", "Request", "Need your help", "Payment today")),
                  auth=auth, reply_to=reply_to, parts=rng.choice(("plain", "plain", "alternative")), urgent=True)


def gift_card(ctx: Ctx) -> Draft:
    """A manager asks for gift cards and their codes, from a free-mail address under the manager's name."""
    rng = ctx.rng
    sender, boss = _exec_sender(ctx, ROLES_OF_AUTHORITY)
    body = Body()
    body.plant("display_name_spoof", mime.address_text(sender))
    n, value = rng.choice((3, 4, 5, 6, 8, 10)), rng.choice((50, 100, 200, 250, 500))
    kind = rng.choice(("Apple", "Google Play", "Amazon", "Visa", "Steam", "Target"))
    body.para(greeting(ctx), ctx.pick(("I need you to handle something for me.", "Are you free at the moment?",
                                       "Quick favour please.", "")))
    body.para(span("gift_card_request", ctx.pick((
        "Please buy {n} {k} gift cards of ${v} each for a client appreciation gift",
        "I need {n} x ${v} {k} gift cards for the staff recognition programme",
        "Can you pick up {n} {k} gift cards at ${v} each from the nearest store",
        "Get {n} {k} cards worth ${v} each and I will reimburse you later"), n=n, k=kind, v=value)),
        span("gift_card_request", ctx.pick((
            "Scratch the back and send me photos of the codes",
            "Email me the card numbers and PINs as soon as you have them",
            "Send the redemption codes to me here")), "."))
    body.para(span("urgency_pressure", ctx.pick((
        "I need them within the hour", "It is a surprise so keep it confidential",
        "I am tied up in a board meeting and cannot talk", "Please do this right away"))))
    body.para(ctx.pick(("Thanks,\n{f}", "{f}", "Sent from my iPhone", "Best,\n{n}"), f=boss.first, n=boss.name))
    return finish(ctx, body, family="gift_card", label=P, difficulty="hard", lure=f"gift_card_{kind.lower()}",
                  sender=sender, subject=ctx.pick(("Quick task", "Are you available", "Favour", "Gift cards",
                                                   "Request", "Urgent")),
                  parts=rng.choice(("plain", "plain", "alternative")), urgent=True)


def payroll_change(ctx: Ctx) -> Draft:
    """An employee's name on a free-mail address asks payroll to send the salary to a new account."""
    rng, org = ctx.rng, ctx.org
    ctx.recipient = rng.choice(org.by_role("Payroll Administrator", "HR Director") or [ctx.recipient])
    employee = rng.choice([p for p in org.staff if p is not ctx.recipient])
    sender = (employee.name, free_mail_address(rng, employee.name))
    body = Body()
    body.plant("display_name_spoof", mime.address_text(sender))
    body.para(greeting(ctx))
    body.para(ctx.pick(("I recently switched banks.", "I opened a new account with {b}.", "My old account is being "
                        "closed.", ""), b=rng.choice(("Chime", "Ally", "a credit union", "Revolut"))),
              span("payment_change_request", ctx.pick((
                  "I need to update my direct deposit information before the next payroll",
                  "Please change the bank account my salary is paid into",
                  "Could you update my payroll banking details to my new account",
                  "I would like my pay sent to a new account starting this cycle"))))
    body.para(ctx.pick(("What details do you need from me?", "Can you send me the form, or should I just reply with "
                        "the routing and account numbers?", "I can send the new account and routing number now.")),
              span("urgency_pressure", ctx.pick(("It needs to be in place before {d}",
                                                 "Please make the change today so it applies to this pay run",
                                                 "I would appreciate it being done as soon as possible"),
                                                d=day_text(ctx.when, 4)),
                   ".") if rng.random() < 0.6 else None)
    body.para(ctx.pick(("Thanks,\n{f}", "Thank you,\n{n}", "{f}", "Best,\n{n}\nSent from my phone"),
                       f=employee.first, n=employee.name))
    return finish(ctx, body, family="payroll_change", label=P, difficulty="hard", lure="direct_deposit",
                  sender=sender, subject=ctx.pick(("Direct deposit change", "Payroll update", "Change of bank details",
                                                   "Update my account", "Quick question about payroll")),
                  parts=rng.choice(("plain", "alternative")))


def vendor_bank_change(ctx: Ctx) -> Draft:
    """A partner's contact, on a look-alike of the partner's domain, announces new bank details."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = partner.contacts[0]
    fake = lookalike(rng, partner.domain)
    sender = (contact.name, f"{contact.email.split('@')[0]}@{fake}")
    reply = (contact.name, rng.choice((free_mail_address(rng, contact.name),
                                       f"accounts@{lookalike(rng, partner.domain)}")))
    ctx.recipient = rng.choice(org.by_role("Accounts Payable Specialist", "Financial Controller") or [ctx.recipient])
    body = Body()
    body.plant("lookalike_domain", sender[1])
    if reply[1].split("@")[1] != fake:
        body.plant("reply_to_mismatch", reply[1])
    inv = ref(rng, rng.choice(("INV-", "", "SI")), 5)
    body.para(greeting(ctx))
    body.para(ctx.pick(("Following our recent audit, we have changed our banking provider.", "Please note that our "
                        "company bank account has changed.", "We are writing to inform you of a change to our "
                        "remittance details.")),
              span("payment_change_request", ctx.pick((
                  "Please update our bank details in your system and make all future payments to the new account",
                  "Kindly remit invoice {i} and all open invoices to our new account",
                  "Please change the account on file before paying the outstanding balance",
                  "Payment for invoice {i} should now be sent to the account in the attached letter"), i=inv)))
    body.para(span("urgency_pressure", ctx.pick((
        "Payments made to the old account after {d} will be returned and may incur late fees",
        "Please confirm the update today as the old account will be closed this week",
        "We need this processed urgently to avoid delays on your next shipment"), d=day_text(ctx.when, 2))),
        ctx.pick(("Please confirm by email once done.", "Reply to this email with the remittance confirmation.",
                  "Do not call our old number as the line is being migrated.")))
    body.para(signoff(ctx, contact.name, contact.role, partner.name))
    letter = mime.attachment(rng.choice(("Updated_Bank_Details.pdf", "Bank_Change_Letter.pdf", f"Invoice_{inv}.pdf")),
                             mime.pdf(rng, [partner.name, "Change of bank details", f"Invoice {inv}"]))
    return finish(ctx, body, family="vendor_bank_change", label=P, difficulty="hard", lure="bank_details_change",
                  sender=sender, subject=ctx.pick(("Updated banking details", "Change of bank account - {p}",
                                                   "Re: Invoice {i}", "Important: new remittance information",
                                                   "Outstanding invoices and new account"), p=partner.name, i=inv),
                  reply_to=reply, attachments=[letter] if rng.random() < 0.6 else None, urgent=True)


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
    body.para(ctx.pick({"remittance": ("Please find attached the remittance advice for payment {n}.",
                                       "Your payment of {a} has been processed; the remittance is attached."),
                        "voicemail": ("You have a new voice message ({s} seconds).",
                                      "A voicemail was left for you at {t}."),
                        "fax": ("You have received a {p}-page fax.", "A new fax document is attached."),
                        "purchase_order": ("Please see the attached purchase order {n}.",
                                           "Our purchase order {n} is attached for your confirmation."),
                        "payment": ("Attached is confirmation of the payment of {a}.",
                                    "The transfer of {a} has been completed, see attached.")}[kind],
                       n=n, a=amount(rng, 900, 60000), s=rng.randint(12, 90), t=ctx.when.strftime("%H:%M"),
                       p=rng.randint(2, 9)),
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
                  subject=ctx.pick({"remittance": ("Remittance advice {n}", "Payment remittance - {n}"),
                                    "voicemail": ("Voicemail received", "New voice message"),
                                    "fax": ("Fax received: {n}", "eFax message"),
                                    "purchase_order": ("PO {n}", "New purchase order"),
                                    "payment": ("Payment confirmation {n}", "Transfer completed")}[kind], n=n),
                  auth=auth, return_path=ret, attachments=[att])


def qr_code(ctx: Ctx) -> Draft:
    """An MFA re-enrolment notice whose link is a QR code in an image, out of reach of link scanners."""
    rng, org = ctx.rng, ctx.org
    brand = rng.choice((org.name, _sso(ctx)))
    body = Body()
    r = rng.random()
    if r < 0.4:
        fake = lookalike(rng, org.domain)
        sender = (ctx.pick(("IT Security", "{b} IT", "Security Team", "MFA Admin"), b=brand), f"security@{fake}")
        body.plant("lookalike_domain", sender[1])
    elif r < 0.75:
        sender = (ctx.pick(("{o} IT Security", "{o} Helpdesk", "{o} MFA Service"), o=org.name),
                  f"{rng.choice(('alerts', 'notice', 'admin'))}@{small_business_domain(rng)}")
        body.plant("display_name_spoof", mime.address_text(sender))
    else:
        sender = (ctx.pick(("IT Helpdesk", "IT Support", "Security Administrator")),
                  f"{rng.choice(('it.helpdesk', 'support.team', 'mfa.admin'))}{rng.randint(1, 99)}@"
                  f"{rng.choice(FREE_MAIL)}")
        body.plant("display_name_spoof", mime.address_text(sender))
    body.para(greeting(ctx))
    body.para(ctx.pick(("Your multi-factor authentication registration has expired.", "As part of our security "
                        "upgrade, all staff must re-enrol their authenticator app.", "Your {b} MFA settings need to "
                        "be updated."), b=brand),
              span("qr_code_lure", ctx.pick((
                  "Scan the QR code below with your phone camera to re-register your device",
                  "Use your mobile phone to scan the attached QR code and complete the verification",
                  "Scan the code with your phone and sign in to keep your access",
                  "Please scan the QR code to confirm your account"))))
    body.para(span("urgency_pressure", _urgency_phish(ctx)) if rng.random() < 0.75 else None)
    body.para(ctx.pick(("IT Security Team", "Thank you,\nIT Support", "{b} Identity Services"), b=brand))
    img = mime.attachment(rng.choice(("MFA_Setup.png", "QR_Code.png", "Authenticator.png", "secure_scan.png")),
                          mime.qr_png(rng))
    return finish(ctx, body, family="qr_code", label=P, difficulty="hard", lure="mfa_reenrolment", sender=sender,
                  subject=ctx.pick(("Action required: MFA re-enrolment", "Multi-factor authentication update",
                                    "Your 2FA setup expires today", "Security update required")),
                  attachments=[img], urgent=True, auth=rng.choice(("pass", "pass", "none")))


def shortener_delivery(ctx: Ctx) -> Draft:
    """A delivery notice whose link goes through a shortener or to a bare IP address."""
    rng = ctx.rng
    carrier = rng.choice(CARRIERS)
    body = Body()
    if rng.random() < 0.5:
        code = "".join(rng.choice("abcdefghijkmnpqrstuvwxyzABCDEFGH23456789") for _ in range(7))
        href = f"https://{rng.choice(SHORTENERS)}/{code}"
    else:
        href = f"http://{mime.doc_ip(rng)}/{rng.choice(('track', 'redelivery', 'parcel', 'pay'))}?id={ref(rng)}"
    body.plant("ip_or_shortener_url", href)
    tracking = ref(rng, rng.choice(("1Z", "JD", "7", "")), 12)
    if rng.random() < 0.5:
        domain = lookalike(rng, carrier.domains[0])
        body.plant("lookalike_domain", f"support@{domain}")
    else:
        domain = small_business_domain(rng)
    sender = (ctx.pick(("{c} Express", "{c} Delivery", "{c}", "{c} Customer Service"), c=carrier.name),
              f"support@{domain}")
    if domain.split(".")[0] != carrier.domains[0].split(".")[0]:
        body.plant("display_name_spoof", mime.address_text(sender))
    fee = f"${rng.choice((1, 2, 3))}.{rng.randint(10, 99)}"
    body.para(ctx.pick(("Dear customer,", "Hello,", greeting(ctx))))
    body.para(ctx.pick(("Your package {t} could not be delivered due to an incomplete address.",
                        "We attempted to deliver your parcel {t} today but no one was available.",
                        "Shipment {t} is on hold at our depot."), t=tracking),
              span("payment_change_request", ctx.pick(("Please pay the redelivery fee of {f} to reschedule",
                                                       "A customs charge of {f} must be paid before release",
                                                       "Confirm your address and pay the {f} handling fee"), f=fee))
              if rng.random() < 0.6 else None)
    body.link(ctx.pick(("Reschedule delivery", "Track your parcel", "Confirm address", "Pay now")), href)
    body.para(span("urgency_pressure", ctx.pick(("Parcels not claimed within 48 hours will be returned to the "
                                                 "sender", "Your package will be returned today if no action is "
                                                 "taken", "The item will be disposed of after {d}"),
                                                d=day_text(ctx.when, 3))))
    body.para(_brand_footer(ctx, carrier.name))
    return finish(ctx, body, family="shortener_delivery", label=P, difficulty="easy", lure=f"{carrier.name}_delivery",
                  sender=sender, subject=ctx.pick(("Delivery failed: action required", "Your parcel is on hold",
                                                   "{c}: delivery attempt unsuccessful", "Shipment {t} update"),
                                                  c=carrier.name, t=tracking),
                  parts=rng.choice(("alternative", "html")), bulk=rng.random() < 0.4,
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
    pretext = rng.choice(_PRETEXTS[:4])
    subject, opening, cred, button = _credential_pretext(ctx, pretext, brand)
    href = f"https://{puny}/{rng.choice(('login', 'signin', 'account/verify'))}"
    sender = (ctx.pick(("{b}", "{b} Support", "{b} Accounts"), b=brand),
              f"{rng.choice(('no-reply', 'support'))}@{puny}")
    body = Body()
    body.plant("lookalike_domain", sender[1])
    body.para(greeting(ctx))
    body.para(opening, span("credential_request", cred))
    body.link(button, href)
    body.para(span("urgency_pressure", _urgency_phish(ctx)) if rng.random() < 0.6 else None)
    body.para(_brand_footer(ctx, brand))
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
    Family("oauth_consent", P, oauth_consent, 0.14, ood=True),
    Family("reply_chain_hijack", P, reply_chain_hijack, 0.13, ood=True),
    Family("idn_homograph", P, idn_homograph, 0.12, ood=True),
    *(Family(name, "Legitimate", build, weight, ood=ood) for name, build, weight, ood in legit.ROWS),
)
