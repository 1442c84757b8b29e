import T_pkg_T.invoices as invoices
import T_pkg_T.ledger as ledger

SECRET = ROOT + "/T_relative_T"

DOCUMENT = T_document_T


def _attempt(document):
    try:
        invoice = invoices.T_parse_fn_T(document)
    except Exception as error:
        return type(error).__name__
    return [invoice["supplier"], invoice["note"]]


def probe_parse(ctx):
    return invoices.T_parse_fn_T(DOCUMENT)


def probe_book(ctx):
    db = program_module("sqlite3").connect(":memory:")
    invoice = invoices.T_parse_fn_T(DOCUMENT)
    return [ledger.book(db, invoice), ledger.book(db, invoice),
            [list(row) for row in db.execute("SELECT * FROM booked")]]


def probe_no_lines(ctx):
    return invoices.T_parse_fn_T('<Invoice><ID>X-1</ID></Invoice>')


def probe_remittance(ctx):
    empty = invoices.T_parse_fn_T('<Invoice><ID>X-1</ID></Invoice>')
    return ledger.remittance([invoices.T_parse_fn_T(DOCUMENT), empty])


def probe_note(ctx):
    return _attempt(T_attack_note_T)


def probe_supplier(ctx):
    return _attempt(T_attack_name_T)
