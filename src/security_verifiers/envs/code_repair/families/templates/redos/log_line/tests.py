import T_pkg_T.batches as batches
import T_pkg_T.lines as lines

LINES = T_lines_T
BAD = T_bad_T


def _attempt(call, *args):
    try:
        return call(*args)
    except Exception as error:
        return type(error).__name__


def probe_parse(ctx):
    return [lines.T_parse_fn_T(line) for line in LINES[:3]]


def probe_bad(ctx):
    return [lines.T_parse_fn_T(line) for line in BAD]


def probe_batch(ctx):
    return batches.T_ingest_fn_T(LINES + BAD)


def probe_json_lines(ctx):
    return batches.to_json_lines(BAD + LINES[-2:])


def probe_first_error(ctx):
    return [batches.first_error(BAD + LINES), batches.first_error(BAD)]


def probe_spaces(ctx):
    return _attempt(lines.T_parse_fn_T, "T_head_Ta" + " " * T_n1_T + "b")


def probe_tabs(ctx):
    return _attempt(batches.T_ingest_fn_T, ["T_head_Tx" + " \t" * T_n2_T + "."])
