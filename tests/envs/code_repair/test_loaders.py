"""Readers of real vulnerability-fix corpora, on small files written in each corpus's own layout."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from security_verifiers.core.errors import ConfigError
from security_verifiers.envs.code_repair.env import CodeRepair
from security_verifiers.envs.code_repair.loaders import changed_lines, import_records

BEFORE = '''def render(name, request):
    """Greets a user, by name."""
    template = "<p>Hello, %s</p>" % name
    return template
'''
AFTER = '''def render(name, request):
    """Greets a user, by name."""
    template = "<p>Hello, %s</p>" % escape(name)
    return template
'''
#: Big-Vul's MSR_data_cleaned.csv header: an unnamed index column first.
BIGVUL_HEADER = ["", "Access Gained", "Attack Origin", "Authentication Required", "Availability", "CVE ID", "CVE Page",
                 "CWE ID", "Complexity", "Confidentiality", "Integrity", "Known Exploits", "Publish Date", "Score",
                 "Summary", "Update Date", "Vulnerability Classification", "add_lines", "codeLink", "commit_id",
                 "commit_message", "del_lines", "file_name", "files_changed", "func_after", "func_before", "lang",
                 "lines_after", "lines_before", "parentID", "patch", "project", "project_after", "project_before",
                 "vul", "vul_func_with_fix"]


def bigvul_row(index: int, **values: str) -> list[str]:
    row = dict.fromkeys(BIGVUL_HEADER, "")
    row.update({"": str(index), "CVE ID": "CVE-2020-0001", "CWE ID": "CWE-79", "commit_id": f"c{index}",
                "file_name": "app/views.py", "func_before": BEFORE, "func_after": AFTER, "lang": "Python",
                "project": "webapp", "vul": "1", "Summary": 'XSS, via "name"'})
    row.update(values)
    return [row[k] for k in BIGVUL_HEADER]


def test_bigvul_csv(tmp_path: Path) -> None:
    path = tmp_path / "MSR_data_cleaned.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(BIGVUL_HEADER)
        writer.writerow(bigvul_row(0))
        writer.writerow(bigvul_row(1, lang="C", file_name="src/x.c", func_before="int f(){\n return 0;\n}\n",
                                   func_after="int f(){\n return 1;\n}\n"))
        writer.writerow(bigvul_row(2, vul="0", func_after=BEFORE))
        writer.writerow(bigvul_row(3, **{"CWE ID": "NVD-CWE-Other"}))
        writer.writerow(bigvul_row(4, commit_id="c0b"))  # the same function again: a duplicate
        handle.write('5,too,many\n')
    report = import_records("bigvul", [path], split="local")
    assert len(report.items) == 1
    item = report.items[0]
    assert item.input["files"] == {"views.py": BEFORE}
    assert item.target["cwe"] == "CWE-79" and item.target["location"] == {"file": "views.py", "start": 3, "end": 3}
    assert item.target["source"]["project"] == "webapp" and item.meta["source"].startswith("MSR_data_cleaned.csv:")
    assert report.skipped == {"not Python (C)": 1, "an unchanged function (vul = 0)": 1,
                              "no usable CWE (NVD-CWE-Other)": 1, "a duplicate of an earlier record": 1}
    assert report.problems.total == 1
    CodeRepair.check_items(report.items, None, str(path))


def test_bigvul_refuses_another_csv(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ConfigError, match="not a Big-Vul CSV"):
        import_records("bigvul", [path])


def _cvefixes_db(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE fixes (cve_id TEXT, hash TEXT, repo_url TEXT);
        CREATE TABLE cwe_classification (cve_id TEXT, cwe_id TEXT);
        CREATE TABLE file_change (file_change_id TEXT, hash TEXT, filename TEXT, old_path TEXT, new_path TEXT,
            change_type TEXT, diff TEXT, diff_parsed TEXT, num_lines_added INT, num_lines_deleted INT,
            code_after TEXT, code_before TEXT, nloc INT, complexity INT, token_count INT, programming_language TEXT);
        CREATE TABLE method_change (method_change_id TEXT, file_change_id TEXT, name TEXT, signature TEXT,
            parameters TEXT, start_line INT, end_line INT, code TEXT, nloc INT, complexity INT, token_count INT,
            top_nesting_level INT, before_change TEXT);
    """)
    db.executemany("INSERT INTO fixes VALUES (?, ?, ?)", [("CVE-2021-1", "h1", "https://github.com/org/webapp"),
                                                           ("CVE-2021-2", "h2", "https://github.com/org/cproj")])
    db.executemany("INSERT INTO cwe_classification VALUES (?, ?)",
                   [("CVE-2021-1", "CWE-79"), ("CVE-2021-1", "CWE-80"), ("CVE-2021-2", "CWE-787")])
    db.executemany("INSERT INTO file_change (file_change_id, hash, filename, programming_language) VALUES (?,?,?,?)",
                   [("f1", "h1", "views.py", "Python"), ("f2", "h2", "buf.c", "C")])
    db.executemany("INSERT INTO method_change (method_change_id, file_change_id, name, code, before_change) "
                   "VALUES (?, ?, ?, ?, ?)",
                   [("m1", "f1", "render", BEFORE, "True"), ("m2", "f1", "render", AFTER, "False"),
                    ("m3", "f2", "copy", "void copy(){\n strcpy(a,b);\n}\n", "True"),
                    ("m4", "f2", "copy", "void copy(){\n strncpy(a,b,n);\n}\n", "False")])
    db.commit()
    db.close()


