"""Readers of real mail layouts (`envs/phishing/loaders.py`) and `sv data import phishing`, on small files written
here in each layout and on the committed hand-written set in `data/real/`."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.datasets import read_jsonl
from security_verifiers.core.errors import ConfigError
from security_verifiers.envs.phishing import loaders
from security_verifiers.envs.phishing.items import PhishingInput, PhishingTarget
from security_verifiers.envs.phishing.loaders import ImportReport, import_messages, label_of

REAL = Path(loaders.__file__).parent / "data" / "real"


def mail(subject: str, body: str = "Hello.\n", sender: str = "a@example.org", eol: str = "\n") -> bytes:
    text = (f"From: {sender}\nTo: b@example.net\nSubject: {subject}\nDate: Mon, 1 Apr 2024 10:00:00 +0000\n"
            f"Message-ID: <{subject.replace(' ', '.')}@example.org>\n\n{body}")
    return text.replace("\n", eol).encode()


def run(fmt: str, *paths: Path, **kwargs: object) -> tuple[list, ImportReport]:
    report = ImportReport()
    items = list(import_messages(fmt, list(paths), [p.name for p in paths], report=report, **kwargs))
    return items, report


def message_bytes(item: object) -> bytes:
    return PhishingInput.model_validate(item.input).message_bytes()  # type: ignore[attr-defined]


@pytest.mark.parametrize(("value", "expected"), [
    ("Phishing Email", "Phishing"),  # Kaggle phishing-email export
    ("Safe Email", "Legitimate"),
    ("1", "Phishing"), (0, "Legitimate"), ("1.0", "Phishing"),  # body/label exports with 1/0
    ("  SPAM ", "Phishing"),  # spam/ham exports: spam is the malicious class
    ("ham", "Legitimate"), ("Legitimate", "Legitimate"), ("phishing", "Phishing"),
    ("TRUE", "Phishing"), ("false", "Legitimate"),  # an is_phishing column
    ("unknown", None), ("", None), ("2", None),  # names no class
])
def test_label_values_map_case_insensitively(value: object, expected: str | None) -> None:
    assert label_of(value) == expected


def test_mbox_unquotes_from_lines_and_keeps_8bit_latin1_bodies(tmp_path: Path) -> None:
    box = tmp_path / "phishing-2021.mbox"
    latin = ("From: banque@example.fr\nSubject: =?ISO-8859-1?Q?acc=E8s?=\nContent-Type: text/plain; "
             "charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\nVotre acc\u00e8s est suspendu.\n>From now on "
             "we check.\n>>From quoted twice\n").encode("latin-1")
    box.write_bytes(b"From banque@example.fr Mon Oct  9 06:55:12 2023\n" + latin + b"\n"
                    + b"From x@example.org Tue Oct 10 01:00:00 2023\n" + mail("second") + b"\n")
    items, report = run("mbox", box)
    assert (len(items), report.problems.total, report.read) == (2, 0, 2)
    first = items[0]
    assert first.input["raw_encoding"] == "base64"  # 8-bit latin-1 is not UTF-8: the bytes travel in base64
    raw = message_bytes(first)
    assert b"\nFrom now on" in raw and b"\n>From quoted twice" in raw and b">From now" not in raw
    assert "Votre acc\u00e8s".encode("latin-1") in raw
    assert all(i.target["label"] == "Phishing" for i in items)  # the file's name gives the class
    assert first.meta == {"source": "phishing-2021.mbox#1"}
    assert items[1].input["raw_encoding"] == "text" and not message_bytes(items[1]).startswith(b"From ")


def test_mbox_with_crlf_lines_keeps_them(tmp_path: Path) -> None:
    box = tmp_path / "mail.mbox"
    box.write_bytes(b"From a@example.org Mon Apr  1 10:00:00 2024\r\n" + mail("crlf one", eol="\r\n") + b"\r\n"
                    + b"From a@example.org Mon Apr  1 11:00:00 2024\r\n" + mail("crlf two", eol="\r\n"))
    items, report = run("mbox", box, label="Legitimate")
    assert len(items) == 2 and report.problems.total == 0
    assert message_bytes(items[0]).startswith(b"From: a@example.org\r\nTo: b@example.net\r\n")


def test_mbox_that_is_not_one_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.mbox").write_text("just some notes\n")
    with pytest.raises(ConfigError, match="not an mbox file"):
        run("mbox", tmp_path / "notes.mbox", label="Phishing")


def test_eml_directory_keeps_crlf_bytes_skips_non_mail_and_labels_by_directory(tmp_path: Path) -> None:
    (tmp_path / "spam" / "2024").mkdir(parents=True)
    (tmp_path / "ham").mkdir()
    crlf = mail("crlf", eol="\r\n")
    (tmp_path / "spam" / "2024" / "a.eml").write_bytes(crlf)
    (tmp_path / "ham" / "b.eml").write_bytes(b"From x@y Mon Apr  1 10:00:00 2024\n" + mail("envelope"))
    (tmp_path / "ham" / "notes.txt").write_text("shopping list: eggs, milk\n")  # not mail: skipped with reason
    (tmp_path / "ham" / "empty.eml").write_bytes(b"")
    (tmp_path / "ham" / ".DS_Store").write_bytes(b"\0\0junk")  # hidden: not even looked at
    items, report = run("eml", tmp_path)
    assert [(i.meta["source"], i.target["label"]) for i in items] == [
        (f"{tmp_path.name}/ham/b.eml", "Legitimate"), (f"{tmp_path.name}/spam/2024/a.eml", "Phishing")]
    assert message_bytes(items[1]) == crlf  # byte for byte, CRLF kept
    assert message_bytes(items[0]).startswith(b"From: a@example.org\nTo:")  # no mbox envelope line
    assert report.skipped == {"not a mail message (no header block)": 1, "an empty file": 1}
    for item in items:  # the item contract of items.py holds
        PhishingTarget.model_validate(item.target)
        assert item.target == {"label": item.target["label"], "family": "imported", "source": "imported",
                               "planted": []}
        assert item.input["mailbox"] is None


def test_empty_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no files under it"):
        run("eml", tmp_path, label="Phishing")


def test_no_label_and_label_conflicts_are_problems_not_crashes(tmp_path: Path) -> None:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "1.").write_bytes(mail("one"))
    (tmp_path / "phishing").mkdir()
    (tmp_path / "phishing" / "2.").write_bytes(mail("two"))
    items, report = run("maildir", tmp_path)  # no --label: inbox/1. has no class
    assert len(items) == 1 and report.problems.total == 1 and "give --label" in report.problems.shown[0].reason
    items, report = run("maildir", tmp_path, label="Legitimate")  # the directory says phishing: left out
    assert len(items) == 1 and "labelled Phishing in the corpus, but --label is Legitimate" in str(
        report.problems.shown[0])


def test_maildir_reads_cur_and_new_skips_tmp_and_walks_an_enron_tree(tmp_path: Path) -> None:
    box = tmp_path / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (box / sub).mkdir(parents=True)
    (box / "cur" / "1710000000.M1P2.host:2,S").write_bytes(mail("seen"))
    (box / "new" / "1710000001.M3P4.host").write_bytes(mail("unseen"))
    (box / "tmp" / "1710000002.M5P6.host").write_bytes(mail("half delivered"))
    (box / "dovecot-uidlist").write_text("3 V1710000000 N3\n1 1710000000.M1P2.host\n")
    (box / ".Sent" / "cur").mkdir(parents=True)  # a Maildir++ folder
    (box / ".Sent" / "cur" / "1710000003.M7P8.host:2,S").write_bytes(mail("sent"))
    enron = tmp_path / "maildir" / "allen-p"
    for folder, n in (("inbox", 1), ("inbox", 2), ("sent_items", 1), ("_sent_mail", 10)):
        (enron / folder).mkdir(parents=True, exist_ok=True)
        (enron / folder / f"{n}.").write_bytes(mail(f"{folder} {n}", sender="phillip.allen@enron.com"))
    items, report = run("maildir", box, tmp_path / "maildir", label="Legitimate")
    subjects = sorted(message_bytes(i).split(b"Subject: ")[1].split(b"\n")[0].decode() for i in items)
    assert subjects == ["_sent_mail 10", "inbox 1", "inbox 2", "seen", "sent", "sent_items 1", "unseen"]
    assert report.skipped == {"not a mail message (no header block)": 1}  # dovecot-uidlist; tmp/ not read


CSV_KAGGLE = ('\ufeff,Email Text,Email Type\n'
              '0,"Dear user, your ""mailbox"" is full.\nClick http://quota.example.com now",Phishing Email\n'
              '1,"Lunch on Friday?\r\nReply by Wednesday.",Safe Email\n'
              '2,"Something odd",Maybe Email\n'
              '3,"",Safe Email\n'
              '4,"Lunch on Friday?\r\nReply by Wednesday.",Safe Email\n')


def test_csv_with_bom_quotes_embedded_newlines_unknown_labels_and_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "Phishing_Email.csv"
    path.write_text(CSV_KAGGLE, encoding="utf-8", newline="")
    items, report = run("csv", path)
    assert [i.target["label"] for i in items] == ["Phishing", "Legitimate"]
    raw = message_bytes(items[0]).decode()
    assert raw.endswith('\n\nDear user, your "mailbox" is full.\nClick http://quota.example.com now')
    assert "Content-Type: text/plain; charset=\"utf-8\"" in raw
    assert [str(p) for p in report.problems.shown] == [
        "Phishing_Email.csv:6: unknown label 'Maybe Email' in column 'Email Type' (known: phishing/spam/1/true... "
        "or legitimate/safe/ham/0/false...)",
        "Phishing_Email.csv:7: no text in column 'Email Text'"]
    assert report.skipped == {"a duplicate of an earlier message": 1}
    assert items[0].meta["source"] == "Phishing_Email.csv:2"


def test_csv_ceas_columns_rebuild_a_message(tmp_path: Path) -> None:
    path = tmp_path / "CEAS_08.csv"
    path.write_text("sender,receiver,date,subject,body,label,urls\n"
                    '"Jörg <j@example.de>",x@example.org,"Tue, 05 Aug 2008 16:31:02 -0700","Grüße\n aus Köln",'
                    '"<html><body>Hi <a href=""http://e.example"">there</a></body></html>",1,1\n', encoding="utf-8")
    items, _ = run("csv", path)
    raw = message_bytes(items[0]).decode()
    assert raw.startswith("From: Jörg <j@example.de>\nTo: x@example.org\nDate: Tue, 05 Aug 2008 16:31:02 -0700\n"
                          "Subject: Grüße aus Köln\n")
    assert 'Content-Type: text/html; charset="utf-8"' in raw and items[0].target["label"] == "Phishing"


def test_csv_named_columns_and_a_whole_message_in_a_column(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    whole = mail("whole").decode()
    path.write_text(f'file;message;verdict\nx/1.;"{whole}";ham\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="no label column 'kind'"):
        run("csv", path, text_column="message", label_column="kind")
    items, report = run("csv", path, text_column="message", label_column="verdict")
    assert report.problems.total == 0 and message_bytes(items[0]) == whole.encode()  # taken as it is


def test_json_array_and_json_lines(tmp_path: Path) -> None:
    array = tmp_path / "emails.json"
    array.write_text(json.dumps({"emails": [{"text": "Verify your account now", "label": "phishing"},
                                            {"text": "Minutes attached", "label": "legitimate"},
                                            {"text": "x", "label": "??"}, ["not", "an", "object"]]}))
    items, report = run("json", array)
    assert [i.target["label"] for i in items] == ["Phishing", "Legitimate"]
    assert [p.line for p in report.problems.shown] == [3, 4]
    lines = tmp_path / "emails.jsonl"
    lines.write_text('{"body": "Pay the invoice to the new account", "label": 1}\n\n{"body": "Hi", "label": 0}\n'
                     "{broken\n")
    items, report = run("json", lines)
    assert [(i.target["label"], i.meta["source"]) for i in items] == [
        ("Phishing", "emails.jsonl:1"), ("Legitimate", "emails.jsonl:3")]
    assert report.problems.shown[0].line == 4 and "not JSON" in report.problems.shown[0].reason


def test_duplicates_are_skipped_across_line_endings_and_a_relabelled_one_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "phishing").mkdir()
    (tmp_path / "ham").mkdir()
    (tmp_path / "phishing" / "a.eml").write_bytes(mail("same"))
    (tmp_path / "phishing" / "b.eml").write_bytes(mail("same", eol="\r\n"))
    (tmp_path / "ham" / "c.eml").write_bytes(mail("same"))
    items, report = run("eml", tmp_path)
    assert len(items) == 1 and items[0].target["label"] == "Legitimate"  # ham/ is read first (sorted)
    assert report.problems.total == 2 and "the same message was labelled Legitimate earlier" in str(
        report.problems.shown[0])


def test_oversize_messages_are_skipped_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loaders, "MAX_RAW_CHARS", 300)
    monkeypatch.setattr(loaders, "MAX_BYTES", 1200)
    (tmp_path / "small.eml").write_bytes(mail("small"))
    (tmp_path / "big.eml").write_bytes(mail("big", body="x" * 2000))  # over MAX_BYTES: never read whole
    (tmp_path / "mid.eml").write_bytes(mail("mid", body="y" * 600))  # within bytes, over the characters
    items, report = run("eml", tmp_path, label="Phishing")
    assert len(items) == 1 and report.skipped == {"larger than 300 characters": 2}
    box = tmp_path / "m.mbox"
    box.write_bytes(b"From a Mon Apr  1 10:00:00 2024\n" + mail("huge", body="z" * 2000) + b"\n"
                    + b"From a Mon Apr  1 10:00:00 2024\n" + mail("ok"))
    items, report = run("mbox", box, label="Phishing")
    assert len(items) == 1 and report.skipped == {"larger than 300 characters": 1}


def test_limit_stops_after_n_items(tmp_path: Path) -> None:
    for n in range(5):
        (tmp_path / f"{n}.eml").write_bytes(mail(f"m{n}"))
    items, _ = run("eml", tmp_path, label="Legitimate", limit=2)
    assert len(items) == 2


def test_cli_imports_the_committed_eml_directory_and_mbox(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    labels = json.loads((REAL / "labels.json").read_text())
    out = tmp_path / "eml.jsonl"
    assert main(["data", "import", "phishing", "--format", "eml", str(REAL / "eml"), "--out", str(out),
                 "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["env"], summary["n"], summary["problems"], summary["skipped"]) == ("phishing", 22, 0, 0)
    items = read_jsonl(out, "imported").items
    expected = {e["path"]: e["label"] for e in labels if e["path"].startswith("eml/")}
    assert {i.meta["source"]: i.target["label"] for i in items} == expected
    assert json.loads(out.read_text().splitlines()[0])["sv_dataset"]["env"] == "phishing"

    out = tmp_path / "mbox.jsonl"
    assert main(["data", "import", "phishing", "--format", "mbox", str(REAL / "phishing.mbox"), "--out", str(out),
                 "--split", "real", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["n"], summary["split"]) == (8, "real")
    items = read_jsonl(out, "imported").items
    assert {i.target["label"] for i in items} == {"Phishing"} and {i.split for i in items} == {"real"}
    assert sum(i.input["raw_encoding"] == "base64" for i in items) == 1  # the 8-bit ISO-8859-1 one
    assert any(b"\nFrom now on" in base64.b64decode(i.input["raw"]) for i in items
               if i.input["raw_encoding"] == "base64")


def test_cli_reads_every_committed_layout_with_its_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts = {}
    for fmt, path, extra in (("maildir", "legit_maildir", ["--label", "Legitimate"]), ("csv", "emails.csv", [])):
        out = tmp_path / f"{fmt}.jsonl"
        assert main(["data", "import", "phishing", "--format", fmt, str(REAL / path), "--out", str(out),
                     "--quiet", "--strict", *extra]) == 0
        capsys.readouterr()
        counts[fmt] = sorted(i.target["label"] for i in read_jsonl(out, "imported").items)
    assert counts == {"maildir": ["Legitimate"] * 8, "csv": ["Legitimate"] * 4 + ["Phishing"] * 4}
    labels = json.loads((REAL / "labels.json").read_text())
    assert len(labels) == 46 and sum(e["label"] == "Phishing" for e in labels) == 23


def test_cli_strict_writes_nothing_and_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o.jsonl"
    assert main(["data", "import", "phishing", "--format", "mbox", str(REAL / "phishing.mbox"), "--label",
                 "Legitimate", "--out", str(out), "--quiet"]) == 2  # every message conflicts: nothing to import
    assert "labelled Phishing in the corpus, but --label is Legitimate" in capsys.readouterr().err
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.eml").write_bytes(mail("a"))
    (tmp_path / "d" / "junk.eml").write_bytes(b"\xff\xfe not mail")
    (tmp_path / "d" / "b").write_text("Subject: x\n")  # mail, but no label
    assert main(["data", "import", "phishing", "--format", "eml", str(tmp_path / "d"), "--out", str(out),
                 "--strict", "--quiet"]) == 1
    assert not out.exists() and not Path(f"{out}.partial").exists()
    assert main(["data", "import", "phishing", "--format", "eml", str(tmp_path / "empty"), "--out", str(out)]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["data", "import", "phishing", "--format", "eml", str(tmp_path / "empty"), "--label", "Phishing",
                 "--out", str(out)]) == 2
    assert "no files under it" in capsys.readouterr().err
    assert not out.exists() and not Path(f"{out}.partial").exists()
