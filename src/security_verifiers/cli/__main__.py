"""``python -m security_verifiers.cli``."""

from security_verifiers.cli import run

run()
