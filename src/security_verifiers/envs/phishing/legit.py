"""The legitimate families of the E4 generator: the mail that looks like phishing and is not.

A password reset the user asked for speaks of passwords and deadlines; a partner's reminder speaks of overdue
invoices; a newsletter's links say one address and go to a tracker; a mailing list sets its own Reply-To and, by
rewriting the message, breaks its DKIM signature. Each such trait is planted as evidence where it is really in the
text or the headers: the evidence describes the message, the label is separate.
"""

from __future__ import annotations

import datetime as dt

from security_verifiers.envs.phishing import mime
from security_verifiers.envs.phishing.text import (
    BANK_CHANGE,
    QR_ENROLMENT,
    REMITTANCE,
    REQUESTS,
    SHIPPING_BUTTONS,
    SHIPPING_FEES,
    SHIPPING_OPENINGS,
    SHIPPING_PATHS,
    SHIPPING_SUBJECTS,
    SHIPPING_URGENCY,
    Body,
    Ctx,
    Draft,
    amount,
    ask_span,
    day_text,
    disclaimer,
    finish,
    footer,
    greeting,
    host_on,
    notice,
    page_url,
    person_pair,
    ref,
    request_signoff,
    signoff,
    span,
    write_notice,
)
from security_verifiers.envs.phishing.world import (
    BRAND,
    CARRIERS,
    ESP_TRACKERS,
    FREE_MAIL,
    ROLES_OF_AUTHORITY,
    SAAS,
    Brand,
    free_mail_address,
    person_name,
    small_business_domain,
)

L = "Legitimate"


def _sso_host(ctx: Ctx) -> str:
    return {"microsoft": "login.microsoftonline.com", "google": "accounts.google.com",
            "okta": f"{ctx.org.short}.okta.com"}[ctx.org.sso]


def password_reset(ctx: Ctx) -> Draft:
    """A reset the user asked for: credential words and a deadline, on the genuine service's domain."""
    rng = ctx.rng
    brand = rng.choice(SAAS)
    host = _sso_host(ctx) if brand is _idp(ctx) and rng.random() < 0.5 else host_on(rng, brand.domains[0])
    n = notice(ctx, "password_reset", brand.name)
    body = Body()
    write_notice(ctx, body, n, page_url(rng, host), action=0.9, urgency=0.6, reassure=0.8, brand=brand.name)
    return finish(ctx, body, family="password_reset", label=L, difficulty="hard", lure=f"{brand.name}_reset",
                  sender=(brand.name, brand.sender), subject=n.subject, bulk=rng.random() < 0.3,
                  urgent=rng.random() < 0.5)


