"""Where semgrep comes from: its own virtualenv (`sv engines install`), the order it is looked for in, and the
refusal of any version but the pinned one. Offline: fake `semgrep` scripts stand for the real one, and the install
is given a command runner that never starts pip."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import EngineUnavailable
from security_verifiers.engines import semgrep as semgrep_engine
from security_verifiers.engines.semgrep import (
    SEMGREP_VERSION,
    SemgrepEngine,
    checked_semgrep,
    install_commands,
    install_semgrep,
    locate_semgrep,
)


def fake_semgrep(path: Path, version: str = SEMGREP_VERSION) -> Path:
    """An executable that answers `--version` as semgrep does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def places(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Path]:
    """The four places semgrep is looked for, all empty: $SV_SEMGREP (unset), its own virtualenv
    ($SV_SEMGREP_HOME), next to the interpreter, PATH."""
    found = {"explicit": tmp_path / "explicit" / "semgrep", "home": tmp_path / "home",
             "interpreter": tmp_path / "venv" / "bin", "path": tmp_path / "path"}
    monkeypatch.delenv("SV_SEMGREP", raising=False)
    monkeypatch.setenv("SV_SEMGREP_HOME", str(found["home"]))
    monkeypatch.setattr(semgrep_engine.sys, "executable", str(found["interpreter"] / "python"))
    monkeypatch.setenv("PATH", str(found["path"]))
    return found


def test_the_pin_is_one_constant_and_no_package_dependency() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert f"semgrep=={SEMGREP_VERSION}" not in pyproject  # it lives in its own virtualenv, not the package's