def test_cvefixes_database(tmp_path: Path) -> None:
    path = tmp_path / "CVEfixes.db"
    _cvefixes_db(path)
    report = import_records("cvefixes", [path])
    assert [i.target["cwe"] for i in report.items] == ["CWE-79"]  # one record per method, its first CWE
    assert report.items[0].target["source"]["cve"] == "CVE-2021-1"
    assert report.items[0].target["source"]["project"] == "webapp"
    assert report.skipped == {"not Python (C)": 1}
    bad = tmp_path / "not.db"
    bad.write_text("hello")
    with pytest.raises(ConfigError, match="not a CVEfixes database"):
        import_records("cvefixes", [bad])


def test_records_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps({"before": BEFORE, "after": AFTER, "cwe": "cwe-079", "file": "pkg/views.py"}) + "\n"
                    + "not json\n" + json.dumps({"before": 1}) + "\n\n")
    report = import_records("records", [path], limit=5)
    assert len(report.items) == 1 and report.items[0].target["cwe"] == "CWE-79"
    assert report.problems.total == 2


def test_changed_lines() -> None:
    assert changed_lines("a\nb\nc\n", "a\nc\n") == (2, 2)
    assert changed_lines("a\nb\n", "a\nb\nc\n") == (2, 2)  # lines added at the end: the last line
    assert changed_lines("a\n", "a\n") is None


def test_detection_items_are_scored_on_cwe_and_line(tmp_path: Path) -> None:
    from security_verifiers.core.types import Message, Transcript

    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps({"before": BEFORE, "after": AFTER, "cwe": "CWE-79", "file": "views.py"}) + "\n")
    item = import_records("records", [path]).items[0]
    env = CodeRepair()

    def score(answer: dict) -> float:
        return env.score(item, Transcript(messages=[Message(role="assistant", content=json.dumps(answer))])).reward

    assert score({"cwe": "CWE-79", "file": "views.py", "line": 3, "patch": "--- a/views.py\n"}) == pytest.approx(0.2)
    assert score({"cwe": "CWE-89", "file": "views.py", "line": 3, "patch": ""}) == pytest.approx(0.05)
    assert score({"cwe": "CWE-79", "file": "views.py", "line": 40, "patch": ""}) == pytest.approx(0.15)
    assert score({"cwe": "CWE-79", "file": "views.py", "line": 3}) == 0.0  # all four keys make an answer
