import T_pkg_T.directory as directory
T_active_T

MEMBERS = T_members_T


def _edited(**fields):
    return [dict(MEMBERS[0], **fields)] + MEMBERS[1:]


def probe_card(ctx):
    return directory.T_card_fn_T(MEMBERS[1])


def probe_all(ctx):
    return directory.T_list_fn_T(MEMBERS)


def probe_team(ctx):
    return directory.T_list_fn_T(MEMBERS, "T_team_T")


def probe_filter(ctx):
    return [directory.matching(MEMBERS, "  T_needle_T "), directory.team_sizes(MEMBERS)]


def probe_bad_handle(ctx):
    try:
        directory.T_card_fn_T(dict(MEMBERS[0], handle="no spaces"))
    except ValueError:
        return "refused"
    return "rendered"


def probe_name(ctx):
    return active(directory.T_list_fn_T, _edited(name='"><script>' + ctx["canary"] + "</script>"))


def probe_title(ctx):
    return active(directory.T_list_fn_T, _edited(title='Lead" onmouseover="' + ctx["canary"]))


def probe_team_name(ctx):
    return active(directory.T_card_fn_T, dict(MEMBERS[2], team="<img src=x onerror=" + ctx["canary"] + ">"))
