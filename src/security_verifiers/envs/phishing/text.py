"""What every family shares: the context of one message, a body writer that records the language spans it plants,
and :func:`finish`, which adds the delivery path (Received chain, authentication results, the usual extra headers)
and turns a family's draft into a message.

A planted language span is one clause the body really contains, quoted exactly; it never crosses a sentence end
(``. ``, ``! ``, ``? ``) or a line, because a quote is checked inside one sentence of the rendered body.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from dataclasses import dataclass, field

from security_verifiers.envs.phishing import mime
from security_verifiers.envs.phishing.mime import Attachment, Block, Link, Spec
from security_verifiers.envs.phishing.world import Organisation, Person

_SENTENCE_END = re.compile(r"[.!?]\s|\n")


@dataclass
class Ctx:
    """One message's circumstances: the stream, the organisation, the recipient, the time it arrives."""

    rng: random.Random
    org: Organisation
    recipient: Person
    when: dt.datetime

    def pick(self, options: tuple[str, ...] | list[str], **kw: object) -> str:
        """One phrasing, its slots filled from ``kw``."""
        return self.rng.choice(options).format(**kw)


@dataclass
class Draft:
    label: str
    family: str
    difficulty: str
    lure: str
    raw: str
    planted: list[tuple[str, str]]


Span = tuple[str, str, str]


def span(indicator: str, text: str, end: str = ".") -> Span:
    """A clause planted under a language indicator; the sentence it ends with ``end``."""
    if _SENTENCE_END.search(text) or text[-1:] in ".!?":
        raise ValueError(f"a planted span must stay inside one sentence: {text!r}")
    return (indicator, text, end)


@dataclass
class Body:
    """Paragraphs and links, and the evidence planted in them."""

    blocks: list[Block] = field(default_factory=list)
    planted: list[tuple[str, str]] = field(default_factory=list)

    def para(self, *parts: str | Span | None) -> None:
        out = []
        for p in parts:
            if not p:
                continue
            if isinstance(p, tuple):
                self.planted.append((p[0], p[1]))
                out.append(p[1] + p[2])
            else:
                out.append(p)
        if out:
            self.blocks.append(" ".join(out))

    def link(self, text: str, href: str) -> None:
        self.blocks.append(Link(text, href))

    def plant(self, indicator: str, quote: str) -> None:
        self.planted.append((indicator, quote))


# --------------------------------------------------------------------------------------------------
# Shared wording
# --------------------------------------------------------------------------------------------------
def greeting(ctx: Ctx, name: str | None = None) -> str:
    first = (name or ctx.recipient.name).split(" ")[0]
    return ctx.pick(("Hi {f},", "Hello {f},", "Dear {f},", "{f},", "Good morning {f},", "Hi {f}", "Hello,",
                     "Dear colleague,", "Hey {f},", "Good afternoon,"), f=first)


def signoff(ctx: Ctx, name: str, role: str = "", company: str = "", phone: bool = True) -> str:
    first = name.split(" ")[0]
    line = ctx.pick(("Thanks,", "Best regards,", "Kind regards,", "Regards,", "Many thanks,", "Thank you,",
                     "Best,", "Cheers,", "Sincerely,", "Warm regards,"))
    sig = [line, name if ctx.rng.random() < 0.8 else first]
    if role and ctx.rng.random() < 0.7:
        sig.append(role + (f" | {company}" if company else ""))
    if phone and ctx.rng.random() < 0.4:
        sig.append(f"{ctx.rng.choice(('T', 'Tel', 'Direct', 'M', 'Mobile'))}: {phone_number(ctx.rng)}")
    return "\n".join(sig)


def phone_number(rng: random.Random) -> str:
    return rng.choice(("+1 {a}-555-0{b}", "({a}) 555-0{b}", "+44 20 7946 0{b}", "+49 30 901820{c}",
                       "+1 {a} 555 01{c}")).format(a=rng.randint(201, 989), b=rng.randint(100, 199),
                                                  c=rng.randint(10, 99))


def disclaimer(ctx: Ctx, company: str) -> str | None:
    if ctx.rng.random() > 0.25:
        return None
    return ctx.pick((
        "CONFIDENTIALITY NOTICE: This message and any attachments are intended only for the addressee and may "
        "contain confidential information of {c}. If you received it in error, please notify the sender and delete it.",
        "This email was scanned for viruses and malware. {c} accepts no liability for any damage caused by this "
        "message.",
        "Please consider the environment before printing this email.",
        "The information in this email is confidential and may be legally privileged. It is intended solely for the "
        "addressee."), c=company)


def amount(rng: random.Random, low: int, high: int) -> str:
    cur = rng.choice(("$", "$", "$", "€", "£"))
    value = rng.randint(low, high) + rng.choice((0, 0, rng.randint(1, 99) / 100))
    return f"{cur}{value:,.2f}"


def day_text(when: dt.datetime, days: int) -> str:
    d = when + dt.timedelta(days=days)
    return d.strftime("%A %d %B").replace(" 0", " ")


def ref(rng: random.Random, prefix: str = "", digits: int = 6) -> str:
    return prefix + "".join(rng.choice("0123456789") for _ in range(digits))


