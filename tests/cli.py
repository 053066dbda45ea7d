"""The `rackpulse` command run inside the test process: what a user would see on stdout, stderr
(logging included) and as the exit status, without paying a Python start-up per call.

A few tests still start the real installed command (tests/test_cli_and_config.py), so the entry
point itself stays covered."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

from app.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    # The command sets up logging to its stderr; pytest's own capture handler would stop that.
    root.handlers = []
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(mock.patch.dict(os.environ, env or {}))
            stack.enter_context(mock.patch.object(sys, "stdout", out))
            stack.enter_context(mock.patch.object(sys, "stderr", err))
            stack.enter_context(mock.patch.object(sys, "stdin", io.StringIO(stdin or "")))
            stack.enter_context(contextlib.chdir(cwd or ROOT))
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors and --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        for h in root.handlers:
            h.close()
        root.handlers, root.level = handlers, level
    return subprocess.CompletedProcess(["rackpulse", *args], code, out.getvalue(), err.getvalue())