def test_default_home_is_inside_the_virtualenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SV_SEMGREP_HOME", raising=False)
    monkeypatch.setattr(semgrep_engine.sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(semgrep_engine.sys, "base_prefix", "/usr")
    assert semgrep_engine.semgrep_home() == tmp_path / "venv" / "engines" / "semgrep"
    monkeypatch.setattr(semgrep_engine.sys, "prefix", "/usr")  # an interpreter outside any virtualenv
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert semgrep_engine.semgrep_home() == tmp_path / "data" / "security-verifiers" / "engines" / "semgrep"
    monkeypatch.setenv("SV_SEMGREP_HOME", str(tmp_path / "mine"))
    assert semgrep_engine.semgrep_home() == tmp_path / "mine"


def test_find_order(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = fake_semgrep(places["path"] / "semgrep")
    assert locate_semgrep() == (str(on_path), "PATH")
    local = fake_semgrep(places["interpreter"] / "semgrep")
    assert locate_semgrep() == (str(local), "next to this interpreter")
    dedicated = fake_semgrep(places["home"] / "bin" / "semgrep")
    assert locate_semgrep() == (str(dedicated), "its own virtualenv")
    explicit = fake_semgrep(places["explicit"])
    monkeypatch.setenv("SV_SEMGREP", str(explicit))
    assert locate_semgrep() == (str(explicit), "$SV_SEMGREP")
    assert checked_semgrep() == (str(explicit), SEMGREP_VERSION)


def test_another_version_is_refused_not_passed_over(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    fake_semgrep(places["home"] / "bin" / "semgrep")  # the right one, further down the order
    monkeypatch.setenv("SV_SEMGREP", str(fake_semgrep(places["explicit"], "1.100.0")))
    with pytest.raises(EngineUnavailable, match=r"semgrep 1\.100\.0 at .* is not the pinned 1\.182\.0.*"
                       r"sv engines install.*unset SV_SEMGREP"):
        checked_semgrep()
    with pytest.raises(EngineUnavailable, match="1.100.0"):
        SemgrepEngine()
    monkeypatch.delenv("SV_SEMGREP")
    fake_semgrep(places["home"] / "bin" / "semgrep", "1.190.0")  # a newer one in its own virtualenv
    fake_semgrep(places["interpreter"] / "semgrep")  # the pinned one next to the interpreter is not tried
    with pytest.raises(EngineUnavailable, match=r"semgrep 1\.190\.0 .*its own virtualenv.*sv engines install"):
        checked_semgrep()


def test_a_binary_given_to_the_engine_is_checked_too(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailable, match="1.0.0"):
        SemgrepEngine(binary=str(fake_semgrep(tmp_path / "semgrep", "1.0.0")))


def test_missing_semgrep_names_the_install_command(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    assert locate_semgrep() is None
    with pytest.raises(EngineUnavailable, match=r"semgrep 1\.182\.0 was not found .*; run `sv engines install`"):
        checked_semgrep()
    fake_semgrep(places["home"] / "bin" / "semgrep")
    monkeypatch.setenv("SV_SEMGREP", str(places["explicit"]))  # named on purpose, but absent: no other is used
    with pytest.raises(EngineUnavailable, match=r"not found at .*explicit/semgrep \(\$SV_SEMGREP\); run `sv engines "
                       r"install` or unset SV_SEMGREP"):
        checked_semgrep()


def test_code_repair_static_analysis_refuses_the_same_way(places: dict[str, Path],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from security_verifiers.envs.code_repair import static

    static._semgrep.cache_clear()
    try:
        with pytest.raises(EngineUnavailable, match="sv engines install"):
            static.semgrep_version()
        monkeypatch.setenv("SV_SEMGREP", str(fake_semgrep(places["explicit"], "1.100.0")))
        static._semgrep.cache_clear()
        with pytest.raises(EngineUnavailable, match=r"1\.100\.0 .*not the pinned"):
            static.semgrep_version()
    finally:
        static._semgrep.cache_clear()  # the next test finds the real one again


# -- sv engines install ---------------------------------------------------------------------------------------------
class FakeRunner:
    """Stands for venv and pip: records each command; pip 'installs' a fake semgrep of ``version``."""

    def __init__(self, home: Path, version: str = SEMGREP_VERSION, pip_status: int = 0) -> None:
        self.home, self.version, self.pip_status = home, version, pip_status
        self.commands: list[list[str]] = []

    def __call__(self, command: list[str]) -> int:
        self.commands.append(command)
        if command[1:3] == ["-m", "venv"]:
            fake_semgrep(self.home / "bin" / "python", "Python 3")
        elif command[1:4] == ["-m", "pip", "install"] and self.pip_status == 0:
            fake_semgrep(self.home / "bin" / "semgrep", self.version)
        return self.pip_status if command[1:3] == ["-m", "pip"] else 0


def test_install_creates_the_virtualenv_then_does_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run, out = FakeRunner(home), io.StringIO()
    binary, installed = install_semgrep(home, run=run, out=out)
    assert installed and binary == home / "bin" / "semgrep"
    assert run.commands == install_commands(home)
    assert run.commands[1][-1] == f"semgrep=={SEMGREP_VERSION}" and run.commands[1][0] == str(home / "bin" / "python")
    assert f"semgrep {SEMGREP_VERSION} installed: {binary}" in out.getvalue()
    again, out = FakeRunner(home), io.StringIO()
    assert install_semgrep(home, run=again, out=out) == (binary, False)
    assert again.commands == []
    assert f"semgrep {SEMGREP_VERSION} is already installed in {home}; nothing to do" in out.getvalue()


def test_install_replaces_another_version_with_pip_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fake_semgrep(home / "bin" / "python", "Python 3")
    fake_semgrep(home / "bin" / "semgrep", "1.100.0")
    run = FakeRunner(home)
    assert install_semgrep(home, run=run, out=io.StringIO())[1]
    assert run.commands == install_commands(home)[1:]  # the virtualenv is there: pip only


def test_a_failing_pip_is_a_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(RuntimeError, match=rf"pip could not install semgrep=={SEMGREP_VERSION} into .*home \(exit 1"):
        install_semgrep(home, run=FakeRunner(home, pip_status=1), out=io.StringIO())
    with pytest.raises(RuntimeError, match="reports version 1.100.0"):
        install_semgrep(home, run=FakeRunner(home, version="1.100.0"), out=io.StringIO())


def test_cli_install_and_status(places: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    binary = fake_semgrep(places["home"] / "bin" / "semgrep")
    assert main(["engines", "install"]) == 0  # already there: pip never runs
    captured = capsys.readouterr()
    assert captured.out.strip() == str(binary) and "already installed" in captured.err
    assert main(["engines", "status"]) == 0
    out = capsys.readouterr().out
    assert f"semgrep {SEMGREP_VERSION}: {binary} (its own virtualenv)" in out
    assert "checkov 3.3.30: " in out and "bandit " in out
    fake_semgrep(binary, "1.100.0")
    assert main(["engines", "status", "--json"]) == 1
    assert '"problem": "semgrep 1.100.0 at' in capsys.readouterr().out


def test_every_engines_option_that_takes_a_value_states_its_default() -> None:
    import argparse

    from security_verifiers.cli import build_parser

    engines = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices["engines"]
    commands = next(a for a in engines._actions if isinstance(a, argparse._SubParsersAction)).choices
    missing = [f"{name} {a.option_strings[0]}" for name, parser in commands.items() for a in parser._actions
               if a.option_strings and a.nargs != 0 and a.help and a.help != argparse.SUPPRESS
               and "default" not in a.help]
    assert sorted(commands) == ["install", "status"] and missing == []
