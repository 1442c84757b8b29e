"""The package's declared public API resolves, and importing the package loads none of it."""

import subprocess
import sys

import pytest

import security_verifiers


@pytest.mark.parametrize("name", [n for n in security_verifiers.__all__ if n != "__version__"])
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(security_verifiers, name) is not None


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError):
        security_verifiers.not_a_name  # noqa: B018


def test_importing_the_package_stays_cheap() -> None:
    code = "import sys, security_verifiers; print(any(m.startswith('security_verifiers.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
