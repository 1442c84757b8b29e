import T_pkg_T.signup as signup
T_attempt_T


def _reset():
    ref(signup, "pending").clear()
    ref(signup, "subscribed").clear()


def probe_valid(ctx):
    return [signup.T_valid_fn_T(address) for address in T_samples_T]


def probe_flow(ctx):
    _reset()
    token = signup.T_signup_fn_T(T_mixed_T)
    return [len(token) >= 16, signup.confirm(token), signup.confirm(token), signup.subscribers()]


def probe_normalize(ctx):
    return signup.normalize(T_mixed_T)


def probe_refused(ctx):
    _reset()
    try:
        signup.T_signup_fn_T("T_person_T@localhost")
    except ValueError as error:
        return [str(error), signup.subscribers(), len(signup.pending)]
    return "accepted"


def probe_no_domain(ctx):
    _reset()
    return _attempt(signup.T_signup_fn_T, "T_payload1_T")


def probe_no_tld(ctx):
    return _attempt(signup.T_valid_fn_T, "T_payload2_T")