def invoice_reminder(ctx: Ctx) -> Draft:
    """A real partner chases an overdue invoice, or sends a remittance or an order, from its real domain: payment
    words, pressure, a PDF."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = partner.contacts[0]
    ctx.recipient = rng.choice(org.by_role("Accounts Payable Specialist", "Financial Controller", "Office Manager")
                               or [ctx.recipient])
    inv, amt, days = ref(rng, rng.choice(("INV-", "", "SI")), 5), amount(rng, 400, 48000), rng.randint(7, 60)
    body = Body()
    body.para(greeting(ctx))
    if rng.random() < 0.35:  # a remittance advice or a purchase order
        n = ref(rng, "", 6)
        body.para(ctx.pick(REMITTANCE["opening"], n=n, a=amt), ctx.pick(REMITTANCE["closing"]) or None)
        body.para(signoff(ctx, contact.name, contact.role, partner.name))
        body.para(disclaimer(ctx, partner.name))
        att = mime.attachment(f"{rng.choice(('Remittance_Advice_', 'PO_', 'Payment_Confirmation_'))}{n}.pdf",
                              mime.pdf(rng, [partner.name, f"Remittance {n}", amt]))
        return finish(ctx, body, family="invoice_reminder", label=L, difficulty="hard", lure="remittance",
                      sender=person_pair(contact), subject=ctx.pick(REMITTANCE["subject"], n=n, p=partner.name),
                      attachments=[att])
    body.para(ctx.pick(("Our records show that invoice {i} for {a} is now {d} days overdue.",
                        "This is a friendly reminder that invoice {i} ({a}) was due on {due}.",
                        "We have not yet received payment for invoice {i} for {a}."),
                       i=inv, a=amt, d=days, due=day_text(ctx.when, -days)),
              span("payment_change_request", ctx.pick((
                  "Please arrange payment to the account on file at your earliest convenience",
                  "We would be grateful if you could process the payment using the usual bank details",
                  "Kindly settle the outstanding balance of {a}",
                  "Please send payment by the usual method"), a=amt)))
    if rng.random() < 0.6:
        body.para(span("urgency_pressure", ctx.pick((
            "We would appreciate settlement by {d} to avoid a hold on your account",
            "Please treat this as urgent as the balance is now more than {n} days past due",
            "Payment is needed this week to keep your account in good standing"),
            d=day_text(ctx.when, 5), n=days)))
    body.para(ctx.pick(("A copy of the invoice is attached for your reference.", "If payment has already been sent, "
                        "please disregard this reminder.", "Let me know if you need a copy of the statement.")))
    if rng.random() < 0.35:
        body.link("View invoice online", f"https://billing.{partner.domain}/invoices/{inv}")
    body.para(signoff(ctx, contact.name, contact.role, partner.name))
    body.para(disclaimer(ctx, partner.name))
    att = mime.attachment(f"{rng.choice(('Invoice_', 'INV_', 'Statement_'))}{inv}.pdf",
                          mime.pdf(rng, [partner.name, f"Invoice {inv}", f"Amount due {amt}"]))
    return finish(ctx, body, family="invoice_reminder", label=L, difficulty="hard", lure="overdue_invoice",
                  sender=person_pair(contact), subject=ctx.pick((
                      "Overdue invoice {i}", "Payment reminder: invoice {i}", "Re: Invoice {i}",
                      "Outstanding balance - {o}", "Second reminder: {i} overdue"), i=inv, o=org.name),
                  attachments=[att] if rng.random() < 0.7 else None, urgent=True)


def newsletter(ctx: Ctx) -> Draft:
    """A newsletter whose links show the sender's web address and go through its mail provider's tracker."""
    rng, org = ctx.rng, ctx.org
    r = rng.random()
    if r < 0.5:
        partner = rng.choice(org.partners)
        name, domain = partner.name, partner.domain
    elif r < 0.8:
        domain = small_business_domain(rng)
        name = domain.split(".")[0].replace("-", " ").title()
    else:
        brand = rng.choice(SAAS)
        name, domain = brand.name, brand.domains[0]
    tracker = rng.choice(ESP_TRACKERS).format(org=domain.split(".")[0].replace("-", ""), n=rng.randint(2, 20))
    body = Body()
    body.para(ctx.pick(("{n} News | {m} {y}", "The {n} Update", "This month at {n}", "{n} Insights"), n=name,
                       m=ctx.when.strftime("%B"), y=ctx.when.year))
    topics = rng.sample(("Our spring product range is here", "Five ways to cut energy costs this quarter",
                         "Meet the team behind our new warehouse", "Webinar: planning your {y} budget",
                         "Customer story: how a regional supplier doubled throughput", "Holiday opening hours",
                         "New invoicing portal now live", "Security tips: spotting fake invoices",
                         "Save the date for our annual conference", "Price changes from {m}"), 3)
    first_tracked = None
    for topic in topics:
        page = topic.lower().split(":")[0].replace(" ", "-")[:28].strip("-")
        shown = f"{rng.choice(('www.', ''))}{domain}/{rng.choice(('blog', 'news', 'events'))}/{page}"
        href = f"https://{tracker}?u={rng.getrandbits(64):x}&id={rng.getrandbits(32):x}"
        body.para(topic.format(y=ctx.when.year, m=day_text(ctx.when, 30).split(" ")[-1]) + ".")
        body.link(shown, href)
        first_tracked = first_tracked or href
    body.plant("link_text_mismatch", first_tracked or "")
    body.para(ctx.pick(("You are receiving this email because you subscribed to updates from {n}.",
                        "You signed up for {n} news at {d}.", "Copyright {y} {n}, all rights reserved."),
                       n=name, d=domain, y=ctx.when.year),
              ctx.pick(("Unsubscribe or update your preferences at any time.", "Manage preferences | Unsubscribe",
                        "")))
    esp = tracker.split("/")[0].split(".", 1)[-1]
    return finish(ctx, body, family="newsletter", label=L, difficulty="hard", lure="esp_tracking",
                  sender=(name, f"{rng.choice(('news', 'newsletter', 'hello', 'updates', 'marketing'))}@{domain}"),
                  subject=ctx.pick(("{t}", "{n}: {t}", "Your {m} update from {n}"), t=topics[0].format(
                      y=ctx.when.year, m="next month"), n=name, m=ctx.when.strftime("%B")),
                  return_path=f"bounce-{rng.getrandbits(32):x}@{esp}", parts=rng.choice(("alternative", "html")),
                  bulk=True)


def internal_announcement(ctx: Ctx) -> Draft:
    """A colleague writes to all staff: maintenance, benefits, office news; sometimes a macro workbook."""
    rng, org = ctx.rng, ctx.org
    author = rng.choice(org.staff)
    topic = rng.choice(("maintenance", "benefits", "office", "policy", "budget"))
    body = Body()
    body.para(ctx.pick(("Hi all,", "Hello everyone,", "Dear colleagues,", "Team,")))
    attachments = []
    if topic == "maintenance":
        body.para(ctx.pick(("We will upgrade the email servers on {d} between 8 PM and 11 PM.",
                            "The VPN gateway will be replaced this weekend."), d=day_text(ctx.when, 3)),
                  span("credential_request", ctx.pick((
                      "After the upgrade you will be asked to sign in again on your laptop and phone",
                      "You may need to re-enter your password in Outlook on Monday",
                      "Please sign in to the new VPN client with your usual network password"))))
    elif topic == "benefits":
        body.para(ctx.pick(("Open enrollment for {y} benefits is now open in the HR portal.",
                            "The new pension provider details are on the intranet."), y=ctx.when.year + 1),
                  span("urgency_pressure", ctx.pick(("Enrollment closes this Friday and cannot be extended",
                                                     "Please make your choices by {d}",
                                                     "Late elections cannot be accepted"),
                                                    d=day_text(ctx.when, 6))) if rng.random() < 0.7 else None)
        body.link("HR portal", f"https://hr.{org.domain}/benefits")
    elif topic == "office":
        body.para(ctx.pick(("The office will be closed on {d} for the floor refurbishment.",
                            "Coffee and cake in the kitchen at 3 PM to welcome our new starters.",
                            "Parking permits for the new car park are ready for collection at reception."),
                           d=day_text(ctx.when, 10)))
    elif topic == "policy":
        body.para(ctx.pick(("The updated travel and expenses policy is attached.",
                            "We have refreshed the information security policy."),),
                  ctx.pick(("Reminder: we will never ask for your password by email.",
                            "Report suspicious emails with the Report Phishing button.", "")))
        attachments.append(mime.attachment("Policy_Update.pdf", mime.pdf(rng, [org.name, "Policy update"])))
    else:
        body.para(ctx.pick(("The budget template for next year is attached; the macros fill in the totals.",
                            "Please use the attached workbook for your department forecast.")),
                  span("urgency_pressure", "Submissions are due by the end of this week") if rng.random() < 0.5
                  else None)
        filename = rng.choice(("Budget_Template_FY{y}.xlsm", "Forecast_{y}.xlsm")).format(y=ctx.when.year % 100 + 1)
        attachments.append(mime.attachment(filename, mime.office_package(rng, "xlsm", "Budget", macros=True)))
        body.plant("risky_attachment", filename)
    body.para(signoff(ctx, author.name, author.role, org.name, phone=False))
    everyone = ("All Staff", f"allstaff@{org.domain}") if rng.random() < 0.6 else (ctx.recipient.name,
                                                                                   ctx.recipient.email)
    return finish(ctx, body, family="internal_announcement", label=L, difficulty="easy", lure=topic,
                  sender=person_pair(author), to=[everyone], subject=ctx.pick({
                      "maintenance": ("Planned maintenance this weekend", "Email upgrade on {d}", "IT notice: VPN"),
                      "benefits": ("Open enrollment is open", "Benefits update", "Action needed: benefits choices"),
                      "office": ("Office closure on {d}", "Welcome our new starters", "Parking update"),
                      "policy": ("Updated policy", "Security reminder", "Travel policy refresh"),
                      "budget": ("Budget template", "Forecast submissions", "FY budget workbook")}[topic],
                      d=day_text(ctx.when, 3)), attachments=attachments,
                  auth=rng.choice(("pass", "pass", "none")))


def meeting_invite(ctx: Ctx) -> Draft:
    """A calendar invitation with an .ics attachment and a genuine meeting link."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners) if rng.random() < 0.5 else None
    organiser = partner.contacts[1] if partner else rng.choice(org.staff)
    start = (ctx.when + dt.timedelta(days=rng.randint(1, 14))).replace(hour=rng.randint(8, 16), minute=0, second=0)
    summary = ctx.pick(("Quarterly review", "Project kickoff", "Weekly sync", "Contract discussion",
                        "Budget planning", "Interview panel"))
    link = rng.choice((f"https://teams.microsoft.com/l/meetup-join/19%3ameeting_{rng.getrandbits(64):x}%40thread.v2/0",
                       f"https://zoom.us/j/{rng.randint(10**9, 10**10 - 1)}?pwd={rng.getrandbits(64):x}",
                       f"https://meet.google.com/{rng.getrandbits(24):x}"))
    body = Body()
    body.para(ctx.pick(("{o} has invited you to {s}.", "You have been invited to: {s}", "Invitation: {s}"),
                       o=organiser.name, s=summary),
              f"When: {start.strftime('%A %d %B %Y %H:%M')} UTC.")
    body.link("Join the meeting", link)
    body.para(ctx.pick(("Agenda to follow.", "Please accept or propose a new time.", "Looking forward to it.")))
    invite = mime.attachment("invite.ics", mime.ics(rng, summary, person_pair(organiser), ctx.recipient.email, start,
                                                    "Online meeting"))
    return finish(ctx, body, family="meeting_invite", label=L, difficulty="easy", lure="calendar_invite",
                  sender=person_pair(organiser), subject=f"Invitation: {summary} @ {start.strftime('%a %d %b %Y')}",
                  attachments=[invite])


