"""Readers of real mail corpora into imported ``phishing`` items (``source="imported"``, no planted evidence).

Formats (:data:`FORMATS`), each read from local files, messages in a stable order (sorted paths, file order):

- ``eml``: a directory of messages, one per file, read recursively (``.eml`` or any other name: a file is a
  message when it starts with a header block); other files are skipped with the reason.
- ``mbox``: mbox files, split by the standard library's :class:`mailbox.mbox`. Body lines quoted as ``>From ``
  are unquoted the mboxrd way (one ``>`` removed), which is also right for mboxo files except for a body line
  that really began with ``>From``. CRLF files and 8-bit bodies are kept byte for byte.
- ``maildir``: a Maildir (``cur/`` and ``new/``; ``tmp/`` holds deliveries in progress and is skipped), or any
  tree of them and of plain message files, such as the Enron corpus (``maildir/<user>/<folder>/<n>.``, files
  without an extension) or Maildir++ folders (``.Sent/cur``).
- ``csv``: an export with a text column and a label column (see :func:`resolve_columns` for the names found
  without help; ``--text-column``/``--label-column`` name others). A text that is a whole message (a header
  block, then a blank line) is taken as it is; a text-only row becomes a minimal RFC 5322 message with the
  headers the row has (CEAS-style ``sender``, ``receiver``, ``date``, ``subject`` columns) and the text as body.
- ``json``: a JSON array of such records (or an object holding one under ``emails``/``data``/``records``/
  ``items``), or JSON Lines; read the same way as CSV rows.

Labels come from the corpus (a label column; for ``eml``, ``maildir`` and ``mbox``, a directory, or an mbox
file, named after a class: ``phishing/``, ``spam/``, ``ham/``, ``legitimate/``...) or from ``label=`` (the
``--label`` of a corpus that is all one class). Where both are present and differ, the message is a problem and
left out: the user's claim and the corpus disagree, and neither is silently preferred. ``spam`` is read as
Phishing: the exports that mix the two classes name the malicious one so.

Identical messages (equal bytes once line endings are unified) are imported once, the others skipped; messages
longer than :data:`~security_verifiers.envs.phishing.items.MAX_RAW_CHARS` are skipped. Memory stays bounded by
one message (plus 16 bytes per message for the duplicate check), except for a JSON array, which is read whole.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import mailbox
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.importing import Problem, ProblemLog
from security_verifiers.core.types import Item
from security_verifiers.envs.phishing.items import MAX_RAW_CHARS, PhishingInput, PhishingTarget

FORMATS = ("eml", "mbox", "maildir", "csv", "json")
Label = Literal["Phishing", "Legitimate"]
#: The most bytes a message within :data:`MAX_RAW_CHARS` can take (4 UTF-8 bytes per character at worst).
MAX_BYTES = 4 * MAX_RAW_CHARS
#: Examples of skipped messages kept in full (the rest are counted by reason).
KEEP_SKIPPED = 20

_PHISHING = {"phishing", "phishing email", "phish", "spam", "malicious", "fraud", "scam", "1", "1.0", "true", "yes"}
_LEGITIMATE = {"legitimate", "legitimate email", "legit", "safe", "safe email", "ham", "easy_ham", "hard_ham",
               "benign", "normal", "not phishing", "0", "0.0", "false", "no"}
#: Column names tried in order (compared case-insensitively, spaces and underscores alike).
TEXT_COLUMNS = ("email text", "text", "body", "message", "content", "email", "text combined", "mail", "raw")
LABEL_COLUMNS = ("email type", "label", "class", "category", "type", "is phishing", "phishing", "spam", "target")
#: CEAS-style columns a text-only row's message takes its headers from.
HEADER_COLUMNS = {"sender": "From", "from": "From", "receiver": "To", "to": "To", "date": "Date",
                  "subject": "Subject"}
_FIELD = re.compile(rb"^[\x21-\x39\x3b-\x7e]+[ \t]*:")
_KNOWN_FIELDS = {b"from", b"to", b"subject", b"date", b"message-id", b"received", b"return-path", b"mime-version",
                 b"delivered-to", b"reply-to", b"cc", b"x-from", b"x-to", b"content-type"}
_MBOXRD = re.compile(rb"^>(>*From )", re.MULTILINE)
_HTML = re.compile(r"^\s*(<!doctype html|<html)|<body[\s>]", re.IGNORECASE)


@dataclass(frozen=True)
class Read:
    """One message as read: where it comes from (file, or file and record), its bytes, the corpus's label."""

    source: str
    raw: bytes
    label: Label | None