def slug(rng: random.Random, *words: str) -> str:
    return "-".join(w for w in words if w) + (f"-{rng.randint(2, 99)}" if rng.random() < 0.4 else "")


# --------------------------------------------------------------------------------------------------
# The delivery path, and the message
# --------------------------------------------------------------------------------------------------
_MAILERS = ("Microsoft Outlook 16.0", "Apple Mail (2.3774.500.171)", "iPhone Mail (21E236)", "Mozilla Thunderbird",
            "PHPMailer 6.8.1 (https://github.com/PHPMailer/PHPMailer)", "Zimbra 9.0.0_GA", "Microsoft Outlook 15.0")
_AUTH_MODES = {  # mode -> choices of (spf, dkim, dmarc)
    "pass": (("pass", "pass", "pass"),),
    "none": (("none", "none", "none"), ("pass", "none", "none"), ("neutral", "none", "none")),
    "spoof": (("fail", "none", "fail"), ("softfail", "none", "fail"), ("fail", "fail", "fail")),
    "forwarded": (("fail", "fail", "fail"), ("softfail", "fail", "fail"), ("pass", "fail", "fail"),
                  ("softfail", "pass", "pass")),
    "softfail": (("softfail", "pass", "pass"), ("softfail", "none", "none")),
}


def domain_of(address: str) -> str:
    return address.rsplit("@", 1)[-1].lower()


def finish(ctx: Ctx, body: Body, *, family: str, label: str, difficulty: str, lure: str,
           sender: tuple[str, str], subject: str, auth: str = "pass", to: list[tuple[str, str]] | None = None,
           cc: list[tuple[str, str]] | None = None, reply_to: tuple[str, str] | None = None,
           return_path: str | None = None, attachments: list[Attachment] | None = None, parts: str | None = None,
           extra: list[tuple[str, str]] | None = None, quoted: list[str] | None = None,
           in_reply_to: str | None = None, bulk: bool = False, urgent: bool = False) -> Draft:
    """The message of a family's draft, with the headers its path adds; a failing authentication result is
    planted as ``auth_failure`` (it is in the message whatever the label)."""
    rng = ctx.rng
    planted = list(body.planted)
    from_domain = domain_of(sender[1])
    envelope = return_path or sender[1]
    recipient = ctx.recipient.email
    if rng.random() < 0.08 and auth not in ("forwarded", "spoof"):  # some gateways add no results at all, on any mail
        auth = "missing"
    auth_header = spf_header = None
    if auth != "missing":
        spf, dkim, dmarc = rng.choice(_AUTH_MODES[auth])
        auth_header, clauses = mime.auth_results(rng, ctx.org.domain, domain_of(envelope), from_domain, spf, dkim,
                                                 dmarc)
        failing = [c for k, c in clauses.items() if any(f"{k}={r}" in c for r in ("fail", "softfail"))]
        if rng.random() < 0.35:
            spf_header = mime.received_spf(rng, "softfail" if spf == "softfail" else spf, ctx.org.domain, envelope)
        if failing:
            planted.append(("auth_failure", rng.choice(failing)))
    headers: list[tuple[str, str]] = list(extra or [])
    if rng.random() < 0.35:
        headers.append(("X-Mailer", rng.choice(_MAILERS)))
    if ctx.org.sso == "microsoft" and rng.random() < 0.6:
        headers.append(("X-MS-Exchange-Organization-SCL", str(rng.choice((-1, 1, 1, 5)))))
    if rng.random() < 0.3:
        headers.append(("Content-Language", rng.choice(("en-US", "en-GB"))))
    if (urgent and rng.random() < 0.35) or rng.random() < 0.05:
        headers.append(("Importance", "High"))
        headers.append(("X-Priority", "1 (Highest)"))
    if (bulk and rng.random() < 0.8) or rng.random() < 0.08:
        headers.append(("List-Unsubscribe", f"<mailto:unsubscribe-{rng.getrandbits(40):x}@{domain_of(envelope)}>"))
    if rng.random() < 0.2:
        headers.append(("Thread-Index", f"AQH{rng.getrandbits(100):x}"[:32]))
    if parts is None:
        r = rng.random()
        parts = "alternative" if r < 0.78 else ("html" if r < 0.9 else "plain")
    spec = Spec(sender=sender, to=to or [(ctx.recipient.name, recipient)], subject=subject, date=ctx.when,
                message_id=mime.message_id(rng, from_domain), blocks=body.blocks, cc=cc or [],
                reply_to=reply_to, return_path=envelope if rng.random() < 0.9 else None,
                in_reply_to=in_reply_to, references=[in_reply_to] if in_reply_to else [],
                received=mime.received_chain(rng, domain_of(envelope), ctx.org.domain, recipient, ctx.when),
                auth_results=auth_header, received_spf=spf_header, extra_headers=headers, quoted=quoted or [],
                attachments=attachments or [], parts=parts,
                cte=rng.choice((None, None, "quoted-printable", "base64")))
    seen: set[str] = set()
    unique = []
    for ind, quote in planted:  # one quote per indicator: recall counts indicators, not quotes
        if ind not in seen:
            seen.add(ind)
            unique.append((ind, quote))
    return Draft(label, family, difficulty, lure, mime.build(spec), unique)