def shipping_notification(ctx: Ctx) -> Draft:
    """A carrier's genuine notice with a tracking link on its own domain; sometimes duties to pay."""
    rng = ctx.rng
    carrier = rng.choice(CARRIERS)
    tracking = ref(rng, {"UPS": "1Z", "FedEx": "", "DHL": "JD"}[carrier.name], 12)
    body = Body()
    body.para(ctx.pick(("Hello,", "Dear customer,", greeting(ctx))))
    body.para(ctx.pick(SHIPPING_OPENINGS + ("Your shipment {t} is out for delivery today.",
                                            "Your package {t} was delivered at {h}.",
                                            "Your parcel {t} has been dispatched from {c}."),
                       t=tracking, h=ctx.when.strftime("%H:%M"), c=rng.choice(("Memphis", "Leipzig", "Louisville"))),
              span("payment_change_request", ctx.pick(SHIPPING_FEES, f=amount(rng, 4, 90)))
              if rng.random() < 0.2 else None)
    body.link(ctx.pick(SHIPPING_BUTTONS),
              f"https://{rng.choice(('www.', ''))}{carrier.domains[0]}/{rng.choice(SHIPPING_PATHS)}?id={tracking}")
    body.para(span("urgency_pressure", ctx.pick(SHIPPING_URGENCY, d=day_text(ctx.when, 3)))
              if rng.random() < 0.35 else None)
    body.para(footer(ctx, carrier.name) or ctx.pick(("Please do not reply to this email.",
                                                     "Delivery times are estimates.",
                                                     "Manage your delivery preferences in your {c} account."),
                                                    c=carrier.name))
    return finish(ctx, body, family="shipping_notification", label=L, difficulty="easy",
                  lure=f"{carrier.name}_tracking", sender=(carrier.name, carrier.sender),
                  subject=ctx.pick(SHIPPING_SUBJECTS, c=carrier.name, t=tracking), bulk=rng.random() < 0.7,
                  parts=rng.choice(("alternative", "html")))


