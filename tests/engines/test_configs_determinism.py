"""A parse error's text is the same in every process (it is stored in outcomes and shown to models by tools)."""

import os
import subprocess
import sys

CODE = ("from security_verifiers.engines.configs import _hcl_loads; "
        "print(_hcl_loads('resource \"a\" \"b\" {\\n x = \\n}\\n'))")


def test_hcl_parse_errors_do_not_depend_on_the_hash_seed() -> None:
    texts = {subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3", "4")}
    assert len(texts) == 1 and "Expected one of: " in texts.pop()
