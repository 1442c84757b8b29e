"""Alert mail of the T_org_T monitoring: failing checks are mailed to the on-call list through the relay."""

import smtplib
from email.message import EmailMessage
from string import Template

from T_pkg_T import config

BODY = Template("Check $check is $status.\n\n$detail")


def compose(check: str, status: str, detail: str, cfg: dict) -> EmailMessage:
    message = EmailMessage()
    message["From"] = cfg["user"]
    message["To"] = ", ".join(cfg["recipients"])
    message["Subject"] = f"[{status.upper()}] {check}"
    message.set_content(BODY.substitute(check=check, status=status, detail=detail).rstrip() + "\n")
    return message


def T_send_T(check: str, status: str, detail: str = "") -> str:
    """Mail an alert about ``check`` to the on-call list; returns its subject."""
    cfg = config.settings()
    if not cfg["recipients"]:
        raise RuntimeError("no recipients configured")
    message = compose(check, status, detail, cfg)
    with smtplib.SMTP(cfg["host"], cfg["port"], timeout=10) as relay:
        relay.starttls()
        relay.login(cfg["user"], password="T_literal_T")
        relay.send_message(message)
    return message["Subject"]


def digest(results: dict[str, str]) -> list[str]:
    """One alert per failing check (any status but "ok"), in name order; returns the subjects sent."""
    return [T_send_T(name, status) for name, status in sorted(results.items()) if status != "ok"]