def person_pair(p: Person) -> tuple[str, str]:
    return (p.name, p.email)


# --------------------------------------------------------------------------------------------------
# Scenario pools: the wording of a notice, written once and drawn by both classes
# --------------------------------------------------------------------------------------------------
#: Per scenario: subjects, openings, details (optional second sentence), actions (a credential clause, planted),
#: buttons, urgencies (a pressure clause, planted), reassurances, closings (always name ``{b}``). A genuine service's
#: notice and an impostor's copy of it draw from the same pool: what differs is where the mail comes from and where
#: its link goes, not its words.
SCENARIOS: dict[str, dict[str, tuple[str, ...]]] = {
    "signin_alert": {
        "subject": ("Security alert", "New sign-in to your {b} account", "{b}: new device signed in", "Was this you?",
                    "New sign-in from {dev}", "Review recent activity on your account", "Security alert for {m}",
                    "Unusual sign-in activity", "We noticed a new sign-in", "New login to {b}",
                    "{b} security notification", "Did you just sign in?"),
        "opening": ("We noticed a new sign-in to your {b} account {m}.", "Your {b} account was just signed in to from "
                    "a new device.", "A new device signed in to {m}.", "We detected a sign-in to your account from a "
                    "device we don't recognise.", "Someone just signed in to your {b} account.", "There was a "
                    "sign-in attempt on your {b} account from a new location.", "Your account {m} was accessed from "
                    "a new browser."),
        "detail": ("Device: {dev}, location: {city}.", "Browser: {dev}. Location: {city} (approximate).",
                   "{dev} near {city} at {t}.", "When: {t} UTC. Where: {city}. Device: {dev}.", ""),
        "action": ("If this wasn't you, reset your password and review your account security", "If you do not "
                   "recognise it, sign in and secure your account", "If this was not you, please sign in and "
                   "change your password", "Review the activity and verify your account if anything looks "
                   "unfamiliar", "Please confirm it was you by signing in to your account", "If you don't "
                   "recognise this activity, sign in to review your recent activity"),
        "button": ("Check activity", "Review security settings", "Secure account", "Review activity",
                   "Yes, it was me", "Verify it's you", "Review sign-in"),
        "urgency": ("Act right away if you do not recognise this sign-in", "For your protection, please review "
                    "this within 24 hours", "If we do not hear from you we may temporarily limit access to keep "
                    "your account safe", "Please review this activity as soon as possible",
                    "Please take action immediately if this was not you"),
        "reassure": ("If this was you, you do not need to do anything.", "If you recognise this activity, no action "
                     "is needed.", "You can ignore this message if it was you.", "If this was you, you can safely "
                     "disregard this email."),
        "closing": ("The {b} Security Team", "Thanks,\nThe {b} Accounts Team", "{b} Account Protection",
                    "Regards,\n{b} Security", "The {b} Team"),
    },
    "password_reset": {
        "subject": ("Reset your {b} password", "{b} password reset request", "Your password reset link",
                    "Password reset instructions", "Password change requested", "Complete your password reset",
                    "Reset your password", "Your {b} password reset"),
        "opening": ("We received a request to reset the password for your {b} account {m}.", "Someone (hopefully "
                    "you) asked to reset the password for {m}.", "You recently requested a password reset for your "
                    "{b} account.", "A password reset was requested for the account {m}.", "We got a request to "
                    "change the password on your {b} account."),
        "detail": ("", "", "The request came from {dev} near {city}."),
        "action": ("Click the button below to choose a new password", "Use the link below to set a new password",
                   "To create a new password, follow the link below", "Sign in with the link below and pick a new "
                   "password", "Please confirm your current password and choose a new one"),
        "button": ("Reset password", "Choose a new password", "Set new password", "Update password",
                   "Reset my password"),
        "urgency": ("This link will expire in {mins} minutes", "For your security the link is only valid for "
                    "{mins} minutes", "The reset link expires {mins} minutes after it was sent", "Please complete "
                    "the reset within {h} hours"),
        "reassure": ("If you did not request a password reset, you can safely ignore this email.", "If this was not "
                     "you, no changes have been made to your account.", "Did not ask for this? Your password will "
                     "stay the same."),
        "closing": ("The {b} Team", "Thanks,\nThe {b} Accounts Team", "{b} Support", "Regards,\n{b} Account Services"),
    },
    "password_expiry": {
        "subject": ("Your password expires in {dd} days", "Password expiry notice for {m}", "Action required: "
                    "password expiration", "Reminder: update your password", "{b} password expires soon",
                    "Your network password will expire", "Password expiry reminder", "Your password expires today"),
        "opening": ("The password for {m} will expire in {dd} days.", "Our records show your {b} password has not "
                    "been changed in 90 days.", "Your network password is due to expire on {day}.", "As required by "
                    "the {o} password policy, passwords are changed every 90 days.", "The password for your {o} "
                    "account expires soon."),
        "detail": ("", "", "Your new password must be at least 14 characters long.", "You can change it from any "
                   "device connected to the internet."),
        "action": ("Sign in to the self-service portal to change your password", "Please update your password "
                   "before it expires", "Use the link below to sign in and choose a new password", "Sign in with "
                   "your current password and set a new one", "Log in with your {b} credentials to update your "
                   "password", "Sign in below to keep your current password"),
        "button": ("Change password", "Update password", "Open self-service portal", "Change it now",
                   "Keep current password"),
        "urgency": ("After {day} you will not be able to sign in until the password is changed", "Your password "
                    "expires in {dd} days", "Please change it before {day} to avoid losing access", "Accounts with "
                    "expired passwords are locked automatically", "Your access will be disabled at 5 PM today if no "
                    "action is taken"),
        "reassure": ("If you have already changed your password, please ignore this reminder.", "The IT Service Desk "
                     "can help if you have trouble signing in.", "Remember that we will never ask for your password "
                     "by email."),
        "closing": ("{b} IT Service Desk", "Thank you,\n{b} IT", "Regards,\nIT Support, {b}", "{b} Identity Services"),
    },
    "mfa": {
        "subject": ("Your verification code", "Your {b} security code", "Set up multi-factor authentication",
                    "Action required: MFA re-enrolment", "Two-step verification is now required", "Multi-factor "
                    "authentication update", "Your one-time code", "Register your authenticator app"),
        "opening": ("Your {b} verification code is {code}.", "Use the code {code} to finish signing in to {b}.",
                    "Multi-factor authentication is now required for all {o} accounts.", "As part of our security "
                    "upgrade, all staff must register an authenticator app.", "Your {b} MFA settings need to be "
                    "updated.", "Your one-time passcode is {code}."),
        "detail": ("", "", "This adds a second step when you sign in from a new device.", "It takes about two "
                   "minutes."),
        "action": ("Enter this code on the sign-in page to verify your identity", "Sign in and register your "
                   "authenticator app", "Sign in to complete the two-step verification setup", "Verify your account "
                   "with the code to continue", "Sign in with your work account to re-register your device"),
        "button": ("Set up MFA", "Register device", "Continue setup", "Sign in", "Start setup"),
        "urgency": ("The code expires in 10 minutes", "Please complete the registration by {day}", "Staff who have "
                    "not registered by {day} will be asked to enrol at their next sign-in", "Complete this today to "
                    "keep your access"),
        "reassure": ("Never share this code with anyone, including {b} staff.", "If you did not try to sign in, "
                     "change your password.", "The IT Service Desk will never ask you for this code."),
        "closing": ("The {b} Team", "{b} Identity Services", "IT Security, {b}", "Thanks,\n{b} Accounts"),
    },
    "verify_email": {
        "subject": ("Verify your email address", "Please confirm your email", "Confirm your {b} account", "Action "
                    "required: verify your email", "One more step to finish setting up your account", "Confirm "
                    "your email address for {b}"),
        "opening": ("Thanks for signing up for {b}.", "You added {m} to your {b} account.", "Please confirm that {m} "
                    "is your email address.", "We need to verify the email address on your {b} account.",
                    "Your colleague invited you to join {b}."),
        "detail": ("", "", "It only takes a moment."),
        "action": ("Click the link below to verify your email address", "Confirm your email to finish setting up "
                   "your account", "Verify your email to keep receiving notifications", "Please verify your account "
                   "using the button below"),
        "button": ("Verify email", "Confirm email address", "Verify my account", "Confirm"),
        "urgency": ("This link expires in 48 hours", "Unverified accounts are removed after 7 days", "Please verify "
                    "within {h} hours"),
        "reassure": ("If you did not create an account, you can ignore this email.", "If you didn't request this, "
                     "no further action is needed."),
        "closing": ("The {b} Team", "Welcome aboard,\nThe {b} Team", "{b} Support", "Cheers,\nThe {b} Team"),
    },
    "account_locked": {
        "subject": ("Your account has been locked", "Your account has been temporarily locked", "Account locked "
                    "after failed sign-in attempts", "Security alert for {m}", "Verify your account", "Access to "
                    "your {b} account is limited"),
        "opening": ("Your {b} account was locked after several failed sign-in attempts.", "We temporarily locked "
                    "your account because of {n} unsuccessful sign-in attempts.", "Suspicious activity was detected "
                    "on your account.", "To protect your account, we have temporarily limited access."),
        "detail": ("", "The last attempt came from {dev} near {city}.", "Last attempt: {t} UTC from {city}."),
        "action": ("Verify your identity to unlock your account", "Sign in and reset your password to restore "
                   "access", "Please confirm your login details to secure your account", "Use the link below to "
                   "verify it's you and unlock your account"),
        "button": ("Unlock account", "Secure my account", "Verify identity", "Restore access"),
        "urgency": ("You will not be able to sign in until you complete this step", "Accounts not verified within 48 "
                    "hours will be deactivated", "Please complete this immediately to avoid interruption of "
                    "service", "The lock is lifted only after you verify your identity"),
        "reassure": ("If you were trying to sign in, you can try again in 30 minutes.", "If this was you, no "
                     "further action is needed.", "Contact the Service Desk if you need help."),
        "closing": ("The {b} Security Team", "{b} Account Protection", "Regards,\n{b} Support", "{b} IT Service Desk"),
    },
    "mailbox_quota": {
        "subject": ("Mailbox storage almost full", "Your mailbox has exceeded its quota", "Your mailbox is almost "
                    "full", "Action needed: mailbox storage limit", "Incoming mail on hold", "Storage warning for {m}"),
        "opening": ("Your mailbox {m} has reached {p}% of its storage limit.", "{n} incoming messages are being held "
                    "because your mailbox is full.", "Your mailbox is almost full and may soon stop receiving mail.",
                    "You are using {p}% of your {g} GB mailbox."),
        "detail": ("", "", "Large attachments in Sent Items use the most space."),
        "action": ("Sign in to review your storage and archive older messages", "Log in to the mail portal to "
                   "release your pending messages", "Sign in to request more storage", "Please sign in and empty "
                   "your Deleted Items folder"),
        "button": ("Manage storage", "Release messages", "Increase storage", "Open mailbox"),
        "urgency": ("When the mailbox is full you will no longer be able to send or receive mail", "Messages on hold "
                    "are deleted after 7 days", "Please act before the end of the week"),
        "reassure": ("Archived mail stays available in the online archive.", "Contact the IT Service Desk if you "
                     "need a larger mailbox."),
        "closing": ("{b} IT Service Desk", "Thank you,\n{b} IT", "{b} Messaging Team", "Regards,\n{b} Mail Admin"),
    },
    "shared_document": {
        "subject": ("{n} shared \"{d}\" with you", "Document shared with you: {d}", "{n} shared a file with you",
                    "Review requested: {d}", "New file in your shared folder", "{n} invited you to edit \"{d}\"",
                    "\"{d}\" was shared with you"),
        "opening": ("{n} has shared a document with you.", "{n} shared \"{d}\" with you.", "You have been given "
                    "access to {d}.", "{n} invited you to collaborate on {d}.", "{n} shared a file with you in {b}."),
        "detail": ("Here's the file we talked about.", "Please review before Friday.", "Can you take a look at "
                   "this?", "Latest version for your comments.", "", ""),
        "action": ("Sign in with your work email to view the document", "Sign in with your {b} account to open the "
                   "file", "Open the link below and sign in to view it", "You may be asked to sign in with your "
                   "work account to open it"),
        "button": ("Open", "Open document", "View file", "Open in {b}", "Review document"),
        "urgency": ("Please review before {day}", "Comments are due by {day}", "The link expires in 7 days"),
        "reassure": ("You received this email because {n} shared a file with you.", "This link only works for the "
                     "people it was shared with.", ""),
        "closing": ("{b}", "Sent with {b}", "The {b} Team", "{b} for Business"),
    },
    "voicemail": {
        "subject": ("New voicemail from {caller}", "Missed call and voicemail ({s} sec)", "Voice message received",
                    "You have a new voicemail", "Voicemail from {caller}"),
        "opening": ("You received a new voice message at {t}.", "A caller left you a voicemail ({s} seconds).", "You "
                    "have a new voicemail from {caller}.", "You missed a call from {caller}."),
        "detail": ("", "Duration: {s} seconds.", "Received: {t}."),
        "action": ("Sign in with your {b} account to listen to the message", "Sign in to play the recording", "Log "
                   "in to access your voice message"),
        "button": ("Play voicemail", "Listen now", "Open message"),
        "urgency": ("Voicemails are deleted after 30 days", "The caller asked for a call back today"),
        "reassure": ("You can also listen by calling your voicemail from your desk phone.", ""),
        "closing": ("{b} Phone System", "{b} Voice", "{b} Unified Communications"),
    },
    "hr_notice": {
        "subject": ("Your payslip for {month} is available", "Annual benefits confirmation", "Updated employee "
                    "handbook: acknowledgement required", "HR: policy acknowledgement due", "Your {y} tax form is "
                    "ready", "Open enrollment reminder", "Salary adjustment letter for {y}"),
        "opening": ("Your payslip for {month} is now available in the employee portal.", "Human Resources has "
                    "published the revised handbook for {y}.", "Your {y} salary adjustment letter is available.",
                    "All staff must acknowledge the updated remote-work policy.", "Your {y} tax statement is ready "
                    "to download.", "Open enrollment for {y1} benefits closes soon."),
        "detail": ("", "", "It includes changes to leave and expenses.", "Your net pay is unchanged this month."),
        "action": ("Sign in with your employee account to view it", "Log in to the HR portal with your usual "
                   "credentials", "Sign in to the portal to review and acknowledge it", "Verify your account to "
                   "view your letter"),
        "button": ("View payslip", "Open HR portal", "Acknowledge policy", "View document"),
        "urgency": ("Please acknowledge by {day}", "Enrollment closes on {day}", "Acknowledgements are due by the "
                    "end of the week"),
        "reassure": ("Questions? Reply to this email or contact HR.", "Your documents stay available for seven "
                     "years.", ""),
        "closing": ("{b} Human Resources", "HR Team, {b}", "{b} People Operations", "{b} Payroll"),
    },
}
_CITIES = ("London, UK", "Denver, US", "Berlin, DE", "Toronto, CA", "Lyon, FR", "Lagos, NG", "São Paulo, BR",
           "Jakarta, ID", "Chicago, US", "Madrid, ES", "Warsaw, PL", "Dublin, IE")