def saas_signin_alert(ctx: Ctx) -> Draft:
    """A service's genuine security notice (new sign-in, one-time code, email check, lock-out): security words,
    sometimes a deadline, a link on its own domain."""
    rng = ctx.rng
    brand = rng.choice(SAAS)
    scenario = rng.choice(("signin_alert", "signin_alert", "mfa", "verify_email", "account_locked"))
    n = notice(ctx, scenario, brand.name)
    host = _sso_host(ctx) if brand is _idp(ctx) and rng.random() < 0.5 else host_on(rng, brand.domains[0])
    body = Body()
    write_notice(ctx, body, n, page_url(rng, host), action=0.7, urgency=0.4, reassure=0.7, brand=brand.name)
    return finish(ctx, body, family="saas_signin_alert", label=L, difficulty="hard",
                  lure=f"{brand.name}_{scenario}", sender=(brand.name, brand.sender), subject=n.subject,
                  bulk=rng.random() < 0.4, urgent=rng.random() < 0.3, parts=rng.choice(("alternative", "html",
                                                                                        "alternative", "plain")))


def _idp(ctx: Ctx) -> Brand:
    return BRAND[{"microsoft": "Microsoft", "google": "Google", "okta": "Okta"}[ctx.org.sso]]


def it_notice(ctx: Ctx) -> Draft:
    """The organisation's own IT (or its identity provider) about a password, mailbox, MFA, lock-out or
    voicemail: the pretexts of credential phishing, from the organisation's real domain, linking to its real
    sign-in host."""
    rng, org = ctx.rng, ctx.org
    scenario = rng.choice(("password_expiry", "password_expiry", "mailbox_quota", "mfa", "account_locked",
                           "voicemail"))
    own = rng.random() < 0.65 or scenario in ("mailbox_quota", "voicemail")
    n = notice(ctx, scenario, org.name if own else _idp(ctx).name)
    if own:
        sender = (ctx.pick(("{o} IT Service Desk", "IT Service Desk", "IT Support", "{o} IT", "Service Desk",
                            "Voice Mail", "{o} Helpdesk"), o=org.name),
                  f"{rng.choice(('it-support', 'servicedesk', 'helpdesk', 'noreply', 'it', 'no-reply'))}@{org.domain}")
    else:
        idp = _idp(ctx)
        sender = (idp.name, idp.sender)
    if scenario in ("password_expiry", "mfa", "account_locked") and rng.random() < 0.6:
        host = _sso_host(ctx)
    else:
        host = host_on(rng, org.domain)
    body = Body()
    if scenario == "mfa" and rng.random() < 0.4:  # enrolment shows a QR code for the authenticator app
        n.detail = QR_ENROLMENT[rng.randrange(len(QR_ENROLMENT))]
        body.plant("qr_code_lure", n.detail)
        n.detail += "."
    write_notice(ctx, body, n, page_url(rng, host), action=0.8, urgency=0.55, reassure=0.6,
                 brand=org.name if own else _idp(ctx).name)
    return finish(ctx, body, family="it_notice", label=L, difficulty="hard", lure=scenario, sender=sender,
                  subject=n.subject, auth=rng.choice(("pass", "pass", "pass", "none")), urgent=rng.random() < 0.5,
                  parts=rng.choice(("alternative", "html", "plain")))


