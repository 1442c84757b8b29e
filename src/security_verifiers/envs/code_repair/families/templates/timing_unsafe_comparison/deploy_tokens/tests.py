import json
from pathlib import Path

import T_pkg_T.deploy_hook as hook
import T_pkg_T.tokens as tokens


def _tokens(previous=True):
    tokens.TOKENS_FILE = Path("/tmp/deploy-tokens.json")
    data = {"current": "T_current_T", "previous": "T_previous_T" if previous else None}
    tokens.TOKENS_FILE.write_text(json.dumps(data))
    del hook._deployments[:]


def probe_bearer(ctx):
    return [tokens.bearer("Bearer  abc "), tokens.bearer("Basic abc"), tokens.bearer(None),
            tokens.bearer("Bearer ")]


def probe_tokens(ctx):
    _tokens()
    return [tokens.T_authorized_T("T_current_T"), tokens.T_authorized_T("T_previous_T"),
            tokens.T_authorized_T("T_current_T"[:-1]), tokens.T_authorized_T(None), tokens.T_authorized_T("")]


def probe_rotate(ctx):
    _tokens()
    tokens.rotate("T_s1_T-T_s2_T")
    return [tokens.T_authorized_T("T_s1_T-T_s2_T"), tokens.T_authorized_T("T_current_T"), tokens.T_authorized_T("T_previous_T"),
            json.loads(Path("/tmp/deploy-tokens.json.bak").read_text())["current"]]


def probe_rotation_over(ctx):
    _tokens(previous=False)
    return [tokens.T_authorized_T("T_current_T"), tokens.T_authorized_T("T_previous_T")]


def probe_trigger(ctx):
    _tokens()
    statuses = [hook.T_trigger_T({"Authorization": "Bearer T_current_T"}, "T_s1_T", "T_ref1_T"),
                hook.T_trigger_T({"Authorization": "bearer T_previous_T"}, "T_s2_T", "T_ref2_T"),
                hook.T_trigger_T({"Authorization": "Bearer T_s1_T"}, "T_s1_T", "T_ref1_T"),
                hook.T_trigger_T({}, "T_s1_T", "T_ref1_T"),
                hook.T_trigger_T({"Authorization": "Bearer T_current_T"}, "T_s1_T; rm", "T_ref1_T"),
                hook.T_trigger_T({"Authorization": "Bearer T_current_T"}, "T_s1_T", "main")]
    return [statuses, hook.queued()]


def probe_guess(ctx):
    T_static_T


def probe_forged_hook(ctx):
    T_static_T
