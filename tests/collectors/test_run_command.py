"""External commands: never a shell, always a timeout, the whole process group killed."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from collectors.base import CollectorError, run_command


def test_a_hung_command_and_its_children_are_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = ("import subprocess, sys, time\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
              "time.sleep(60)\n")
    with pytest.raises(CollectorError, match="timed out after 1s"):
        run_command([sys.executable, "-c", script], timeout=1)
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the grandchild of a timed-out command is still running")


def test_a_missing_command_is_a_clear_error() -> None:
    with pytest.raises(CollectorError, match="command not found: 'no-such-smartctl'"):
        run_command(["no-such-smartctl", "--json"], timeout=5)


def test_arguments_are_never_interpreted_by_a_shell(tmp_path: Path) -> None:
    r = run_command([sys.executable, "-c", "import sys; print(sys.argv[1])", "$(touch pwned); `id`"], timeout=10)
    assert r.stdout.decode().strip() == "$(touch pwned); `id`"
    assert not Path("pwned").exists()


def test_exit_status_and_stderr_are_kept() -> None:
    r = run_command([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(2)"], timeout=10)
    assert (r.returncode, r.stderr) == (2, b"boom")