@dataclass(frozen=True)
class Skip:
    """A file or record that is not a message to import (not mail, too large, a duplicate), and why."""

    source: str
    reason: str


Produced = Read | Skip | Problem


@dataclass
class ImportReport:
    """What an import read: messages, skipped files and records (counted by reason), problems."""

    read: int = 0
    imported: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_shown: list[Skip] = field(default_factory=list)
    problems: ProblemLog = field(default_factory=ProblemLog)

    def skip(self, skip: Skip) -> None:
        self.skipped[skip.reason] = self.skipped.get(skip.reason, 0) + 1
        if len(self.skipped_shown) < KEEP_SKIPPED:
            self.skipped_shown.append(skip)

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def label_of(value: object) -> Label | None:
    """The class a corpus's label value names (case-insensitive), None when it names none.

    >>> label_of("Phishing Email"), label_of(" ham "), label_of(1), label_of("Safe Email"), label_of("maybe")
    ('Phishing', 'Legitimate', 'Phishing', 'Legitimate', None)
    """
    text = " ".join(str(value).strip().lower().split())
    if text in _PHISHING:
        return "Phishing"
    if text in _LEGITIMATE:
        return "Legitimate"
    return None


def class_of_name(name: str) -> Label | None:
    """The class a directory or mbox file is named after (``phishing``, ``phishing-2019.mbox``, ``easy_ham``), or
    None; numbers are not classes here (a Maildir named ``1`` is not phishing).

    >>> class_of_name("phishing-2019.mbox"), class_of_name("Ham"), class_of_name("inbox"), class_of_name("1")
    ('Phishing', 'Legitimate', None, None)
    """
    stem = re.sub(r"\.(mbox|mbx|txt)$", "", name.lower())
    stem = re.sub(r"[-_. ]*\d+$", "", stem)
    if not stem or stem.isdigit():
        return None
    return label_of(stem)


