import T_pkg_T.signing as signing
import T_pkg_T.webhooks as hooks

signing.WEBHOOK_SECRET = b"T_secret_T"
BODY = T_body_T
OTHER = T_other_T


def probe_verify_ok(ctx):
    return signing.T_verify_T(BODY, "T_good_T")


def probe_verify_bad(ctx):
    return [signing.T_verify_T(BODY, "T_wrong_T"), signing.T_verify_T(OTHER, "T_good_T"), signing.T_verify_T(BODY, "")]


def probe_delivery(ctx):
    hooks.drain()
    statuses = [hooks.T_receive_T({"T_header_T": "T_good_T"}, BODY), hooks.T_receive_T({"T_header_T": "T_good_other_T"}, OTHER)]
    return [statuses, hooks.drain(), hooks.drain()]


def probe_unsigned(ctx):
    hooks.drain()
    return [hooks.T_receive_T({}, BODY), hooks.T_receive_T({"T_header_T": "T_good_other_T"}, BODY), hooks.drain()]


def probe_not_json(ctx):
    hooks.drain()
    return [hooks.T_receive_T({"T_header_T": "T_sig_text_T"}, b"not json"), hooks.T_receive_T({"T_header_T": "T_sig_list_T"},
                                                                                   b"[1, 2]")]


def probe_tally(ctx):
    events = [{"type": "a"}, {"type": "b"}, {"type": "a"}]
    return [hooks.tally(events), hooks.tally_xml(events + [{"type": 'x"<y'}])]


def probe_guess(ctx):
    T_static_T


def probe_forged_delivery(ctx):
    T_static_T