def document_share(ctx: Ctx) -> Draft:
    """A genuine file-share notice from a storage service: a partner or a client shared a document."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = rng.choice(partner.contacts)
    who = contact.name
    service, name, address = rng.choice((("Google Drive", "Google", "drive-shares-noreply@google.com"),
                                         ("Dropbox", "Dropbox", "no-reply@dropbox.com")))
    n = notice(ctx, "shared_document", service, n=who)
    doc_id = f"{rng.getrandbits(120):x}"
    href = (f"https://docs.google.com/{rng.choice(('document', 'spreadsheets', 'presentation'))}/d/{doc_id}/edit"
            f"?usp=sharing" if name == "Google" else f"https://www.dropbox.com/scl/fi/{doc_id[:20]}/file?dl=0")
    body = Body()
    write_notice(ctx, body, n, href, action=0.35, urgency=0.3, reassure=0.6, brand=service)
    reply = None
    if rng.random() < 0.8:  # the service sets Reply-To to the person who shared: a genuine mismatch of domains
        reply = person_pair(contact)
        body.plant("reply_to_mismatch", contact.email)
    return finish(ctx, body, family="document_share", label=L, difficulty="hard", lure=f"{name}_share",
                  sender=(ctx.pick(("{w} (via {s})", "{w} via {s}", "{s}"), w=contact.name, s=service), address),
                  reply_to=reply, subject=n.subject, bulk=rng.random() < 0.3,
                  parts=rng.choice(("alternative", "html")))


def hr_portal_notice(ctx: Ctx) -> Draft:
    """A payslip, tax form, benefits or policy notice from the payroll provider or HR, with a sign-in link to its
    real portal."""
    rng, org = ctx.rng, ctx.org
    payroll = [p for p in org.partners if p.kind == "payroll"]
    if payroll and rng.random() < 0.6:
        provider = payroll[0]
        brand, domain = provider.name, provider.domain
        sender = (ctx.pick(("{p}", "{p} Employee Portal", "{p} Notifications"), p=provider.name),
                  f"{rng.choice(('noreply', 'notifications', 'portal'))}@{domain}")
    else:
        brand, domain = org.name, org.domain
        sender = (ctx.pick(("Human Resources", "{o} HR", "People Team", "{o} Payroll"), o=org.name),
                  f"{rng.choice(('hr', 'people', 'payroll', 'noreply'))}@{domain}")
    n = notice(ctx, "hr_notice", brand)
    body = Body()
    write_notice(ctx, body, n, page_url(rng, host_on(rng, domain)), action=0.75, urgency=0.45, reassure=0.5,
                 brand=brand)
    return finish(ctx, body, family="hr_portal_notice", label=L, difficulty="hard", lure="hr_notice",
                  sender=sender, subject=n.subject, bulk=rng.random() < 0.4,
                  parts=rng.choice(("alternative", "html", "plain")))


def internal_request(ctx: Ctx) -> Draft:
    """A colleague's genuine request from the organisation's own address: pay an approved invoice, buy gift cards
    for a staff event, change a salary account: the words of CEO fraud, sent for real."""
    rng, org = ctx.rng, ctx.org
    kind = rng.choice(("payment", "payment", "gift_card", "gift_card", "payroll"))
    pool = REQUESTS[kind]
    if kind == "payment":
        author = rng.choice(org.by_role("Chief Executive Officer", "Chief Financial Officer", "Financial Controller",
                                        "Managing Director") or list(org.staff[:2]))
        ctx.recipient = rng.choice(org.by_role("Accounts Payable Specialist", "Financial Controller") or
                                   [ctx.recipient])
    elif kind == "gift_card":
        author = rng.choice(org.by_role(*ROLES_OF_AUTHORITY, "Office Manager") or list(org.staff[:2]))
    else:
        ctx.recipient = rng.choice(org.by_role("Payroll Administrator", "HR Director") or [ctx.recipient])
        author = rng.choice([p for p in org.staff if p is not ctx.recipient])
    if author is ctx.recipient:
        author = next(p for p in org.staff if p is not ctx.recipient)
    partner = rng.choice(org.partners)
    kw = {"a": amount(rng, 900, 85000), "p": partner.name, "i": ref(rng, "INV-", 5), "n": rng.choice((3, 4, 5, 10)),
          "k": rng.choice(("Amazon", "Visa", "Target", "Apple")), "v": rng.choice((25, 50, 100)),
          "bank": rng.choice(("Chime", "Ally", "a credit union", "Revolut")), "d": day_text(ctx.when, 4)}
    body = Body()
    indicator = "gift_card_request" if kind == "gift_card" else "payment_change_request"
    body.para(greeting(ctx), ctx.pick(pool["opener"], **kw) or None)
    # A colleague's real request does not promise bank details in a later email.
    follow = tuple(f for f in pool["follow"] if "details" not in f)
    body.para(ask_span(indicator, ctx.pick(pool["ask"], **kw)),
              span(indicator, ctx.pick(follow, **kw)) if kind == "gift_card" and rng.random() < 0.4
              else (ctx.pick(follow, **kw) or None) if kind != "gift_card" else None)
    body.para(span("urgency_pressure", ctx.pick(pool["urgency"], **kw)) if rng.random() < 0.55 else None)
    body.para(request_signoff(ctx, author.name, author.role))
    return finish(ctx, body, family="internal_request", label=L, difficulty="hard", lure=f"internal_{kind}",
                  sender=person_pair(author), subject=ctx.pick(pool["subject"], **kw),
                  auth=rng.choice(("pass", "pass", "none")), parts=rng.choice(("plain", "alternative")),
                  urgent=rng.random() < 0.3)


_LISTS = (("users", "apache.org"), ("discuss", "python.org"), ("members", "finance-leaders.org"),
          ("announce", "regional-procurement.net"), ("forum", "hr-roundtable.org"), ("talk", "sysadmins.org"))


def _list_message(ctx: Ctx, body: Body) -> tuple[tuple[str, str], str, list[tuple[str, str]], tuple[str, str]]:
    """A member's post through a mailing list: (sender, subject, list headers, the list's Reply-To)."""
    rng = ctx.rng
    name, host = rng.choice(_LISTS)
    list_addr = f"{name}@lists.{host}"
    poster = person_name(rng)
    domain = rng.choice((*FREE_MAIL[:3], small_business_domain(rng), small_business_domain(rng)))
    sender = (poster, f"{poster.split(' ')[0].lower().translate(_ASCII)}.{rng.randint(1, 99)}@{domain}")
    topic = ctx.pick(("Experience with e-invoicing providers?", "Question about password policy for contractors",
                      "Recommended bank for international payments", "Meeting notes from the {m} call",
                      "Anyone else seeing delayed invoices from suppliers?", "Job opening: payroll analyst"),
                     m=ctx.when.strftime("%B"))
    body.para(greeting(ctx, "all"), ctx.pick(("Has anyone dealt with this before?", "Sharing in case it helps.",
                                              "Looking for advice from the group.")))
    body.para(ctx.pick(("We are reviewing our process for {t} and would value your experience.",
                        "Our team moved to a new system last quarter and I wrote up what we learned.",
                        "The slides and notes are on the list archive."), t=topic.lower()))
    body.para(f"--\n{name} mailing list\n{list_addr}\nhttps://lists.{host}/mailman/listinfo/{name}")
    headers = [("List-Id", f"<{name}.lists.{host}>"), ("List-Post", f"<mailto:{list_addr}>"),
               ("Precedence", "list")]
    return sender, f"[{name}] {topic}", headers, (f"{name} list", list_addr)


_ASCII = str.maketrans("áéíóúñüöøåłëçÁÉŁØZ", "aeiounuooalecAELOz")


def mailing_list(ctx: Ctx) -> Draft:
    """Mail through a discussion list, whose Reply-To is the list, not the poster."""
    body = Body()
    # The list's Reply-To is the list itself (its List-Id's domain): no mismatch, though the domains differ.
    sender, subject, headers, reply = _list_message(ctx, body)
    return finish(ctx, body, family="mailing_list", label=L, difficulty="hard", lure="discussion_list",
                  sender=sender, subject=subject, reply_to=reply, extra=headers, bulk=True,
                  return_path=f"{reply[1].split('@')[0]}-bounces@{reply[1].split('@')[1]}",
                  parts=ctx.rng.choice(("plain", "alternative")))


def forwarded_auth_fail(ctx: Ctx) -> Draft:
    """Legitimate mail whose DKIM signature or SPF broke on the way (a list rewrote it, a forwarder relayed it)."""
    rng = ctx.rng
    body = Body()
    if rng.random() < 0.6:
        sender, subject, headers, reply = _list_message(ctx, body)
    else:  # a partner's mail forwarded by the recipient's own alias
        partner = rng.choice(ctx.org.partners)
        contact = partner.contacts[rng.randrange(2)]
        sender, headers, reply = person_pair(contact), [("X-Forwarded-To", ctx.recipient.email)], None
        subject = ctx.pick(("Delivery schedule for next week", "Updated price list", "Meeting notes",
                            "Re: Purchase order {p}"), p=ref(rng, "PO", 5))
        body.para(greeting(ctx))
        body.para(ctx.pick(("Please find the updated schedule below.", "As promised, here are the notes from "
                            "Tuesday.", "Our price list for next quarter is unchanged apart from freight.")))
        body.para(signoff(ctx, contact.name, contact.role, partner.name))
    return finish(ctx, body, family="forwarded_auth_fail", label=L, difficulty="hard", lure="forwarding",
                  sender=sender, subject=subject, reply_to=reply, extra=headers, auth="forwarded",
                  parts=rng.choice(("plain", "alternative")))


def partner_bank_change(ctx: Ctx) -> Draft:
    """A real partner announces a bank change from its real domain and (usually) asks to confirm by phone."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = partner.contacts[0]
    ctx.recipient = rng.choice(org.by_role("Accounts Payable Specialist", "Financial Controller") or [ctx.recipient])
    kw = {"d": day_text(ctx.when, 30), "p": partner.name, "b": rng.choice(("Crescent Bay Bank", "a new bank",
                                                                          "Northgate Savings")),
          "i": ref(rng, rng.choice(("INV-", "", "SI")), 5)}
    body = Body()
    body.para(greeting(ctx))
    body.para(ctx.pick(BANK_CHANGE["opening"], **kw), span("payment_change_request", ctx.pick(BANK_CHANGE["ask"],
                                                                                              **kw)))
    body.para(span("urgency_pressure", ctx.pick(BANK_CHANGE["urgency"], **kw)) if rng.random() < 0.3 else None,
              ctx.pick(BANK_CHANGE["confirm_phone"] if rng.random() < 0.75 else BANK_CHANGE["confirm_email"]))
    body.para(signoff(ctx, contact.name, contact.role, partner.name))
    letter = mime.attachment(rng.choice(("Bank_Change_Notice.pdf", "Updated_Bank_Details.pdf",
                                         "Bank_Change_Letter.pdf")),
                             mime.pdf(rng, [partner.name, "Notice of change of bank"]))
    return finish(ctx, body, family="partner_bank_change", label=L, difficulty="hard", lure="bank_change_genuine",
                  sender=person_pair(contact), subject=ctx.pick(BANK_CHANGE["subject"], **kw),
                  attachments=[letter] if rng.random() < 0.6 else None, urgent=rng.random() < 0.3)


