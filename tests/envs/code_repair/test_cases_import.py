"""``sv data import code-repair --format cases``: real-code cases, their third-party packages installed offline into
read-only site directories, each case self-checked in the sandbox before it becomes an item.

The six cases under ``data/cases/`` are the importer's fixtures. The wheels their requirements pin come from the
wheelhouse ``make`` downloads (``CASE_WHEELS`` in the Makefile, into ``.venv/wheelhouse``); the tests fail, naming
``make``, when it is not there. Site directories are made under a fresh ``$SV_CACHE_DIR`` of this module (in the
home directory: the judge's sandbox covers /tmp with its own, so a site directory there would be hidden).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.datasets import read_jsonl
from security_verifiers.core.errors import ConfigError
from security_verifiers.envs.code_repair import execution
from security_verifiers.envs.code_repair.cases import (
    CaseError,
    CasesReport,
    check_sites_root,
    import_cases,
    install_site,
    parse_requirements,
    read_case,
    remove_tree,
    to_program,
)
from security_verifiers.envs.code_repair.env import CodeRepair
from security_verifiers.envs.code_repair.items import is_program, program_of
from security_verifiers.envs.code_repair.program import Probe
from security_verifiers.envs.code_repair.sites import site_dir, sites_root

CASES = Path(__file__).parent / "data" / "cases"
NAMES = ("cookie_prefix", "jwt_confusion", "proxy_redirect", "tar_plugins", "template_attrs", "yaml_pipeline")
REPO = Path(__file__).resolve().parents[3]
WHEELHOUSE = Path(os.environ.get("SV_TEST_WHEELHOUSE") or REPO / ".venv" / "wheelhouse")


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    """The wheelhouse ``make`` downloads; every pin of the cases must have its wheel there."""
    pins = sorted({pin for name in NAMES for pin in read_case(CASES / name).requirements})
    have = {path.name.lower() for path in WHEELHOUSE.glob("*.whl")} if WHEELHOUSE.is_dir() else set()
    missing = [pin for pin in pins  # a wheel's file name spells its project with '_' for '-'
               if not any(w.startswith(pin.replace("-", "_").replace("==", "-") + "-") for w in have)]
    if missing:
        pytest.fail(f"the wheelhouse {WHEELHOUSE} lacks {', '.join(missing)}: run `make` (its install step "
                    "downloads the pinned wheels of CASE_WHEELS in the Makefile), or set SV_TEST_WHEELHOUSE to a "
                    "folder made with `pip download --only-binary :all: --no-deps -d DIR " + " ".join(pins) + "`")
    return WHEELHOUSE


@pytest.fixture(scope="module")
def sites() -> Iterator[Path]:
    """A fresh ``$SV_CACHE_DIR`` for this module's site directories, removed afterwards. The judge processes kept
    running are closed before and after: each shows the site root of the moment it started."""
    base = Path.home() / ".cache" / "security-verifiers" / f"test-cases-{uuid.uuid4().hex[:12]}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SV_CACHE_DIR", str(base))
        execution._POOL.close()
        try:
            yield sites_root()
        finally:
            execution._POOL.close()
            if sites_root().is_dir():
                for site in sites_root().iterdir():
                    remove_tree(site)
            shutil.rmtree(base, ignore_errors=True)


#: What the import of the six cases said, line by line.
PROGRESS: list[str] = []


@pytest.fixture(scope="module")
def imported(sites: Path, wheelhouse: Path) -> CasesReport:
    return import_cases([CASES], wheelhouse, split="local", parallel=2, progress=PROGRESS.append)


def _copy(name: str, tmp_path: Path, folder: str | None = None) -> Path:
    target = tmp_path / (folder or name)
    shutil.copytree(CASES / name, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_six_cases_import_and_pass_their_self_check(imported: CasesReport) -> None:
    assert imported.rejected == [], imported.rejected
    assert imported.read == 6 and imported.detection == 0
    assert sorted(item.meta["source"] for item in imported.items) == [f"cases/{name}" for name in NAMES]
    CodeRepair.check_items(imported.items, None, "cases")
    for item in imported.items:
        assert is_program(item.target) and item.target["family"] == "imported-cases"
        program = program_of(item.input, item.target)
        assert program.exploits() and program.functional()
        assert item.target["source"]["dataset"] == "cases" and item.target["source"]["advisory"]
    by_case = {item.meta["case"]: item.target for item in imported.items}
    assert by_case["yaml-pipeline"]["requirements"] == ["pyyaml==6.0.4"]
    assert by_case["jwt-confusion"]["requirements"] == ["cffi==2.1.1", "cryptography==50.0.2", "pycparser==3.12",
                                                        "pyjwt==2.3.0"]
    assert by_case["tar-plugins"]["site"] is None and by_case["tar-plugins"]["requirements"] == []
    assert {by_case[c]["site"] for c in ("yaml-pipeline", "jwt-confusion", "template-attrs")} == set(imported.sites)
    progress = "\n".join(PROGRESS)
    for name in NAMES:
        assert f"{name}: ok" in progress


def test_site_directories_are_complete_read_only_and_reused(imported: CasesReport, wheelhouse: Path) -> None:
    assert len(imported.sites) == 3 and not any(site["reused"] for site in imported.sites.values())
    for key, site in imported.sites.items():
        path = site_dir(key, site["requirements"])
        assert (path / ".complete").is_file()
        for entry in [path, *path.rglob("*")]:
            if not entry.is_symlink():
                assert not entry.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), entry
        assert install_site(site["requirements"], wheelhouse) == (key, True)
    yaml_site = next(k for k, s in imported.sites.items() if s["requirements"] == ["pyyaml==6.0.4"])
    assert (sites_root() / yaml_site / "yaml" / "__init__.py").is_file()


def test_an_interrupted_site_is_replaced(imported: CasesReport, wheelhouse: Path) -> None:
    key = next(k for k, s in imported.sites.items() if s["requirements"] == ["pyyaml==6.0.4"])
    path = sites_root() / key
    path.chmod(0o755)
    (path / ".complete").unlink()  # as if the import had stopped before its marker
    with pytest.raises(ConfigError, match="missing; import the cases again"):
        site_dir(key, ["pyyaml==6.0.4"])
    assert install_site(["pyyaml==6.0.4"], wheelhouse) == (key, False)
    assert site_dir(key).is_dir()


def test_the_program_imports_the_package_from_its_site_and_not_without_it(imported: CasesReport) -> None:
    item = next(i for i in imported.items if i.meta["case"] == "yaml-pipeline")
    program = program_of(item.input, item.target)
    where = program.model_copy(update={
        "tests": program.tests + '\n\ndef probe_where(ctx):\n    spec = program_module("importlib.util")'
                                 '.find_spec("yaml")\n    return [spec.origin, program_module("sys").path]\n',
        "probes": [*program.functional(), Probe(id="where", kind="functional", expect=None)]})
    run = execution.execute(where, where.files, phases=("serve",), only="functional")
    origin, path = run.serve["where"][0].observation["value"]
    site = str(site_dir(program.site or ""))
    assert origin == f"{site}/yaml/__init__.py"
    assert site in path and not any("site-packages" in entry for entry in path)
    assert run.serve["plan"][0].observation["value"] == next(p.expect for p in program.probes if p.id == "plan")

    bare = program.model_copy(update={"requirements": [], "site": None})
    run = execution.execute(bare, bare.files, phases=("serve",), only="functional")
    assert run.import_error == "ModuleNotFoundError: No module named 'yaml'"
    assert all(runs[0].observation.get("setup_failed") for runs in run.serve.values())


def test_a_fix_that_does_not_fix_is_rejected(imported: CasesReport, tmp_path: Path, wheelhouse: Path) -> None:
    case = _copy("yaml_pipeline", tmp_path)
    module = case / "fixed" / "pipeline" / "config.py"
    module.write_text((case / "vulnerable" / "pipeline" / "config.py").read_text().replace(
        "with the reason.", "with its reason."))
    report = import_cases([case], wheelhouse)
    assert report.items == [] and len(report.rejected) == 1
    folder, reason = report.rejected[0]
    assert folder == "yaml_pipeline"
    assert reason.startswith("self-check failed: reference fix is still exploited by ")
    for probe in ("apply_system", "apply_open", "long_tag"):
        assert probe in reason
    assert "bandit still flags the fix" in reason


def test_a_case_the_vulnerable_version_passes_is_rejected(imported: CasesReport, tmp_path: Path) -> None:
    case = _copy("tar_plugins", tmp_path)
    fixed = (case / "fixed" / "lantern" / "plugins.py").read_text()
    (case / "vulnerable" / "lantern" / "plugins.py").write_text(fixed)
    (case / "fixed" / "lantern" / "plugins.py").write_text(fixed + "\n")
    report = import_cases([case])
    assert report.items == []
    assert report.rejected[0][1].startswith("self-check failed: vulnerable version is not exploited by ")


def test_requirements_must_be_pinned_with_every_dependency(tmp_path: Path, sites: Path, wheelhouse: Path) -> None:
    assert parse_requirements("# pins\nPyYAML == 6.0.4  # loader\n\nJinja2==3.1.6\n") == ["jinja2==3.1.6",
                                                                                         "pyyaml==6.0.4"]
    for line in ("pyyaml>=6", "pyyaml", "pyyaml==6.*", "-r other.txt", "pyyaml[libyaml]==6.0.4",
                 "https://example.test/pyyaml.whl"):
        with pytest.raises(CaseError, match=r"requirements.txt:2: .* is not pinned as name==version"):
            parse_requirements("jinja2==3.1.6\n" + line + "\n")
    with pytest.raises(CaseError, match="pyyaml is listed twice"):
        parse_requirements("PyYAML==6.0.4\npyyaml==6.0.4\n")

    unpinned = _copy("yaml_pipeline", tmp_path, "unpinned")
    (unpinned / "requirements.txt").write_text("pyyaml>=6\n")
    open_deps = _copy("jwt_confusion", tmp_path, "open_deps")
    (open_deps / "requirements.txt").write_text("pyjwt==2.3.0\ncryptography==50.0.2\n")
    report = import_cases([tmp_path], wheelhouse)
    assert report.items == []
    assert dict(report.rejected) == {
        "open_deps": "requirements.txt does not pin every dependency: pip would also install cffi==2.1.1, "
                     "pycparser==3.12; add them (name==version) to requirements.txt",
        "unpinned": "requirements.txt:1: 'pyyaml>=6' is not pinned as name==version (every package the program "
                    "imports, and each of their dependencies, must be pinned to one version)"}


def test_a_missing_wheelhouse_or_wheel_is_a_clear_error(tmp_path: Path, sites: Path) -> None:
    with pytest.raises(ConfigError, match=r"need third-party packages \(yaml_pipeline\) and no --wheelhouse was "
                                          r"given: make one with `pip download --only-binary :all: -d WHEELS "
                                          r"pyyaml==6.0.4`"):
        import_cases([CASES / "yaml_pipeline"])
    with pytest.raises(ConfigError, match="--wheelhouse .*nowhere: no such directory"):
        import_cases([CASES / "yaml_pipeline"], tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    report = import_cases([CASES / "yaml_pipeline"], empty)
    assert report.items == []
    (folder, reason), = report.rejected
    assert folder == "yaml_pipeline"
    assert reason.startswith(f"resolving pyyaml==6.0.4 from the wheelhouse {empty}: pip failed: ")
    assert "No matching distribution found for pyyaml==6.0.4" in reason


def test_site_directories_under_the_judges_own_folders_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SV_CACHE_DIR", "/tmp/sv-cache")
    with pytest.raises(ConfigError, match="covers with its own /tmp: set SV_CACHE_DIR to a folder outside"):
        check_sites_root()


def _broken(tmp_path: Path, name: str, edit: str) -> str:
    """The reason the case ``name``, broken by ``edit``, is rejected for (its layout: nothing runs)."""
    case = _copy(name, tmp_path, edit)
    meta = case / "case.toml"
    if edit == "no_case_toml":
        meta.rename(case / "case.json")
    elif edit == "missing_field":
        meta.write_text(meta.read_text().replace('cwe = "CWE-20"\n', ""))
    elif edit == "bad_id":
        meta.write_text(meta.read_text().replace('id = "cookie-prefix"', 'id = "Cookie Prefix"'))
    elif edit == "not_toml":
        meta.write_text(meta.read_text() + "\n[location\n")
    elif edit == "text_module":
        (case / "vulnerable" / "tidepool" / "README.txt").write_text("notes\n")
    elif edit == "other_modules":
        (case / "fixed" / "tidepool" / "sessions.py").rename(case / "fixed" / "tidepool" / "session.py")
    elif edit == "same_fix":
        shutil.copy(case / "vulnerable" / "tidepool" / "sessions.py", case / "fixed" / "tidepool" / "sessions.py")
    elif edit == "no_probe_function":
        tests = case / "tests.py"
        tests.write_text(tests.read_text().replace("def probe_logout(", "def check_logout("))
    elif edit == "bad_detector":
        probes = json.loads((case / "probes.json").read_text())
        probes[-1]["detect"] = {"kind": "contains", "text": "no canary"}
        (case / "probes.json").write_text(json.dumps(probes))
    elif edit == "no_probes_json":
        (case / "probes.json").unlink()
    elif edit == "fix_without_tests":
        (case / "probes.json").unlink()
        (case / "tests.py").unlink()
    elif edit == "location_elsewhere":
        meta.write_text(meta.read_text().replace('file = "tidepool/sessions.py"', 'file = "tidepool/views.py"'))
    elif edit == "location_past_end":
        meta.write_text(meta.read_text().replace("end = 23", "end = 230"))
    report = import_cases([case.parent]) if edit == "no_case_toml" else import_cases([case])
    assert report.items == []
    if edit == "no_case_toml":
        return str(report.problems.shown[0])
    (_, reason), = report.rejected
    return reason


@pytest.mark.parametrize(("edit", "reason"), [
    ("no_case_toml", "no_case_toml: not a case: no case.toml"),
    ("missing_field", "case.toml: cwe: Field required"),
    ("bad_id", "case.toml: id: Value error, id 'Cookie Prefix' must be 2 to 63 characters of a-z, 0-9 and '-', "
               "starting with a letter"),
    ("not_toml", "case.toml is not TOML: "),
    ("text_module", "vulnerable/ may hold only Python modules; found tidepool/README.txt"),
    ("other_modules", "fixed/ must hold the same modules as vulnerable/ (tidepool/sessions.py), not "
                      "tidepool/session.py"),
    ("same_fix", "fixed/ is the same as vulnerable/"),
    ("no_probe_function", "tests.py has no probe_logout(ctx) for the probe 'logout' of probes.json"),
    ("bad_detector", "probes.json: 6.detect: Value error, a 'contains' detector needs text holding {canary}"),
    ("no_probes_json", "tests.py and probes.json come together: one is missing"),
    ("fix_without_tests", "a case with fixed/ needs tests.py and probes.json (the self-check runs them)"),
    ("location_elsewhere", "case.toml: location file 'tidepool/views.py' is not a module of vulnerable/"),
    ("location_past_end", "Value error, location past the end of its file"),
])
def test_a_bad_layout_is_rejected_with_the_reason(tmp_path: Path, sites: Path, edit: str, reason: str) -> None:
    assert reason in _broken(tmp_path, "cookie_prefix", edit)


def test_a_case_without_a_fix_is_a_detection_only_item(tmp_path: Path, sites: Path) -> None:
    tested = _copy("cookie_prefix", tmp_path, "tested")
    shutil.rmtree(tested / "fixed")
    bare = _copy("proxy_redirect", tmp_path, "bare")
    for path in (bare / "fixed", bare / "tests.py", bare / "probes.json"):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    broken = _copy("tar_plugins", tmp_path, "not_exploited")
    shutil.copytree(broken / "fixed", broken / "vulnerable", dirs_exist_ok=True)
    shutil.rmtree(broken / "fixed")
    lines: list[str] = []
    report = import_cases([tmp_path], progress=lines.append)
    assert report.detection == 2 and len(report.items) == 2
    CodeRepair.check_items(report.items, None, "cases")
    for item in report.items:
        assert item.target["kind"] == "detection" and item.target["source"]["dataset"] == "cases"
        assert "fixed" not in item.target and "tests" not in item.target
    (folder, reason), = report.rejected
    assert folder == "not_exploited"
    assert reason.startswith("self-check failed: vulnerable version is not exploited by ")
    assert "[3/3] tested: 1 module(s), 4 functional + 3 exploit probe(s), no fix (detection only)" in lines
    assert "tested: ok (detection only: the vulnerable version is exploited)" in lines


def test_a_duplicate_id_is_rejected(tmp_path: Path, sites: Path) -> None:
    _copy("proxy_redirect", tmp_path, "a")
    _copy("proxy_redirect", tmp_path, "b")
    for folder in ("a", "b"):
        shutil.rmtree(tmp_path / folder / "fixed")
        (tmp_path / folder / "tests.py").unlink()
        (tmp_path / folder / "probes.json").unlink()
    report = import_cases([tmp_path])
    assert len(report.items) == 1
    assert report.rejected == [("b", "id 'proxy-redirect' is already the id of a")]


def test_the_command_imports_reports_rejections_and_eval_takes_the_result(
        imported: CasesReport, tmp_path: Path, wheelhouse: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases"
    _copy("yaml_pipeline", cases)
    (_copy("cookie_prefix", cases, "unpinned") / "requirements.txt").write_text("pyyaml\n")
    out = tmp_path / "real.jsonl"
    argv = ["data", "import", "code-repair", "--format", "cases", str(cases), "--wheelhouse", str(wheelhouse),
            "--out", str(out)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert (summary["n"], summary["rejected"], summary["problems"], summary["detection"]) == (1, 1, 1, 0)
    assert "[2/2] yaml_pipeline: 1 module(s), 6 functional + 3 exploit probe(s), needs pyyaml==6.0.4" in captured.err
    assert "yaml_pipeline: ok (vulnerable" in captured.err
    assert "1 case(s) rejected:\n  unpinned: requirements.txt:1: 'pyyaml' is not pinned" in captured.err
    assert [item.meta["case"] for item in read_jsonl(out, "real").items] == ["yaml-pipeline"]

    assert main([*argv, "--strict", "--quiet"]) == 1
    assert "1 problem(s) and --strict: nothing written" in capsys.readouterr().err
    assert main(["data", "import", "code-repair", "--format", "records", str(out), "--wheelhouse", str(wheelhouse),
                 "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--wheelhouse is for --format cases" in capsys.readouterr().err

    runs = tmp_path / "runs"
    assert main(["eval", "code-repair", "--data", str(out), "--model", "baseline:reference", "--out", str(runs)]) == 0
    report = next(runs.rglob("report.md")).read_text()
    assert "| reward_mean | ↑ | 1.0000 |" in report


def test_a_missing_wheelhouse_stops_the_command(tmp_path: Path, sites: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["data", "import", "code-repair", "--format", "cases", str(CASES / "jwt_confusion"), "--out",
            str(tmp_path / "x.jsonl"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "1 case(s) need third-party packages (jwt_confusion) and no --wheelhouse was given" in err
    assert "pip download --only-binary :all: -d WHEELS cffi==2.1.1 cryptography==50.0.2 pycparser==3.12 " \
           "pyjwt==2.3.0" in err
    assert not (tmp_path / "x.jsonl").exists()


def test_reading_a_case_gives_the_program_it_describes() -> None:
    case = read_case(CASES / "jwt_confusion")
    assert sorted(case.fixtures) == ["keys/sso_ed25519", "keys/sso_ed25519.pub"]
    program = to_program(case, "0" * 32)
    assert program.site == "0" * 32 and program.requirements == case.requirements
    assert program.timeout_s == 5.0 and program.location.file == "gateway/auth.py"
    assert "get_default_algorithms" in program.files["gateway/auth.py"].splitlines()[program.location.start - 1]
    assert to_program(read_case(CASES / "tar_plugins"), "ignored").site is None
