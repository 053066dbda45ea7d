"""The browser tests' demo fixture fails at once, with the end of the demo's log, when the demo
exits before it serves: it never hands the tests a server that is not up (a newcomer's `make
test` once showed 13 ERR_CONNECTION_REFUSED instead of the demo's own error)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_hosts import free_port
from tests.e2e.conftest import wait_until_seeded


def test_a_demo_that_exits_before_serving_fails_the_fixture_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", "print('rackpulse: port 1 is taken'); raise SystemExit(3)"],
                                stdout=out, stderr=subprocess.STDOUT)
    proc.wait(30)
    with pytest.raises(pytest.fail.Exception) as failed:
        wait_until_seeded(proc, f"http://127.0.0.1:{free_port()}", log)
    assert "exited with 3" in str(failed.value) and "port 1 is taken" in str(failed.value)
