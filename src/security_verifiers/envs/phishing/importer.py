"""``sv data import phishing``: mail corpora (``.eml`` directories, mbox, Maildir, CSV and JSON exports) as
imported items, streamed (the readers are in :mod:`.loaders`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.importing import (
    Argument,
    Importer,
    ImportProgress,
    ImportRun,
    ImportSummary,
    positive_limit,
    problem_lines,
    source_names,
)


def run(values: dict[str, Any], progress: ImportProgress) -> ImportRun:
    from security_verifiers.envs.phishing.loaders import ImportReport, import_messages

    limit = positive_limit(values)
    fmt = values["format"]
    if fmt not in ("csv", "json") and (values["text_column"] or values["label_column"]):
        raise ConfigError("--text-column and --label-column are for --format csv or json")
    paths = [Path(p) for p in values["paths"]]
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or directory")
    names = source_names(paths)
    report = ImportReport()
    progress.begin(f"reading {fmt}", total=None, n=0, skipped=0, problems=0)

    def show() -> None:
        progress.update(n=report.imported, skipped=report.skipped_total, problems=report.problems.total)

    def items() -> Iterator[Any]:
        try:
            for item in import_messages(fmt, paths, names, label=values["label"], split=values["split"],
                                        limit=limit, text_column=values["text_column"],
                                        label_column=values["label_column"], report=report):
                yield item
                if report.imported % 200 == 0:
                    show()
        finally:
            show()

    def summary() -> ImportSummary:
        lines = []
        if report.skipped:
            lines.append(f"{report.skipped_total} message(s) skipped:")
            lines += [f"  {count} {reason}" for reason, count in sorted(report.skipped.items(), key=lambda kv: -kv[1])]
            shown = report.skipped_shown
            lines.append(f"  {'the first ' + str(len(shown)) if len(shown) < report.skipped_total else 'they are'}: "
                         + ", ".join(f"{s.source} ({s.reason})" for s in shown))
        lines += problem_lines(report.problems.shown, report.problems.total, "message(s) or record(s)")
        limited = limit is not None and report.imported >= limit
        lines.append(f"{report.imported} item(s) from {report.read} message(s) read in {len(paths)} path(s)"
                     f"{' (--limit reached)' if limited else ''}: {report.skipped_total} skipped, "
                     f"{report.problems.total} problem(s)")
        return ImportSummary(report.imported, report.problems.total, lines,
                             {"read": report.read, "skipped": report.skipped_total})

    return ImportRun(items(), summary)


IMPORTER = Importer(
    help="Mail corpora: .eml directories, mbox, Maildir (Enron), CSV and JSON exports.",
    raw_description=True,
    description="Each message becomes an imported item (label from the corpus or --label; no planted "
    "evidence: its structural indicators are found when it is scored).\n\nformats:\n"
    "  eml      a directory of message files, read recursively (.eml or no extension); files that are not\n"
    "           mail are skipped with the reason\n"
    "  mbox     mbox files (>From lines unquoted; CRLF and 8-bit bodies kept byte for byte)\n"
    "  maildir  a Maildir (cur/, new/; tmp/ is skipped) or a tree of them and of plain message files, as the\n"
    "           Enron corpus: maildir/<user>/<folder>/<n>.\n"
    "  csv      an export with a text column and a label column, found by name: 'Email Text'/'Email Type'\n"
    "           (Phishing Email/Safe Email), body/label (1/0), text/label (phishing/legitimate/spam/ham);\n"
    "           CEAS-style sender, receiver, date, subject columns become the headers of the message; a\n"
    "           text that is a whole message (headers, blank line, body) is taken as it is\n"
    "  json     a JSON array of such records (or {\"emails\": [...]}), or JSON Lines\n\n"
    "labels: a label column's value (case-insensitive: phishing, phishing email, spam, 1, true... or\n"
    "legitimate, safe email, ham, 0, false...); for eml, maildir and mbox, a directory or mbox file named\n"
    "after a class (phishing/, spam/, ham/, legitimate/, phishing-2019.mbox). --label gives the class of a\n"
    "corpus that is all one class; a message whose own label differs is a problem and left out, as is one\n"
    "with no label at all. Identical messages are imported once; messages over 10 MiB are skipped.",
    arguments=(
        Argument(("paths",), {"nargs": "+", "metavar": "PATH",
                              "help": "Files or directories, read in the order given."}),
        Argument(("--format",), {"required": True, "choices": ("eml", "mbox", "maildir", "csv", "json"),
                                 "help": "How PATH is laid out (see above)."}),
        Argument(("--label",), {"choices": ("Phishing", "Legitimate"), "default": None,
                                "help": "The class of every message (a corpus that is all one class); required "
                                "where the corpus has no labels."}),
        Argument(("--text-column",), {"default": None, "help": "csv/json: the column holding the message or its "
                                      "text."}),
        Argument(("--label-column",), {"default": None, "help": "csv/json: the column holding the label."}),
        Argument(("--limit",), {"type": int, "default": None, "help": "Stop after N items."}),
    ),
    run=run,
    progress_columns=("{task.fields[n]:,} items", "{task.fields[skipped]:,} skipped",
                      "{task.fields[problems]:,} problems"),
)