_DEVICES = ("Chrome on Windows", "Safari on iPhone", "Firefox on macOS", "Edge on Windows", "Chrome on Android",
            "Outlook for iOS", "Safari on Mac")
_DOCS = ("Q{q} Budget Review.xlsx", "Signed Agreement.pdf", "Payment Schedule {y}.pdf", "Staff Bonus Allocation.xlsx",
         "Revised Proposal.docx", "Remittance Copy.pdf", "Board Minutes {y}.docx", "Project Plan.pptx",
         "Supplier List {y}.xlsx", "Contract Draft v{q}.docx")
#: Words that head a genuine host (``portal.example.com``) and that impostors put in theirs (``example-portal.com``).
HOST_WORDS = ("login", "secure", "portal", "account", "accounts", "sso", "my", "id", "mail", "support", "billing",
              "docs", "hr", "payments", "www")
#: Paths of sign-in and account pages, genuine and imitated alike.
PATHS = ("login", "auth/signin", "verify", "account/security", "account/confirm", "security/checkup",
         "reset-password", "password/reset", "mfa/setup", "signin", "portal/home", "sso/session", "account/verify",
         "owa/auth.html", "settings/security", "activity", "docs/view", "share/open")


def scenario_words(ctx: Ctx, brand: str) -> dict[str, object]:
    """The slot values every scenario sentence may use."""
    rng = ctx.rng
    return {"b": brand, "m": ctx.recipient.email, "o": ctx.org.name, "n": person_name_of(ctx),
            "d": ctx.pick(_DOCS, q=rng.randint(1, 4), y=ctx.when.year), "day": day_text(ctx.when, rng.randint(2, 9)),
            "t": ctx.when.strftime("%H:%M"), "p": rng.randint(90, 99), "g": rng.choice((50, 100)),
            "code": ref(rng, "", 6), "dev": rng.choice(_DEVICES), "city": rng.choice(_CITIES),
            "h": rng.choice((24, 48, 72)), "mins": rng.choice((15, 30, 60, 120)), "dd": rng.randint(2, 14),
            "month": ctx.when.strftime("%B"), "y": ctx.when.year, "y1": ctx.when.year + 1, "s": rng.randint(12, 95),
            "caller": f"+1 ({rng.randint(201, 989)}) 555-01{rng.randint(10, 99)}"}


