import T_pkg_T.T_mod_T as accounts
import T_pkg_T.session_store as sessions


def _location(return_to):
    try:  # the token the program drew goes back as it is: the replay hands back its own run's token
        return accounts.T_fn_T(sessions.start_session("T_other_T"), return_to)
    except Exception as error:
        return type(error).__name__


def probe_back_to_app(ctx):
    return [_location("T_app0_T"), _location("T_app1_T")]


def probe_no_return(ctx):
    return [_location(None), _location("")]


def probe_foreign(ctx):
    return [_location("https://www.example.org/"), _location("http://T_domain_T/"),
            _location("https://T_domain_T.example.org/")]


def probe_everywhere(ctx):
    tokens = [sessions.start_session("T_user_T") for _ in range(3)]
    one = accounts.T_fn_T(tokens[0], "T_app0_T")
    left = sessions.sessions_of("T_user_T")
    accounts.T_fn_T(tokens[1], None, everywhere=True)
    return [one, left, sessions.sessions_of("T_user_T")]


def probe_check(ctx):
    return [accounts.T_check_T("T_app0_T"), accounts.T_check_T("https://T_word_T.example.com/")]


def probe_suffix(ctx):
    return _location("https://" + ctx["canary"] + ".evilT_domain_T/welcome")


def probe_dashed_suffix(ctx):
    return _location("https://" + ctx["canary"] + ".evil-T_domain_T/")
