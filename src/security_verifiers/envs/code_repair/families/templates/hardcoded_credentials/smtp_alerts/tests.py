import email
from email.policy import default

import T_pkg_T.T_mod_T as alerts
import T_pkg_T.config as config

T_classify_T

def _configure(secret):
    world.reset()
    environ = program_module("os").environ
    environ.update({"T_prefix_T_HOST": "T_host_T", "T_prefix_T_PORT": "T_port_T", "T_prefix_T_USER": "T_user_T",
                    "T_prefix_T_RECIPIENTS": "T_recipients_T"})
    if secret is None:
        environ.pop("T_prefix_T_PASSWORD", None)
    else:
        environ["T_prefix_T_PASSWORD"] = secret


def _sent():
    """The mails the relay took: From, To, Subject and text of each."""
    out = []
    for mail in world.mails():
        message = email.message_from_string(mail["data"].replace("\r\n", "\n"), policy=default)
        out.append([message["From"], message["To"], message["Subject"], message.get_content()])
    return out


def probe_send(ctx):
    _configure("relay-T_word_T")
    subject = alerts.T_send_T("T_check_T", "critical", "disk 97% full")
    relay = (world.connections() or [{}])[-1]
    logins = world.logins()
    return [subject, [relay.get("sni"), relay.get("port")], relay.get("tls") == "starttls",
            logins[-1]["user"] if logins else None, _sent()]


def probe_digest(ctx):
    _configure("relay-T_word_T")
    return [alerts.digest(T_checks_T), len(world.mails())]


def probe_no_recipients(ctx):
    _configure("relay-T_word_T")
    program_module("os").environ["T_prefix_T_RECIPIENTS"] = " , "
    try:
        alerts.T_send_T("T_check_T", "warning")
    except RuntimeError:
        return ["refused", len(world.connections())]
    return ["sent", len(world.connections())]


def probe_compose(ctx):
    message = alerts.compose("T_check_T", "ok", "", config.settings() | {"user": "a@b.c", "recipients": ["x@y.z"]})
    return [message["From"], message["To"], message["Subject"], message.get_content()]


def _login(ctx, secret):
    _configure(secret)
    try:
        alerts.T_send_T("T_check_T", "critical", "probe")
    except Exception:
        return _classify(ctx, True)
    return _classify(ctx, False)


def probe_configured_secret(ctx):
    return _login(ctx, ctx["canary"])


def probe_no_secret(ctx):
    return _login(ctx, None)