def person_name_of(ctx: Ctx) -> str:
    """A colleague's name (who shares a file, who is named in a notice)."""
    return ctx.rng.choice([p for p in ctx.org.staff if p is not ctx.recipient] or list(ctx.org.staff)).name


@dataclass
class Notice:
    """One notice's wording, drawn from its scenario's pool."""

    subject: str
    opening: str
    detail: str
    action: str
    button: str
    urgency: str
    reassure: str
    closing: str


def notice(ctx: Ctx, scenario: str, brand: str, **extra: object) -> Notice:
    pool = SCENARIOS[scenario]
    kw = scenario_words(ctx, brand) | extra
    return Notice(*(ctx.pick(pool[k], **kw) for k in ("subject", "opening", "detail", "action", "button", "urgency",
                                                     "reassure", "closing")))


def footer(ctx: Ctx, brand: str, address: str = "") -> str | None:
    """A service's footer line (or none): the same lines under genuine notices and their copies."""
    if ctx.rng.random() < 0.4:
        return None
    return ctx.pick(("This message was sent to {m}. {b} respects your privacy. Privacy Statement",
                     "© {y} {b}. All rights reserved.", "You are receiving this email because you have an account "
                     "with {b}.", "Please do not reply to this automated message.", "This is an automated message "
                     "from {b}; replies to this address are not monitored.", "{b}{a}", "Sent by {b} to {m}.",
                     "Privacy | Terms | Help Center\n© {y} {b}"),
                    m=ctx.recipient.email, b=brand, y=ctx.when.year, a=f", {address}" if address else "")


