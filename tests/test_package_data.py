"""Every file the package reads at run time ships with it: an installed (non-editable) package that lacked the
red-team public sets or a scanner's rules would fail only on a user's machine."""

from __future__ import annotations

import glob
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "security_verifiers"


def test_every_data_file_of_the_package_is_in_its_package_data() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "security_verifiers"]
    shipped = {path for pattern in patterns for path in glob.glob(pattern, root_dir=PACKAGE, recursive=True)
               if (PACKAGE / path).is_file()}
    data = {str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*")
            if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts}
    assert not data - shipped, f"not in [tool.setuptools.package-data]: {sorted(data - shipped)[:10]}"
