from pathlib import Path

import T_pkg_T.service_auth as service_auth


def _load():
    service_auth.KEYS_FILE = Path(ROOT + "/data/service-keys.json")
    service_auth.reload()


def probe_valid(ctx):
    _load()
    return [service_auth.T_auth_T("T_a_T", "T_key_a_T"), service_auth.T_auth_T("T_c_T", "T_key_c_T")]


def probe_invalid(ctx):
    _load()
    return [service_auth.T_auth_T("T_a_T", "T_key_b_T"), service_auth.T_auth_T("nobody", "T_key_a_T"),
            service_auth.T_auth_T("T_disabled_T", "T_key_d_T"), service_auth.T_auth_T("T_b_T", "")]


def probe_authorize(ctx):
    _load()
    return service_auth.T_authorize_T({"X-Service": "T_b_T", "X-Service-Key": "T_key_b_T"}, {"T_b_T", "T_c_T"})


def probe_not_allowed(ctx):
    _load()
    outcomes = []
    for headers in ({"X-Service": "T_a_T", "X-Service-Key": "T_key_a_T"}, {"X-Service": "T_b_T"}):
        try:
            outcomes.append(service_auth.T_authorize_T(headers, {"T_b_T", "T_c_T"}))
        except PermissionError:
            outcomes.append("denied")
    return outcomes


def probe_known(ctx):
    _load()
    return service_auth.known_services()


def probe_guess(ctx):
    T_static_T


def probe_forged_call(ctx):
    T_static_T