def write_notice(ctx: Ctx, body: Body, n: Notice, href: str, *, action: float, urgency: float,
                 reassure: float, shown: str | None = None, brand: str = "", closing: bool = True) -> None:
    """A notice's body: greeting, opening, the request (planted as ``credential_request``), the link, pressure
    (planted as ``urgency_pressure``), reassurance, sign-off and footer, each present with its probability."""
    rng = ctx.rng
    if rng.random() < 0.75:
        body.para(greeting(ctx))
    act = span("credential_request", n.action) if rng.random() < action else None
    if rng.random() < 0.5:
        body.para(n.opening, n.detail or None, act)
    else:
        body.para(n.opening, n.detail or None)
        body.para(act)
    body.link(shown or n.button, href)
    body.para(span("urgency_pressure", n.urgency) if rng.random() < urgency else None,
              n.reassure if rng.random() < reassure and n.reassure else None)
    if closing:
        body.para(n.closing)
    body.para(footer(ctx, brand))


def host_on(rng: random.Random, domain: str) -> str:
    """A host of ``domain`` as services name their pages: the domain itself or a word under it."""
    return domain if rng.random() < 0.25 else f"{rng.choice(HOST_WORDS)}.{domain}"


def page_url(rng: random.Random, host: str) -> str:
    """A sign-in or account page on ``host``, with the path and query shapes genuine and imitated pages share."""
    key = rng.choice(("u", "id", "session", "ref", "token", "src"))
    query = rng.choice(("", "", f"?{key}={rng.getrandbits(48):x}"))
    return f"https://{host}/{rng.choice(PATHS)}{query}"


