import T_pkg_T.ledger as ledger
import T_pkg_T.verify as verify

verify.UPLOAD_ROOT = ROOT + "/data/uploads"


def probe_digest(ctx):
    return verify.stored_digest("T_first_T")


def probe_verify_ok(ctx):
    return verify.verify("T_second_T", "T_second_digest_T".upper())


def probe_verify_bad(ctx):
    return verify.verify("T_first_T", "T_second_digest_T")


def probe_store(ctx):
    import os
    verify.UPLOAD_ROOT = "/tmp/uploads"
    ledger._db = None  # a ledger of its own: probes run in any order
    os.makedirs(verify.UPLOAD_ROOT, exist_ok=True)
    try:
        digest = verify.store("new.bin", b"hello")
        return [digest, verify.stored_digest("new.bin"), verify.verify("new.bin", digest), ledger.verified()]
    finally:
        verify.UPLOAD_ROOT = ROOT + "/data/uploads"


def probe_semicolon(ctx):
    try:
        verify.verify("T_first_T; touch " + ctx["marker"], "00")
    except Exception as error:
        return type(error).__name__
    return "ran"


def probe_pipe(ctx):
    try:
        verify.stored_digest("nothing || touch " + ctx["marker"])
    except Exception as error:
        return type(error).__name__
    return "ran"
