"""The parse store (engines/parse_store.py): parses and Terraform evaluations kept on disk for every process, read
back only as the engines' own data, never a parse error, and the same results with it, without it, cold or warm."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.engines import configs, parse_store
from security_verifiers.engines.parse_store import ParseStore

POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: &l {app: web}\nspec:\n  containers:\n"
       "    - name: a\n      image: nginx:1.25\n")
TF = ('variable "acl" {\n  default = "private"\n}\n\nresource "aws_s3_bucket" "b" {\n  bucket = "logs"\n'
      '  acl    = var.acl\n  tags   = { Name = "logs-${var.acl}" }\n}\n')
CONTEXT = ('variable "region" {\n  default = "eu-west-1"\n}\n',)


def _clear_memos() -> None:
    for name in ("_kubernetes_parsed", "_hcl_loads", "_evaluated", "_document"):
        memo = getattr(configs, name)
        if hasattr(memo, "cache_clear"):  # a test may have put a stand-in there
            memo.cache_clear()


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ParseStore]:
    """A fresh store in ``tmp_path`` as the process-wide one, with empty in-memory memos around the test."""
    monkeypatch.setenv("SV_SCAN_STORE", "on")
    fresh = ParseStore(root=tmp_path)
    monkeypatch.setattr(parse_store, "_STORE", fresh)
    _clear_memos()
    yield fresh
    _clear_memos()


def _readings() -> tuple[Any, ...]:
    evaluated = configs.evaluated_terraform(TF, CONTEXT)
    return (evaluated.document, evaluated.attributes, evaluated.problems, configs.hcl_document(TF),
            [(o.kind, o.name, o.body, o.start_line, o.end_line) for o in configs.parse_kubernetes(POD)],
            configs.parse_terraform(TF).blocks)


def test_a_warm_reading_is_the_cold_one_and_parses_nothing(store: ParseStore, monkeypatch: pytest.MonkeyPatch) -> None:
    cold = _readings()
    _clear_memos()  # as a new process: nothing in memory, everything on disk

    def no_parse(*args: Any) -> Any:
        raise AssertionError("parsed although the store holds the result")

    monkeypatch.setattr(configs, "_hcl_loads", no_parse)
    monkeypatch.setattr(configs, "_parse_kubernetes", no_parse)
    assert _readings() == cold


def test_the_same_readings_without_the_store(store: ParseStore, monkeypatch: pytest.MonkeyPatch) -> None:
    warm_source = _readings()
    _clear_memos()
    monkeypatch.setenv("SV_SCAN_STORE", "off")
    assert parse_store.parse_store() is None
    assert _readings() == warm_source


def test_parse_errors_are_never_stored(store: ParseStore) -> None:
    for bad in ('resource "x" {\n', "a: [\n"):
        with pytest.raises(configs.ConfigParseError):
            (configs.hcl_document if bad.startswith("resource") else configs.parse_kubernetes)(bad)
    assert store.get(store.key("hcl-document", 'resource "x" {\n')) is None
    assert store.get(store.key("kubernetes", "a: [\n")) is None


def test_an_entry_naming_anything_else_is_refused_and_recomputed(store: ParseStore,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A planted pickle that would call os.system is never run: the entry is refused and the text parsed."""
    planted = zlib.compress(pickle.dumps(_Boom()))
    store.put_raw(store.key("kubernetes", POD), planted)
    objects = configs.parse_kubernetes(POD)
    assert [o.name for o in objects] == ["web"]
    assert "refused an entry" in capsys.readouterr().err
    assert not Path(os.environ.get("TMPDIR", "/tmp"), "sv-parse-store-boom").exists()


class _Boom:
    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("touch " + str(Path(os.environ.get("TMPDIR", "/tmp"), "sv-parse-store-boom")),))


def test_keys_tell_texts_and_contexts_apart() -> None:
    assert ParseStore.key("terraform-evaluated", "ab", ("c",)) != ParseStore.key("terraform-evaluated", "a", ("bc",))
    assert ParseStore.key("terraform-evaluated", "a", ()) != ParseStore.key("hcl-document", "a")


def test_another_process_reads_what_this_one_parsed(tmp_path: Path) -> None:
    """Two real interpreters on one cache directory: the second parses nothing."""
    code = ("import sys\nfrom security_verifiers.engines import configs\n"
            f"TF = {TF!r}\nPOD = {POD!r}\n"
            "if sys.argv[1] == 'read':\n"
            "    def no_parse(*a):\n        raise SystemExit('parsed again')\n"
            "    configs._hcl_loads = no_parse\n    configs._parse_kubernetes = no_parse\n"
            "print(repr((configs.evaluated_terraform(TF).document, configs.parse_kubernetes(POD)[0].body)))\n")
    env = {**os.environ, "SV_CACHE_DIR": str(tmp_path), "SV_SCAN_STORE": "on"}
    outputs = [subprocess.run([sys.executable, "-c", code, mode], env=env, capture_output=True, text=True,
                              check=True).stdout for mode in ("write", "read")]
    assert outputs[0] == outputs[1] and outputs[0]
    assert list((tmp_path / "config-audit-scans").glob("parses-*.sqlite"))
