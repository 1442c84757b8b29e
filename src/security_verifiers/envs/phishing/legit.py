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
    Body,
    Ctx,
    Draft,
    amount,
    day_text,
    disclaimer,
    finish,
    greeting,
    person_pair,
    ref,
    signoff,
    span,
)
from security_verifiers.envs.phishing.world import (
    BRAND,
    CARRIERS,
    ESP_TRACKERS,
    FREE_MAIL,
    SAAS,
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
    host = f"{rng.choice(('id.', 'accounts.', 'www.', ''))}{brand.domains[0]}"
    href = f"https://{host}/{rng.choice(('reset-password', 'password/reset', 'account/recover', 'login/reset'))}" \
           f"?token={rng.getrandbits(96):x}"
    minutes = rng.choice((15, 30, 60, 120))
    body = Body()
    body.para(greeting(ctx))
    body.para(ctx.pick(("We received a request to reset the password for your {b} account {m}.",
                        "Someone (hopefully you) asked to reset the password for {m}.",
                        "You recently requested a password reset for your {b} account."),
                       b=brand.name, m=ctx.recipient.email),
              span("credential_request", ctx.pick(("Click the button below to choose a new password",
                                                   "Use the link below to set a new password",
                                                   "To create a new password, follow the link below",
                                                   "Sign in with the link below and pick a new password"))))
    body.link(ctx.pick(("Reset password", "Choose a new password", "Set new password")), href)
    body.para(span("urgency_pressure", ctx.pick(("This link will expire in {n} minutes",
                                                 "For your security the link is only valid for {n} minutes",
                                                 "The reset link expires {n} minutes after it was sent"), n=minutes)),
              ctx.pick(("If you did not request a password reset, you can safely ignore this email.",
                        "If this was not you, no changes have been made to your account.",
                        "Did not ask for this? Your password will stay the same.")))
    body.para(ctx.pick(("The {b} Team", "Thanks,\nThe {b} Accounts Team", "{b} Support"), b=brand.name))
    return finish(ctx, body, family="password_reset", label=L, difficulty="hard", lure=f"{brand.name}_reset",
                  sender=(brand.name, brand.sender), subject=ctx.pick((
                      "Reset your {b} password", "{b} password reset request", "Your password reset link",
                      "Password reset instructions"), b=brand.name), bulk=rng.random() < 0.3, urgent=True)


def invoice_reminder(ctx: Ctx) -> Draft:
    """A real partner chases an overdue invoice from its real domain: payment words and pressure."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = partner.contacts[0]
    ctx.recipient = rng.choice(org.by_role("Accounts Payable Specialist", "Financial Controller", "Office Manager")
                               or [ctx.recipient])
    inv, amt, days = ref(rng, rng.choice(("INV-", "", "SI")), 5), amount(rng, 400, 48000), rng.randint(7, 60)
    body = Body()
    body.para(greeting(ctx))
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
    """A carrier's genuine notice with a tracking link on its own domain."""
    rng = ctx.rng
    carrier = rng.choice(CARRIERS)
    tracking = ref(rng, {"UPS": "1Z", "FedEx": "", "DHL": "JD"}[carrier.name], 12)
    body = Body()
    body.para(ctx.pick(("Hello,", "Dear customer,", greeting(ctx))))
    body.para(ctx.pick(("Your shipment {t} is out for delivery today.", "Your package {t} was delivered at {h}.",
                        "A delivery attempt for {t} was made; we will try again tomorrow.",
                        "Your parcel {t} has been dispatched from {c}."),
                       t=tracking, h=ctx.when.strftime("%H:%M"), c=rng.choice(("Memphis", "Leipzig", "Louisville"))),
              span("urgency_pressure", "Please arrange to collect it within 5 days or it will be returned to the "
                                       "sender") if rng.random() < 0.25 else None)
    body.link("Track your shipment", f"https://www.{carrier.domains[0]}/track?tracknum={tracking}")
    body.para(ctx.pick(("Please do not reply to this email.", "Delivery times are estimates.",
                        "Manage your delivery preferences in your {c} account."), c=carrier.name))
    return finish(ctx, body, family="shipping_notification", label=L, difficulty="easy",
                  lure=f"{carrier.name}_tracking", sender=(carrier.name, carrier.sender),
                  subject=ctx.pick(("Your {c} shipment {t}", "{c}: delivery update", "Package delivered",
                                    "Delivery attempt for your parcel"), c=carrier.name, t=tracking), bulk=True)


def saas_signin_alert(ctx: Ctx) -> Draft:
    """A service's genuine sign-in alert: security words, a deadline, a link on its own domain."""
    rng = ctx.rng
    brand = rng.choice(SAAS)
    body = Body()
    body.para(greeting(ctx))
    body.para(ctx.pick(("We noticed a new sign-in to your {b} account {m}.", "Your {b} account was just signed in to "
                        "from a new device.", "A new device signed in to {m}."), b=brand.name, m=ctx.recipient.email),
              ctx.pick(("Device: {d}, location: {c}.", "Browser {d} near {c}."),
                       d=rng.choice(("Chrome on Windows", "Safari on iPhone", "Firefox on macOS", "Edge on Windows")),
                       c=rng.choice(("London, UK", "Denver, US", "Berlin, DE", "Toronto, CA", "Lyon, FR"))))
    body.para(ctx.pick(("If this was you, you do not need to do anything.", "If you recognise this activity, no "
                        "action is needed.")),
              span("credential_request", ctx.pick(("If this was not you, reset your password and review your "
                                                   "account security", "If you do not recognise it, sign in and "
                                                   "secure your account"))) if rng.random() < 0.7 else None)
    if rng.random() < 0.4:
        body.para(span("urgency_pressure", "Act right away if you do not recognise this sign-in"))
    body.link(ctx.pick(("Check activity", "Review security settings", "Secure account")),
              f"https://{rng.choice(('myaccount.', 'account.', 'www.', ''))}{brand.domains[0]}/security")
    body.para(ctx.pick(("You received this email to let you know about important changes to your {b} account.",
                        "© {y} {b}", "The {b} Security Team"), b=brand.name, y=ctx.when.year))
    return finish(ctx, body, family="saas_signin_alert", label=L, difficulty="hard", lure=f"{brand.name}_alert",
                  sender=(brand.name, brand.sender), subject=ctx.pick((
                      "Security alert", "New sign-in to your account", "{b}: new device signed in",
                      "Was this you?"), b=brand.name), bulk=rng.random() < 0.4)


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
    sender, subject, headers, reply = _list_message(ctx, body)
    body.plant("reply_to_mismatch", reply[1])
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
        if reply[1].split("@")[1] != sender[1].split("@")[1]:
            body.plant("reply_to_mismatch", reply[1])
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
    """A real partner announces a bank change from its real domain and asks to confirm by phone."""
    rng, org = ctx.rng, ctx.org
    partner = rng.choice(org.partners)
    contact = partner.contacts[0]
    ctx.recipient = rng.choice(org.by_role("Accounts Payable Specialist", "Financial Controller") or [ctx.recipient])
    body = Body()
    body.para(greeting(ctx))
    body.para(ctx.pick(("From {d}, {p} will bank with {b}.", "We are moving our business accounts to {b} at the end "
                        "of the quarter.", "As part of our merger, our receiving bank is changing."),
                       d=day_text(ctx.when, 30), p=partner.name, b=rng.choice(("Crescent Bay Bank", "a new bank",
                                                                              "Northgate Savings"))),
              span("payment_change_request", ctx.pick((
                  "Please update our remittance details in your vendor records",
                  "Kindly update the bank account you pay us into before the next payment run",
                  "Payments after that date should go to the new account in the attached letter"))))
    body.para(ctx.pick((
        "To protect both of us, please call your usual contact on the number you already have to confirm the change "
        "before making any payment.",
        "Do not act on this email alone: please verify the new details by phone using the number on our contract.",
        "We will never change bank details by email only, so please confirm by calling our finance team.")))
    body.para(signoff(ctx, contact.name, contact.role, partner.name))
    letter = mime.attachment("Bank_Change_Notice.pdf", mime.pdf(rng, [partner.name, "Notice of change of bank"]))
    return finish(ctx, body, family="partner_bank_change", label=L, difficulty="hard", lure="bank_change_genuine",
                  sender=person_pair(contact), subject=ctx.pick(("Change of bank details - {p}", "Notice: new "
                                                                 "remittance account", "Our banking is changing"),
                                                                p=partner.name),
                  attachments=[letter] if rng.random() < 0.6 else None)


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
    ("esign_request", esign_request, 0.05, True),
    ("helpdesk_ticket", helpdesk_ticket, 0.05, True),
)