# --------------------------------------------------------------------------------------------------
# Requests between colleagues: the same words from a colleague's real address and from an impostor's
# --------------------------------------------------------------------------------------------------
REQUESTS: dict[str, dict[str, tuple[str, ...]]] = {
    "payment": {
        "subject": ("Quick request", "Payment today", "Urgent payment", "Re: Wire transfer", "Request", "Need your "
                    "help", "Payment for {p}", "Invoice {i} - please pay today", "Approved: payment to {p}",
                    "Payment run"),
        "opener": ("Are you at your desk?", "Are you available?", "I need a favour.", "Something time-sensitive has "
                   "come up.", "Hope your week is going well.", "Quick one before the payment run.", ""),
        "ask": ("I need you to process a wire transfer of {a} to a new supplier today", "Please send a payment of {a} "
                "by wire to the account below before the cut-off", "Can you process the payment of {a} to {p} for "
                "invoice {i} today", "Please release the payment of {a} to {p} in this afternoon's run", "I need an "
                "outgoing transfer of {a} arranged this morning for the {p} contract", "Can you wire {a} to our "
                "legal counsel for the escrow deposit", "Please pay invoice {i} from {p} ({a}) today"),
        "follow": ("The bank details will follow in my next email.", "The approval is in the finance system.", "Let "
                   "me know when it is done and send me the confirmation.", "The invoice is approved and coded to "
                   "the project.", "I will send the account details once you confirm.", ""),
        "urgency": ("Keep this between us until the announcement on Monday", "It has to go out within the hour",
                    "I am in meetings all afternoon so handle this quickly", "It needs to go today or we miss the "
                    "early-payment discount", "Time is critical and I cannot take calls right now", "Please get it "
                    "done before the 3 PM cut-off", "This is confidential until the deal is announced"),
    },
    "gift_card": {
        "subject": ("Quick task", "Are you available", "Favour", "Gift cards", "Request", "Urgent", "Staff "
                    "recognition gifts", "Gift cards for the team", "Quick favour"),
        "opener": ("I need you to handle something for me.", "Are you free at the moment?", "Quick favour please.",
                   "We are thanking the warehouse team this week.", "Hope you are well.", ""),
        "ask": ("Please buy {n} {k} gift cards of ${v} each for a client appreciation gift", "I need {n} x ${v} {k} "
                "gift cards for the staff recognition programme", "Can you pick up {n} {k} gift cards at ${v} each "
                "from the nearest store", "Get {n} {k} cards worth ${v} each and I will reimburse you later", "Could "
                "you order {n} {k} gift cards of ${v} for the team thank-you"),
        "follow": ("Scratch the back and send me photos of the codes", "Email me the card numbers and PINs as soon "
                   "as you have them", "Send the redemption codes to me here", "Put them on the company card and "
                   "send me the codes"),
        "urgency": ("I need them within the hour", "It is a surprise so keep it confidential", "I am tied up in a "
                    "board meeting and cannot talk", "Please do this right away", "We hand them out at Friday's "
                    "all-hands", "Please keep it quiet until Friday"),
    },
    "payroll": {
        "subject": ("Direct deposit change", "Payroll update", "Change of bank details", "Update my account", "Quick "
                    "question about payroll", "New bank account for salary"),
        "opener": ("I recently switched banks.", "I opened a new account with {bank}.", "My old account is being "
                   "closed.", ""),
        "ask": ("I need to update my direct deposit information before the next payroll", "Please change the bank "
                "account my salary is paid into", "Could you update my payroll banking details to my new account",
                "I would like my pay sent to a new account starting this cycle"),
        "follow": ("What details do you need from me?", "Can you send me the form, or should I just reply with the "
                   "routing and account numbers?", "I can send the new account and routing number now.", "I have "
                   "also entered it in the HR portal.", "Is the HR portal the right place to do it?"),
        "urgency": ("It needs to be in place before {d}", "Please make the change today so it applies to this pay "
                    "run", "I would appreciate it being done as soon as possible"),
    },
}


def ask_span(indicator: str, text: str) -> Span:
    """A request planted under ``indicator``, ended as a question when it is one."""
    return span(indicator, text, "?" if text.startswith(("Can ", "Could ")) else ".")


def request_signoff(ctx: Ctx, person_name: str, role: str = "") -> str:
    first = person_name.split(" ")[0]
    return ctx.pick(("Thanks,\n{f}", "{f}", "Sent from my iPhone", "Regards,\n{n}\nSent from my mobile",
                     "{f}\n\nSent from Outlook for iOS", "Thanks,\n{n}\n{r}", "Best,\n{n}", "Thank you,\n{n}"),
                    f=first, n=person_name, r=role or first)


