"""`scripts/mutation.py --help` says what it does and lists its packages (it crashed on a
KeyError), and a package it does not know is one clear line, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "mutation.py"


def test_help_lists_the_packages_and_exits_zero() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "make mutation" in run.stdout and "  alerting engine" in run.stdout


def test_an_unknown_package_is_one_clear_line() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), "no such thing"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stderr.strip() == "no such package: no such thing (--help lists them)"
