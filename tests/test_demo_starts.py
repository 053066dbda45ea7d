"""`rackpulse demo` listens first and seeds its history in the background: the URL it prints
answers at once (it is printed when it answers), and every page says "History loading" until
the past is written, then stops saying it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.peers import free_port

ROOT = Path(__file__).resolve().parent.parent
START = 180.0  # building the host, the peers and the first collection on a loaded machine
SEED = 300.0  # two days of 5-minute rollups and a month of hourly ones for ~700 series


def page(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 - loopback
        return r.status, r.read().decode()


def test_the_demo_url_answers_when_printed_and_the_pages_say_history_loading_until_it_is_there(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--port", str(free_port()), "--interval", "2"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}, start_new_session=True)
    assert proc.stdout is not None
    said: list[str] = []

    def read_until(pattern: str, within: float) -> re.Match[str]:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            said.append(line)
            if m := re.search(pattern, line):
                return m
            assert line or proc.poll() is None, "".join(said)
        raise AssertionError(f"{pattern!r} not said within {within:g}s:\n{''.join(said)}")

    try:
        url = read_until(r"rackpulse demo: (http://127\.0\.0\.1:\d+/)", START)[1]
        status, overview = page(url)  # no retry: printed means answering
        health = json.loads(page(url + "healthz")[1])
        assert status == 200
        # Seeding takes far longer than answering one page: the first page says it. It may end
        # between the two requests on a loaded machine (the notice goes, then "history ready" is
        # printed), so /healthz, read second, says it unless it has ended.
        assert "History loading" in overview, overview[:2000]
        assert "History loading" in health.get("notice", "History loading"), health
        if not any("history ready" in line for line in said):
            read_until(r"rackpulse demo: history ready, \d+ series", SEED)
        assert "History loading" not in page(url)[1] and "notice" not in json.loads(page(url + "healthz")[1])
        assert "History loading" not in page(url + "disks")[1]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