def personal_freemail(ctx: Ctx) -> Draft:
    """An honest stranger from free mail: a candidate with a CV, a customer with a question, a freelancer's bill."""
    rng, org = ctx.rng, ctx.org
    who = person_name(rng)
    sender = (who, free_mail_address(rng, who))
    kind = rng.choice(("cv", "customer", "freelancer"))
    body = Body()
    body.para(greeting(ctx))
    attachments = []
    if kind == "cv":
        ctx.recipient = rng.choice(org.by_role("Recruiter", "HR Director") or [ctx.recipient])
        role = rng.choice(("Operations Analyst", "Accounts Assistant", "Junior Developer", "Office Coordinator"))
        body.para(f"I would like to apply for the {role} position advertised on your website.",
                  ctx.pick(("My CV is attached.", "Please find my CV and a short cover letter attached.")))
        body.para(ctx.pick(("I am available for an interview at your convenience.",
                            "I can start with two weeks notice.")))
        last = who.split(" ")[-1]
        ext = rng.choice(("pdf", "docx"))
        data = mime.pdf(rng, [who, "Curriculum vitae"]) if ext == "pdf" else \
            mime.office_package(rng, "docx", who, macros=False)
        attachments.append(mime.attachment(f"{last}_CV.{ext}", data))
        subject = ctx.pick(("Application: {r}", "CV - {n}", "Applying for the {r} role"), r=role, n=who)
    elif kind == "customer":
        inv = ref(rng, "", 5)
        body.para(ctx.pick(("I think I was charged twice on invoice {i}.", "My bank shows a payment to {o} that I do "
                            "not recognise.", "I ordered last week and have not received a confirmation."),
                           i=inv, o=org.name),
                  ctx.pick(("Could you check and let me know?", "Could someone look into it please?")))
        subject = ctx.pick(("Question about invoice {i}", "Double charge?", "Order question"), i=inv)
    else:
        inv, amt = ref(rng, "", 3), amount(rng, 250, 4200)
        body.para(ctx.pick(("Thanks again for the work on the brochure photography.", "The translation is finished and "
                            "delivered.")),
                  f"My invoice {inv} for {amt} is attached.",
                  span("payment_change_request", ctx.pick(("Payment to the bank account on the invoice within 30 "
                                                           "days would be great", "Please pay by bank transfer as "
                                                           "usual"))) if rng.random() < 0.7 else None)
        attachments.append(mime.attachment(f"Invoice_{inv}.pdf", mime.pdf(rng, [who, f"Invoice {inv}", amt])))
        subject = ctx.pick(("Invoice {i}", "Invoice for {m}"), i=inv, m=ctx.when.strftime("%B"))
    body.para(ctx.pick(("Thanks,\n{n}", "Best regards,\n{n}", "Kind regards,\n{n}\n{p}"), n=who,
                       p=f"+44 7700 900{rng.randint(100, 999)}"))
    return finish(ctx, body, family="personal_freemail", label=L, difficulty="hard", lure=kind, sender=sender,
                  subject=subject, attachments=attachments, parts=rng.choice(("plain", "alternative")))


