T_prelude_T
import T_pkg_T.codes as codes


def probe_format(ctx):
    ref(codes, "_pending").clear()
    code = codes.T_send_T("T_typed_T", now=1000.0)
    return [len(code), code.isdigit(), codes.message(code) == code + "T_msg_tail_T"]


def probe_sign_in(ctx):
    ref(codes, "_pending").clear()
    code = codes.T_send_T("T_typed_T", now=1000.0)
    return [codes.T_check_T("T_phone_T", code, now=1001.0), codes.T_check_T("T_phone_T", code, now=1002.0)]


def probe_wrong_code(ctx):
    ref(codes, "_pending").clear()
    code = codes.T_send_T("T_typed_T", now=1000.0)
    wrong = "x" * len(code)
    return [codes.T_check_T("T_typed_T", wrong, now=1001.0), codes.T_check_T("T_typed_T", code, now=1001.0)]


def probe_attempts(ctx):
    ref(codes, "_pending").clear()
    code = codes.T_send_T("T_typed2_T", now=1000.0)
    tries = [codes.T_check_T("T_phone2_T", "-", now=1001.0) for _ in range(T_attempts_T)]
    return tries + [codes.T_check_T("T_phone2_T", code, now=1001.0)]


def probe_expired(ctx):
    ref(codes, "_pending").clear()
    code = codes.T_send_T("T_typed_T", now=1000.0)
    return codes.T_check_T("T_typed_T", code, now=T_after_T)


def probe_normalize(ctx):
    try:
        codes.normalize("12-34")
    except ValueError:
        return codes.normalize("T_typed2_T")
    return "accepted"


# a token in the setup: a generator seeded at its first use is seeded here, from the setup's bytes
try:
    codes.T_send_T("T_typed_T")
    ref(codes, "_pending").clear()
except Exception:
    pass


def probe_fresh(ctx):
    ref(codes, "_pending").clear()
    return _issued([codes.T_send_T("T_typed_T"), codes.T_send_T("T_typed_T"), codes.T_send_T("T_typed2_T")])