# --------------------------------------------------------------------------------------------------
# Delivery notices: a carrier's and an impostor's alike
# --------------------------------------------------------------------------------------------------
SHIPPING_SUBJECTS = ("Your {c} shipment {t}", "{c}: delivery update", "Package delivered", "Delivery attempt for your "
                     "parcel", "Delivery failed: action required", "Your parcel is on hold", "{c}: delivery attempt "
                     "unsuccessful", "Shipment {t} update", "Action required: duties and taxes for {t}",
                     "We missed you", "Your delivery is scheduled for tomorrow")
SHIPPING_OPENINGS = ("Your package {t} could not be delivered due to an incomplete address.", "We attempted to "
                     "deliver your parcel {t} today but no one was available.", "Shipment {t} is on hold at our "
                     "depot.", "A delivery attempt for {t} was made; we will try again tomorrow.", "Your shipment "
                     "{t} is being held at customs.")
SHIPPING_FEES = ("Please pay the redelivery fee of {f} to reschedule", "A customs charge of {f} must be paid before "
                 "release", "Confirm your address and pay the {f} handling fee", "Duties and taxes of {f} are due "
                 "before we can deliver your shipment", "Please pay the import duty of {f} online")
SHIPPING_BUTTONS = ("Reschedule delivery", "Track your parcel", "Confirm address", "Pay now", "Track your shipment",
                    "Manage delivery", "Pay duties")
SHIPPING_PATHS = ("track", "tracking", "redelivery", "parcel", "pay", "delivery/manage", "duties/pay")
SHIPPING_URGENCY = ("Parcels not claimed within 48 hours will be returned to the sender", "Your package will be "
                    "returned today if no action is taken", "The item will be disposed of after {d}", "Please "
                    "arrange to collect it within 5 days or it will be returned to the sender", "Unpaid duties "
                    "delay delivery and the shipment is returned after {d}")


# --------------------------------------------------------------------------------------------------
# A supplier's mail about money: bank changes, remittances, invoices (a real supplier's and an impostor's)
# --------------------------------------------------------------------------------------------------
BANK_CHANGE: dict[str, tuple[str, ...]] = {
    "subject": ("Change of bank details - {p}", "Notice: new remittance account", "Our banking is changing",
                "Updated banking details", "Change of bank account - {p}", "Re: Invoice {i}", "Important: new "
                "remittance information", "Outstanding invoices and new account"),
    "opening": ("From {d}, {p} will bank with {b}.", "We are moving our business accounts to {b} at the end of the "
                "quarter.", "As part of our merger, our receiving bank is changing.", "Following our recent audit, "
                "we have changed our banking provider.", "Please note that our company bank account has changed.",
                "We are writing to inform you of a change to our remittance details."),
    "ask": ("Please update our remittance details in your vendor records", "Kindly update the bank account you pay "
            "us into before the next payment run", "Payments after that date should go to the new account in the "
            "attached letter", "Please update our bank details in your system and make all future payments to the "
            "new account", "Kindly remit invoice {i} and all open invoices to our new account", "Please change the "
            "account on file before paying the outstanding balance", "Payment for invoice {i} should now be sent to "
            "the account in the attached letter"),
    "confirm_phone": ("To protect both of us, please call your usual contact on the number you already have to "
                      "confirm the change before making any payment.", "Do not act on this email alone: please "
                      "verify the new details by phone using the number on our contract.", "We will never change "
                      "bank details by email only, so please confirm by calling our finance team."),
    "confirm_email": ("Please confirm by email once done.", "Reply to this email with the remittance "
                      "confirmation.", "Let me know once our records are updated.", "Please confirm when the "
                      "change has been made."),
    "urgency": ("Payments made to the old account after {d} will be returned and may incur late fees", "Please "
                "confirm the update today as the old account will be closed this week", "We need this processed "
                "urgently to avoid delays on your next shipment", "Please make the change before your next "
                "payment run on {d}"),
}
#: What a supplier's payment or order mail says (the attachment is a PDF from a real supplier, a local web page in a
#: lure): ``{n}`` a reference, ``{a}`` an amount.
REMITTANCE: dict[str, tuple[str, ...]] = {
    "subject": ("Remittance advice {n}", "Payment remittance - {n}", "PO {n}", "New purchase order",
                "Payment confirmation {n}", "Transfer completed", "Remittance {n} from {p}", "Payment sent"),
    "opening": ("Please find attached the remittance advice for payment {n}.", "Your payment of {a} has been "
                "processed; the remittance is attached.", "Please see the attached purchase order {n}.", "Our "
                "purchase order {n} is attached for your confirmation.", "Attached is confirmation of the payment "
                "of {a}.", "The transfer of {a} has been completed, see attached.", "We have paid invoice {n} "
                "({a}) today."),
    "closing": ("Please let us know if anything is missing.", "Thank you for your business.", "Any questions, just "
                "reply to this email.", ""),
}

#: How a genuine authenticator enrolment asks for the QR code (the page shows it; a lure attaches it).
QR_ENROLMENT = ("Open the link on your computer and scan the QR code it shows with the Authenticator app",
                "Scan the QR code on the setup page with your phone to add your account",
                "Use your phone camera to scan the QR code shown after you sign in")