# --------------------------------------------------------------------------------------------------
# Legitimate, OOD only
# --------------------------------------------------------------------------------------------------
def esign_request(ctx: Ctx) -> Draft:
    """A genuine DocuSign envelope from a partner: the lure phishing imitates most, sent for real."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = partner.contacts[1]
    doc = ctx.pick(("Master Services Agreement", "NDA - {o}", "Order Form {y}", "Amendment No. {n}"), o=org.name,
                   y=ctx.when.year, n=rng.randint(1, 4))
    body = Body()
    body.para(f"{contact.name} sent you a document to review and sign.")
    body.link("REVIEW DOCUMENT", f"https://na{rng.randint(2, 4)}.docusign.net/Signing/EmailStart.aspx?a="
                                 f"{rng.getrandbits(128):x}&acct={rng.getrandbits(64):x}")
    body.para(ctx.pick(("Please review and sign at your convenience.", "Hi, please sign the attached {d} when you "
                        "can."), d=doc))
    body.para("Do Not Share This Email: this email contains a secure link to DocuSign.",
              "Please do not share it with others.")
    return finish(ctx, body, family="esign_request", label=L, difficulty="hard", lure="docusign_genuine",
                  sender=(f"{contact.name} via DocuSign", BRAND["DocuSign"].sender),
                  subject=f"Complete with DocuSign: {doc}", parts="alternative", bulk=True)


def helpdesk_ticket(ctx: Ctx) -> Draft:
    """The organisation's own service desk confirms a request the user raised, asking them to sign in."""
    rng, org = ctx.rng, ctx.org
    ticket = ref(rng, rng.choice(("RITM", "INC", "REQ")), 7)
    body = Body()
    body.para(greeting(ctx))
    body.para(ctx.pick(("Your request {t} to reset your MFA device has been completed.", "Ticket {t} (laptop "
                        "replacement) has been updated.", "We have resolved {t}: access to the shared drive."),
                       t=ticket),
              span("credential_request", ctx.pick(("Sign in to the portal to confirm the request is resolved",
                                                   "Please sign in with your usual account to review the update"))))
    body.link(f"View {ticket}", f"https://{org.short}.service-now.com/sp?id=ticket&number={ticket}")
    body.para("This is an automated message from the IT Service Desk.")
    sender = (f"{org.name} IT Service Desk", f"{org.short}@service-now.com")
    body.plant("display_name_spoof", mime.address_text(sender))  # the organisation's name on a vendor's address
    return finish(ctx, body, family="helpdesk_ticket", label=L, difficulty="easy", lure="service_desk",
                  sender=sender,
                  subject=f"{ticket} has been updated", bulk=rng.random() < 0.3)


#: (name, build, weight, ood-only): the legitimate rows of the family registry.
ROWS = (
    ("password_reset", password_reset, 0.06, False),
    ("invoice_reminder", invoice_reminder, 0.065, False),
    ("newsletter", newsletter, 0.06, False),
    ("internal_announcement", internal_announcement, 0.06, False),
    ("meeting_invite", meeting_invite, 0.045, False),
    ("shipping_notification", shipping_notification, 0.045, False),
    ("saas_signin_alert", saas_signin_alert, 0.055, False),
    ("mailing_list", mailing_list, 0.045, False),
    ("forwarded_auth_fail", forwarded_auth_fail, 0.05, False),
    ("partner_bank_change", partner_bank_change, 0.05, False),
    ("personal_freemail", personal_freemail, 0.065, False),
    ("it_notice", it_notice, 0.06, False),
    ("document_share", document_share, 0.045, False),
    ("hr_portal_notice", hr_portal_notice, 0.045, False),
    ("internal_request", internal_request, 0.05, False),
    ("esign_request", esign_request, 0.05, True),
    ("helpdesk_ticket", helpdesk_ticket, 0.05, True),
)
