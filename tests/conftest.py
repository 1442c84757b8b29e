"""Test-wide settings: scan in-process (tests that exercise the oracle's worker pool ask for it explicitly)."""

import os

os.environ.setdefault("SV_ORACLE_WORKERS", "0")
os.environ.setdefault("MPLBACKEND", "Agg")
