import base64
import datetime
import os
import pathlib
import pickle

import T_pkg_T.T_mod_T as snapshots

T_payloads_T

def _variables():
    """The workspace's variables, built in the program (a proxy of its dict): the date, the decimal, the
    complex number and the range are the program's objects, and so is the Counter, which zip and map put
    in the dict there (a Counter sent from here would arrive as a plain dict)."""
    builtins = program_module("builtins")
    variables = ref(program_module("types").SimpleNamespace(), "__dict__")
    variables.update(builtins.zip(["T_c_T"], builtins.map(program_module("collections").Counter, ["T_c_TT_d_T"])))
    variables["T_a_T"] = program_module("datetime").date(T_year_T, T_month_T, T_day_T)
    variables["T_b_T"] = program_module("decimal").Decimal("T_amount_T")
    variables["T_d_T"] = [builtins.complex(1, -2), builtins.range(3), {"x", "y"}, 7, "text"]
    return variables


def _restore(data):
    try:
        return snapshots.T_restore_T(base64.b64encode(snapshots.MAGIC + data).decode())
    except Exception as error:
        return type(error).__name__


def probe_round_trip(ctx):
    variables = _variables()
    back = snapshots.T_restore_T(snapshots.export_snapshot(variables))
    values = back["T_d_T"]
    return [program_module("operator").eq(back, variables), back["T_a_T"].isoformat(), str(back["T_b_T"]),
            sorted(back["T_c_T"].items()), [str(values[0]), list(values[1]), sorted(values[2])] + values[3:]]


def probe_summary(ctx):
    # the restored variables go from T_restore_T to summary inside the program, where the Counter is a Counter
    builtins = program_module("builtins")
    text = snapshots.export_snapshot(_variables())
    return builtins.list(builtins.map(snapshots.summary, builtins.map(snapshots.T_restore_T, [text])))[0]


def probe_refused(ctx):
    other = pickle.dumps({"path": pathlib.PurePosixPath("/etc")})
    when = _restore(pickle.dumps({"when": datetime.datetime(2024, 1, 2, 3, 4)}))
    return [_restore(other), _restore(pickle.dumps([1, 2])), str(when["when"])]


def probe_not_snapshot(ctx):
    try:
        snapshots.T_restore_T(base64.b64encode(b"PK\x03\x04").decode())
    except ValueError:
        return "refused"
    return "loaded"


def probe_eval(ctx):
    return _restore(_eval(ctx["marker"]))


def probe_exec(ctx):
    return _restore(_exec(ctx["marker"]))


def probe_chain(ctx):
    return _restore(_chain(ctx["marker"]))
