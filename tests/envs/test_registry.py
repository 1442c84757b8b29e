"""The environment registry: environments are discovered (no central file names them), kits and private packages
(the template) are not, and a test can list an environment for the length of a block."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from security_verifiers.core.errors import ConfigError
from security_verifiers.envs import base
from security_verifiers.envs.base import discover, get_env, registered, registry


def test_the_built_in_environments_are_discovered_and_nothing_else() -> None:
    import security_verifiers.envs

    # not kits, nor _template
    assert discover(security_verifiers.envs) == ["code_repair", "config_audit", "network_logs", "phishing", "redteam"]
    assert {"network-logs", "config-audit", "code-repair", "phishing", "redteam-attack",
            "redteam-defense"} <= set(registry())
    assert "template" not in registry()


@pytest.fixture
def fake_envs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A package ``fake_envs`` with an environment package, a kits package, a private one and a module: each
    records its import in ``IMPORTED``."""
    root = tmp_path / "fake_envs"
    for name in ("alpha", "kits", "_draft", "zeta"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text(f"from fake_envs import IMPORTED\nIMPORTED.append({name!r})\n")
    (root / "__init__.py").write_text("IMPORTED = []\n")
    (root / "helpers.py").write_text("from fake_envs import IMPORTED\nIMPORTED.append('helpers')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "fake_envs"
    for module in [m for m in sys.modules if m == "fake_envs" or m.startswith("fake_envs.")]:
        del sys.modules[module]


def test_discover_imports_environment_packages_only(fake_envs: str) -> None:
    import importlib

    package = importlib.import_module(fake_envs)
    assert discover(package) == ["alpha", "zeta"]
    assert package.IMPORTED == ["alpha", "zeta"]  # not the kits, not _draft, not a plain module


def test_an_environment_that_fails_to_import_is_an_error(fake_envs: str, tmp_path: Path) -> None:
    import importlib

    (tmp_path / "fake_envs" / "alpha" / "__init__.py").write_text("raise RuntimeError('broken environment')\n")
    with pytest.raises(RuntimeError, match="broken environment"):
        discover(importlib.import_module(fake_envs))


def test_registered_lists_an_environment_for_the_block_only() -> None:
    from security_verifiers.envs.network_logs import NetworkLogs

    class Sibling(NetworkLogs):
        name = "network-logs-sibling"

    before = registry()
    with registered(Sibling):
        assert registry()["network-logs-sibling"] is Sibling
        assert isinstance(get_env("network-logs-sibling"), Sibling)
    assert registry() == before
    with pytest.raises(ConfigError, match="unknown environment 'network-logs-sibling'"):
        get_env("network-logs-sibling")


def test_registered_undoes_what_it_did_when_a_registration_fails() -> None:
    from security_verifiers.envs.network_logs import NetworkLogs

    class Sibling(NetworkLogs):
        name = "network-logs-sibling"

    class Impostor(NetworkLogs):
        pass

    before = registry()
    with pytest.raises(ValueError, match="registered twice"), registered(Sibling, Impostor):
        pass
    assert registry() == before


def test_registered_leaves_an_already_registered_environment_in_place() -> None:
    from security_verifiers.envs.network_logs import NetworkLogs

    with registered(NetworkLogs):
        pass
    assert registry()["network-logs"] is NetworkLogs


def test_a_second_class_under_a_registered_name_is_refused() -> None:
    from security_verifiers.envs.network_logs import NetworkLogs

    class Impostor(NetworkLogs):
        pass

    with pytest.raises(ValueError, match="registered twice"):
        base.register(Impostor)
    assert registry()["network-logs"] is NetworkLogs