def looks_like_mail(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts with an RFC 5322 header block that names a common field.

    >>> looks_like_mail(b"Message-ID: <1@x>\\r\\nSubject: hi\\r\\n\\r\\nbody"), looks_like_mail(b"hello: world")
    (True, False)
    """
    lines = head.split(b"\n")
    if lines and lines[0].startswith(b"From "):  # an mbox envelope line before the headers
        lines = lines[1:]
    known = False
    for line in lines[:-1] if len(lines) > 1 else lines:  # the last piece may be cut mid-line
        line = line.rstrip(b"\r")
        if not line:
            break
        if line[:1] in (b" ", b"\t"):
            continue
        if not _FIELD.match(line):
            return False
        known = known or line.split(b":", 1)[0].strip().lower() in _KNOWN_FIELDS
    return known


def _strip_envelope(raw: bytes) -> bytes:
    """A message file without the mbox ``From `` envelope line some tools write before the headers."""
    if raw.startswith(b"From "):
        end = raw.find(b"\n")
        return raw[end + 1:] if end >= 0 else b""
    return raw


def _read_file(path: Path, source: str) -> Read | Skip | Problem | None:
    """A message file as a message (label to be set), a skip (not mail, too large), or None when it is empty."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return Skip(source, f"larger than {MAX_RAW_CHARS:,} characters")
        raw = path.read_bytes()
    except OSError as err:
        return Problem(source, None, f"cannot read: {err.strerror or err}")
    if not raw.strip():
        return Skip(source, "an empty file")
    if not looks_like_mail(raw[:65536]):
        return Skip(source, "not a mail message (no header block)")
    return Read(source, _strip_envelope(raw), None)


def _walk(root: Path) -> Iterator[Path]:
    """The files under ``root``, sorted, not following links out of it; hidden files and directories are left
    out except Maildir++ folders (``.Sent``), and so are Maildir ``tmp/`` directories."""
    for directory, dirs, files in os.walk(root):
        here = Path(directory)
        dirs[:] = sorted(d for d in dirs if (not d.startswith(".") or (here / d / "cur").is_dir()) and
                         not (d == "tmp" and ((here / "cur").is_dir() or (here / "new").is_dir())))
        for name in sorted(files):
            if not name.startswith("."):
                yield here / name


def _class_of_path(relative: Path) -> Label | None:
    """The class named by the innermost class-named directory of ``relative`` (the root's name, then the path
    inside it: nothing above the directory the user gave counts)."""
    for part in reversed(relative.parts[:-1]):
        label = class_of_name(part)
        if label is not None:
            return label
    return None


def read_tree(root: Path, name: str) -> Iterator[Produced]:
    """``eml`` and ``maildir``: every message file under ``root`` (a directory, or one file)."""
    if root.is_file():
        produced = _read_file(root, name)
        if produced is not None:
            yield produced
        return
    if not root.is_dir():
        raise ConfigError(f"{root}: no such directory")
    found = False
    for path in _walk(root):
        found = True
        relative = path.relative_to(root)
        source = f"{name}/{relative.as_posix()}" if name else relative.as_posix()
        produced = _read_file(path, source)
        if isinstance(produced, Read):
            produced = Read(produced.source, produced.raw, _class_of_path(Path(root.resolve().name) / relative))
        if produced is not None:
            yield produced
    if not found:
        raise ConfigError(f"{root}: no files under it (an empty directory?)")


def read_mbox(path: Path, name: str) -> Iterator[Produced]:
    """Every message of an mbox file, each read up to :data:`MAX_BYTES` (the file is never held whole)."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    label = class_of_name(path.name)
    try:
        box = mailbox.mbox(path, create=False)
    except OSError as err:
        raise ConfigError(f"{path}: cannot open: {err.strerror or err}") from err
    try:
        keys = box.keys()  # one pass over the file for the offsets of its messages
        if not keys:
            with open(path, "rb") as handle:
                head = handle.read(65536)
            reason = "empty" if not head.strip() else "not an mbox file (no 'From ' line starts a message)"
            raise ConfigError(f"{path}: {reason}")
        for number, key in enumerate(keys, start=1):
            source = f"{name}#{number}"
            with box.get_file(key) as handle:
                raw = handle.read(MAX_BYTES + 1)
            if len(raw) > MAX_BYTES:
                yield Skip(source, f"larger than {MAX_RAW_CHARS:,} characters")
                continue
            if not looks_like_mail(raw[:65536]):
                yield Problem(name, number, "not a mail message (no header block): a body line 'From ' left "
                              "unquoted may have split a message here")
                continue
            yield Read(source, _MBOXRD.sub(rb"\1", raw), label)
    finally:
        box.close()


def _norm(key: str) -> str:
    return " ".join(key.replace("\ufeff", "").replace("_", " ").replace("-", " ").strip().lower().split())


@dataclass(frozen=True)
class Columns:
    """Which columns of a CSV or JSON record hold the text, the label and header values."""

    text: str | None
    label: str | None
    headers: dict[str, str]  # column -> header field

    def describe(self) -> str:
        return f"text: {self.text!r}, label: {self.label!r}, headers: {self.headers or 'none'}"


def resolve_columns(names: Iterable[str], text: str | None = None, label: str | None = None) -> Columns:
    """The text, label and header columns among ``names``: the ones the user named (exactly), else the first of
    :data:`TEXT_COLUMNS` / :data:`LABEL_COLUMNS` present (``Email Text``/``Email Type``, ``body``/``label``,
    ``text``/``label``...); CEAS-style ``sender``, ``receiver``, ``date``, ``subject`` columns become headers.

    >>> resolve_columns(["", "Email Text", "Email Type"]).text
    'Email Text'
    >>> c = resolve_columns(["sender", "receiver", "date", "subject", "body", "label", "urls"])
    >>> c.text, c.label, sorted(c.headers.values())
    ('body', 'label', ['Date', 'From', 'Subject', 'To'])
    """
    names = [n for n in names if isinstance(n, str)]
    by_norm: dict[str, str] = {}
    for name in names:
        by_norm.setdefault(_norm(name), name)

    def pick(given: str | None, options: tuple[str, ...], what: str) -> str | None:
        if given is not None:
            if given in names:
                return given
            if _norm(given) in by_norm:
                return by_norm[_norm(given)]
            raise ConfigError(f"no {what} column {given!r} (columns: {', '.join(map(repr, names))})")
        return next((by_norm[o] for o in options if o in by_norm), None)

    text_column = pick(text, TEXT_COLUMNS, "text")
    label_column = pick(label, tuple(o for o in LABEL_COLUMNS if by_norm.get(o) != text_column), "label")
    headers = {by_norm[n]: f for n, f in HEADER_COLUMNS.items() if n in by_norm and by_norm[n] != text_column}
    return Columns(text_column, label_column, headers)


def _header_value(value: str) -> str:
    return " ".join(value.split())


def message_from_fields(text: str, headers: dict[str, str]) -> bytes:
    """A minimal RFC 5322 message: the given header values (whitespace collapsed, UTF-8 as RFC 6532 allows), a
    text/plain (or text/html, when the text is HTML) UTF-8 body with the text as it is.

    >>> message_from_fields("Hi.\\r\\nBye", {"Subject": "Hello\\n there"}).decode().splitlines()[0]
    'Subject: Hello there'
    """
    lines = [f"{name}: {_header_value(value)}" for name, value in headers.items() if value and value.strip()]
    subtype = "html" if _HTML.search(text[:4096]) else "plain"
    lines += ["MIME-Version: 1.0", f'Content-Type: text/{subtype}; charset="utf-8"',
              "Content-Transfer-Encoding: 8bit", "", text.replace("\r\n", "\n").replace("\r", "\n")]
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def _text_of(value: object) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def record_message(record: dict[str, Any], columns: Columns, source: str, line: int,
                   file: str) -> Read | Problem:
    """A CSV row or JSON record as a message with the label its label column gives."""
    text = _text_of(record.get(columns.text)) if columns.text is not None else ""
    if not text.strip():
        return Problem(file, line, f"no text in column {columns.text!r}")
    label: Label | None = None
    if columns.label is not None:
        value = _text_of(record.get(columns.label))
        if not value.strip():
            return Problem(file, line, f"no label in column {columns.label!r}")
        label = label_of(value)
        if label is None:
            return Problem(file, line, f"unknown label {value.strip()[:60]!r} in column {columns.label!r} (known: "
                           "phishing/spam/1/true... or legitimate/safe/ham/0/false...)")
    encoded = text.encode("utf-8", "surrogateescape")
    if looks_like_mail(encoded[:65536]) and re.search(rb"\r?\n\r?\n", encoded[:65536]):
        raw = _strip_envelope(encoded)  # a whole message (an export of raw mail)
    else:
        raw = message_from_fields(text, {field_: _text_of(record.get(column))
                                         for column, field_ in columns.headers.items()})
    return Read(source, raw, label)


def _delimiter(header_line: str) -> str:
    counts = {d: header_line.count(d) for d in (",", ";", "\t", "|")}
    return max(counts, key=lambda d: counts[d]) if any(counts.values()) else ","


def read_csv(path: Path, name: str, text: str | None = None, label: str | None = None) -> Iterator[Produced]:
    """CSV rows (quoted fields may span lines; a BOM, ``;``/tab/``|`` delimiters and non-UTF-8 bytes are kept)."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    csv.field_size_limit(MAX_BYTES)  # a field past it is a broken quote or a message too large to import
    with open(path, newline="", encoding="utf-8-sig", errors="surrogateescape") as handle:
        first = handle.readline()
        handle.seek(0)
        if not first.strip():
            raise ConfigError(f"{path}: empty, or no header line")
        reader = csv.DictReader(handle, delimiter=_delimiter(first.lstrip("\ufeff")))
        columns = resolve_columns(reader.fieldnames or (), text, label)
        if columns.text is None:
            raise ConfigError(f"{path}: no text column found among {reader.fieldnames}; name it with --text-column")
        yield from _csv_rows(reader, columns, path, name)


def _csv_rows(reader: csv.DictReader[str], columns: Columns, path: Path, name: str) -> Iterator[Produced]:
    end = reader.line_num
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            yield Problem(name, end + 1, f"unreadable CSV ({err}); the rest of the file is not read")
            return
        line, end = end + 1, reader.line_num
        if None in row:
            yield Problem(name, line, "more fields than the header has")
            continue
        yield record_message(row, columns, f"{name}:{line}", line, name)


_JSON_LISTS = ("emails", "data", "records", "items", "messages")


def read_json(path: Path, name: str, text: str | None = None, label: str | None = None) -> Iterator[Produced]:
    """A JSON array of records (or an object with one under a usual key), or JSON Lines (streamed)."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    with open(path, encoding="utf-8-sig", errors="surrogateescape") as handle:
        first = ""
        for first in handle:
            if first.strip():
                break
        if not first.strip():
            raise ConfigError(f"{path}: empty")
        try:
            head = json.loads(first)  # a whole object on the first line: JSON Lines, unless it wraps the list
            lines = isinstance(head, dict) and not any(isinstance(head.get(k), list) for k in _JSON_LISTS)
        except ValueError:
            lines = False
        handle.seek(0)
        if lines:
            yield from _json_lines(handle, path, name, text, label)
            return
        try:
            data = json.load(handle)
        except ValueError as err:
            raise ConfigError(f"{path}: neither JSON nor JSON Lines ({err})") from err
    if isinstance(data, dict):
        data = next((data[k] for k in _JSON_LISTS if isinstance(data.get(k), list)), None)
    if not isinstance(data, list):
        raise ConfigError(f"{path}: a JSON file needs a list of records (or an object with one under "
                          f"{', '.join(_JSON_LISTS)})")
    yield from _json_records(enumerate(data, start=1), path, name, text, label)


def _json_lines(handle: Any, path: Path, name: str, text: str | None, label: str | None) -> Iterator[Produced]:
    def records() -> Iterator[tuple[int, Any]]:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except ValueError as err:
                    yield number, Problem(name, number, f"not JSON: {err}")

    yield from _json_records(records(), path, name, text, label)


def _json_records(records: Iterable[tuple[int, Any]], path: Path, name: str, text: str | None,
                  label: str | None) -> Iterator[Produced]:
    resolved: dict[tuple[str, ...], Columns] = {}
    for number, record in records:
        if isinstance(record, Problem):
            yield record
            continue
        if not isinstance(record, dict):
            yield Problem(name, number, "a record must be a JSON object")
            continue
        keys = tuple(record)
        if keys not in resolved:
            try:
                resolved[keys] = resolve_columns(keys, text, label)
            except ConfigError as err:
                yield Problem(name, number, str(err))
                continue
        columns = resolved[keys]
        if columns.text is None:
            yield Problem(name, number, f"no text field among {list(keys)}; name it with --text-column")
            continue
        yield record_message(record, columns, f"{name}:{number}", number, name)


def readers(fmt: str, text_column: str | None = None,
            label_column: str | None = None) -> Callable[[Path, str], Iterator[Produced]]:
    """The reader of ``fmt``: a function of (path, name to cite it by)."""
    if fmt in ("eml", "maildir"):
        return read_tree
    if fmt == "mbox":
        return read_mbox
    if fmt == "csv":
        return lambda path, name: read_csv(path, name, text_column, label_column)
    if fmt == "json":
        return lambda path, name: read_json(path, name, text_column, label_column)
    raise ConfigError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


def to_item(read: Read, label: Label, split: str) -> Item | Skip:
    """The message as an imported item (the contract of :mod:`~security_verifiers.envs.phishing.items` checked)."""
    encoding: Literal["text", "base64"] = "text"
    try:
        raw = read.raw.decode("utf-8")
    except UnicodeDecodeError:
        raw, encoding = base64.b64encode(read.raw).decode("ascii"), "base64"
    if len(raw) > MAX_RAW_CHARS:
        return Skip(read.source, f"larger than {MAX_RAW_CHARS:,} characters")
    item_input = PhishingInput(raw=raw, raw_encoding=encoding, mailbox=None)
    target = PhishingTarget(label=label, family="imported", source="imported", planted=[])
    return Item(id=item_id("phx", {"raw": raw, "raw_encoding": encoding}), split=split,
                input=item_input.model_dump(mode="json"), target=target.model_dump(mode="json"),
                meta={"source": read.source})


def _dedupe_key(raw: bytes) -> bytes:
    return hashlib.sha256(raw.replace(b"\r\n", b"\n").rstrip()).digest()[:16]


def import_messages(fmt: str, paths: list[Path], names: list[str], *, label: Label | None = None,
                    split: str = "local", limit: int | None = None, text_column: str | None = None,
                    label_column: str | None = None, report: ImportReport | None = None) -> Iterator[Item]:
    """The items of ``paths`` (cited as ``names``), as they are read; skips and problems go to ``report``.

    A message's class is the corpus's (label column, class-named directory or mbox file) or ``label``; when
    both are there and differ, or neither is, the message is a problem and left out.
    """
    report = report if report is not None else ImportReport()
    reader = readers(fmt, text_column, label_column)
    seen: dict[bytes, Label] = {}
    for path, name in zip(paths, names, strict=True):
        for produced in reader(path, name):
            if isinstance(produced, Problem):
                report.problems.add(produced)
                continue
            report.read += 1
            if isinstance(produced, Skip):
                report.skip(produced)
                continue
            own = produced.label
            if own is not None and label is not None and own != label:
                report.problems.add(Problem(produced.source, None, f"labelled {own} in the corpus, but --label "
                                            f"is {label}"))
                continue
            chosen = own or label
            if chosen is None:
                report.problems.add(Problem(produced.source, None, "no label: the corpus gives none here (no "
                                            "label column or class-named directory); give --label"))
                continue
            key = _dedupe_key(produced.raw)
            if key in seen:
                if seen[key] != chosen:
                    report.problems.add(Problem(produced.source, None, f"labelled {chosen}, but the same message "
                                                f"was labelled {seen[key]} earlier (the earlier one is kept)"))
                else:
                    report.skip(Skip(produced.source, "a duplicate of an earlier message"))
                continue
            item = to_item(produced, chosen, split)
            if isinstance(item, Skip):
                report.skip(item)
                continue
            seen[key] = chosen
            report.imported += 1
            yield item
            if limit is not None and report.imported >= limit:
                return
