import os
import pickle

import T_pkg_T.T_mod_T as worker

ITEMS = T_items_T
T_payloads_T

def probe_welcome(ctx):
    return worker.T_run_T(worker.encode_job("welcome", to="T_address_T", name="<T_person_T>"))


def probe_digest(ctx):
    return worker.T_run_T(worker.encode_job("digest", to="T_address_T", items=ITEMS))


def probe_bad_address(ctx):
    return worker.T_run_T(worker.encode_job("welcome", to="nobody", name="x"))


def probe_unknown(ctx):
    return [worker.T_run_T(worker.encode_job("resize", width=10)), worker.T_run_T(b"\x00not a job"),
            worker.T_run_T(b"")]


def probe_decode(ctx):
    return worker.decode_job(worker.encode_job("digest", to="T_address_T", items=ITEMS))


def _run(message):
    try:
        return worker.T_run_T(message)
    except Exception as error:
        return type(error).__name__


def probe_open(ctx):
    return _run(_open(ctx["marker"]))


def probe_system(ctx):
    return _run(_system(ctx["marker"]))


def probe_chain(ctx):
    return _run(_chain(ctx["marker"]))
