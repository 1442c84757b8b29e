"""Hostile 8-bit mail never aborts a run: every header is decoded to valid Unicode (8-bit bytes, unknown charsets,
surrogates, NULs), so a message is parsed, scored and written like any other."""

from __future__ import annotations

import dataclasses
import json
import mailbox
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.cli import main
from security_verifiers.core.rundir import read_records
from security_verifiers.envs.phishing.message import clean, parse

#: Real-world header and body quirks, one message each (name: raw bytes).
HOSTILE = {
    # UTF-8 host names in Received (the message that aborted a run of 382 real ones), an 8-bit display name
    "utf8_received": b"Received: from mail.ex\xc3\xa4mple.de (mail.ex\xc3\xa4mple.de [192.0.2.1]) by mx.contoso.com;"
                     b" Mon, 1 Jan 2024 10:00:00 +0000\r\nFrom: \"M\xc3\xbcller\" <billing@paypa1-secure.com>\r\n"
                     b"To: ap@contoso.com\r\nSubject: Rechnung \xc3\xbcberf\xc3\xa4llig\r\n\r\n"
                     b"Please pay now: http://paypa1-secure.com/login\r\n",
    # Latin-1 bytes in Received, From, Subject and the body, LF line ends
    "latin1": b"Received: from h\xe9te.fr by mx; Mon, 1 Jan 2024\nFrom: Fran\xe7ois <f@example.fr>\nTo: a@b.com\n"
              b"Subject: Caf\xe9 cr\xe8me\n\nBonjour \xe0 vous\n",
    # encoded words of unknown charsets (with 8-bit content) and one never closed
    "bad_charset": b"From: =?x-unknown?B?w6TDtg==?= <x@y.com>\nTo: a@b.com\n"
                   b"Subject: =?x-unknown?Q?caf=E9?= and =?utf-8?B?unterminated\n"
                   b"Received: =?bogus?Q?=FF=FE?= from x\n\nbody\n",
    # NULs in headers and body, mixed CRLF and LF, invalid UTF-8 in the body of a us-ascii part
    "nul": b"From: a\x00b <a@b.com>\r\nTo: c@d.com\nSubject: nul\x00here\r\nReceived: from x\x00y by z\n\n"
           b"body with nul \x00 and \xff\xfe\n",
    # a UTF-8-encoded surrogate (CESU-8, what some Java mailers write) in Subject and Received
    "cesu8": b"From: <x@y.com>\nTo: a@b.com\nSubject: \xed\xb3\xa2 and \xed\xa0\x80\n"
             b"Received: from \xed\xb3\xa2\n\nx\n",
    # an 8-bit attachment name and content type, a 2 MB header line
    "attachment": b"From: <x@y.com>\nTo: a@b.com\nSubject: " + b"\xe2\x82\xac" * 700_000 + b"\nMIME-Version: 1.0\n"
                  b"Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/plain\n\nsee file\n--B\n"
                  b"Content-Type: application/x-\xe9xe; name=\"r\xe9sum\xe9.exe\"\n"
                  b"Content-Disposition: attachment; filename=\"r\xe9sum\xe9.exe\"\n\nMZ\x90\x00\n--B--\n",
}


@pytest.mark.parametrize(("text", "expected"), [
    ("plain ascii", "plain ascii"),  # nothing to do
    ("ex\udcc3\udca4mple", "exämple"),  # UTF-8 bytes kept as surrogates: decoded as UTF-8
    ("caf\udce9", "café"),  # a Latin-1 byte: not UTF-8, so cp1252
    ("\udcc3\udca4 and \udce9", "ä and é"),  # each run of bytes decoded on its own
    ("a\x00b", "ab"),  # NULs dropped
    ("x\ud800y", "x\ufffdy"),  # a lone surrogate that stands for no byte: U+FFFD
    ("déjà vu", "déjà vu"),  # valid text unchanged
])
def test_clean_makes_valid_unicode(text: str, expected: str) -> None:
    assert clean(text) == expected


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if dataclasses.is_dataclass(value):
        return _strings(dataclasses.asdict(value))  # type: ignore[arg-type]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_parsed_string_is_valid_unicode(name: str) -> None:
    mail = parse(HOSTILE[name])
    for text in _strings(mail):
        text.encode("utf-8")  # raises on a lone surrogate
        assert "\x00" not in text


def test_8bit_headers_are_decoded_not_mangled() -> None:
    mail = parse(HOSTILE["utf8_received"])
    assert mail.received == ["from mail.exämple.de (mail.exämple.de [192.0.2.1]) by mx.contoso.com; "
                             "Mon, 1 Jan 2024 10:00:00 +0000"]
    assert mail.header("Subject") == "Rechnung überfällig" and mail.sender.display_name == "Müller"
    latin = parse(HOSTILE["latin1"])
    assert (latin.received, latin.header("Subject")) == (["from héte.fr by mx; Mon, 1 Jan 2024"], "Café crème")
    assert latin.sender.display_name == "François" and latin.body == "Bonjour à vous"
    assert parse(HOSTILE["nul"]).header("Subject") == "nulhere"
    attachment = parse(HOSTILE["attachment"]).attachments[0]  # the library already replaced its 8-bit bytes
    assert (attachment.name, attachment.content_type) == ("r\ufffdsum\ufffd.exe", "application/x-\ufffdxe")


@pytest.mark.parametrize("fmt", ["eml", "mbox"])
def test_hostile_mail_is_imported_and_every_rollout_is_scored(fmt: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    if fmt == "eml":
        source = tmp_path / "phishing"
        source.mkdir()
        for name, raw in HOSTILE.items():
            (source / f"{name}.eml").write_bytes(raw)
    else:
        source = tmp_path / "phishing.mbox"
        box = mailbox.mbox(source)
        for raw in HOSTILE.values():
            box.add(raw)
        box.close()
    data, out = tmp_path / "mine.jsonl", tmp_path / "out"
    assert main(["data", "import", "phishing", str(source), "--format", fmt, "--out", str(data), "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == len(HOSTILE)
    assert main(["eval", "phishing", "--model", "baseline:heuristic", "--data", str(data), "--out", str(out),
                 "--run-id", "r", "--quiet"]) == 0
    run_dir = out / "evals" / "phishing--baseline-heuristic" / "r"
    records = read_records(run_dir / "results.jsonl")
    assert len(records) == len(HOSTILE) and all(r.error is None and r.reward is not None for r in records)
    assert json.loads((run_dir / "metadata.json").read_text())["status"] == "finished"
