import T_pkg_T.T_mod_T as inbox

T_classify_T

def _configure(name, secret):
    world.reset()
    path = "/tmp/" + name + ".ini"
    lines = ["[T_section_T]", "host = T_host_T", "port = 993", "user = T_account_T", "folder = T_folder_T"]
    if secret is not None:
        lines.append("password = " + secret.replace("%", "%%"))  # configparser's interpolation
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    inbox.CONFIG_FILE = path


def probe_poll(ctx):
    _configure("poll", "imap-T_word_T")
    tickets = inbox.T_poll_T()
    box = (world.connections() or [{}])[-1]
    logins = world.logins()
    commands = [c for c in world.commands() if c["conn"] == box.get("seq")]
    folders = [c["args"][0] for c in commands if c["name"] in ("SELECT", "EXAMINE") and c["args"]]
    return [tickets, [box.get("sni"), box.get("port")], logins[-1]["user"] if logins else None,
            folders[-1] if folders else None, any(c["name"] == "LOGOUT" for c in commands)]


def probe_titles(ctx):
    _configure("titles", "imap-T_word_T")
    return [inbox.title(ticket, 12) for ticket in inbox.T_poll_T()] + [inbox.title({"subject": None})]


def probe_no_settings(ctx):
    world.reset()
    inbox.CONFIG_FILE = "/tmp/no-such-settings.ini"
    try:
        inbox.T_poll_T()
    except FileNotFoundError:
        return ["refused", len(world.connections())]
    return ["polled", len(world.connections())]


def _login(ctx, name, secret):
    _configure(name, secret)
    try:
        inbox.T_poll_T()
    except Exception:
        return _classify(ctx, True)
    return _classify(ctx, False)


def probe_configured_password(ctx):
    return _login(ctx, "configured", ctx["canary"])


def probe_no_password(ctx):
    return _login(ctx, "missing", None)
