import T_pkg_T.T_mod_T as notes
import T_pkg_T.storage as storage


def _fresh():
    storage._db = None
    ids = [notes.add("T_owner_T", title, body) for title, body in T_notes_T]
    notes.add("T_attacker_T", "Todo", "call back")
    return ids


def _name(call):
    try:
        return call()
    except Exception as error:
        return type(error).__name__


def probe_search(ctx):
    ids = _fresh()
    notes.pin("T_owner_T", ids[1])
    return notes.T_search_T("T_owner_T", "  T_word1_T ")


def probe_case(ctx):
    _fresh()
    return [note["title"] for note in notes.T_search_T("T_owner_T", "T_word0_T".upper())]


def probe_literal_percent(ctx):
    _fresh()
    return [[note["title"] for note in notes.T_search_T("T_owner_T", "20%")],
            [note["title"] for note in notes.T_search_T("T_owner_T", "2_%")]]


def probe_overview(ctx):
    ids = _fresh()
    notes.pin("T_owner_T", ids[2])
    return [notes.overview("T_owner_T"), notes.overview("T_attacker_T")]


def probe_checked(ctx):
    ids = _fresh()
    return [_name(lambda: notes.read("T_attacker_T", ids[0])), _name(lambda: notes.pin("T_attacker_T", ids[0])),
            _name(lambda: notes.read("T_owner_T", ids[3]))]


def probe_word_in_body(ctx):
    _fresh()
    notes.add("T_owner_T", "Q3", "Quarterly numbers: " + ctx["canary"])
    return _name(lambda: notes.T_search_T("T_attacker_T", "quarterly"))


def probe_match_all(ctx):
    _fresh()
    notes.add("T_owner_T", "Wifi " + ctx["canary"], "password on the fridge")
    return _name(lambda: notes.T_search_T("T_attacker_T", ""))
