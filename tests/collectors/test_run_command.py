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


def test_a_command_killed_from_another_thread_ends_its_reader_at_once_not_at_its_timeout() -> None:
    """On stop, kill_running_commands ends what the collectors' threads run. It once closed the
    pipes those threads were waiting on in select(): the waits went on to the commands' own
    timeouts (a Ctrl-C took 10 s, and the watchdog). In a process of its own: killing every
    running command must not reach another test's."""
    import subprocess

    timeout = 300.0
    code = ("import threading, time\n"
            "from collectors import base\n"
            "got = []\n"
            f"reader = threading.Thread(target=lambda: got.append(base.run_command(['sleep', '600'], {timeout}).returncode))\n"
            "reader.start()\n"
            "while not base._running:\n    time.sleep(0.01)\n"
            "print('killed', base.kill_running_commands())\n"
            f"reader.join({timeout / 10})\n"
            "print('reader alive', reader.is_alive(), 'returncode', got)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                         cwd=Path(__file__).resolve().parents[2])
    # it ended because its command did, far sooner than its timeout; killed by a signal
    assert out.stdout.split() == ["killed", "1", "reader", "alive", "False", "returncode", "[-15]"], out.stderr


def test_after_the_process_says_it_is_exiting_no_command_starts() -> None:
    import subprocess

    code = ("from collectors.base import refuse_commands_from_now, run_command, CollectorError\n"
            "refuse_commands_from_now()\n"
            "try:\n    run_command(['true'], 5)\nexcept CollectorError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "not run, rackpulse is exiting: true"
