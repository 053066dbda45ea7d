"""The browser tests' shared parts: a running `rackpulse demo` with a login, Debian's Chromium
driven by Playwright, and a logged-in page. Screenshots go to test-artifacts/ for a person."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from app.credentials import hash_password
from tests.agent_hosts import free_port, stop

ROOT = Path(__file__).parent.parent.parent
ARTIFACTS = ROOT / "test-artifacts"
PASSWORD = "correct horse battery"
SPEED = 4  # the demo's story speed: a loop in demo.story.CYCLE / SPEED seconds
# Every 2 s, not 1: the demo's collectors start their tool stand-ins (a Python each, one per disk for
# smartctl) on every round, for the server and its agent; at 1 s that alone kept two cores busy and
# the browser tests then timed out on a CI machine.
SEEDED = 300.0  # start-up, then two days of 5-minute rollups and a month of hourly ones (test_demo_starts.py)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RACKPULSE_PASSWORD_HASH": hash_password(PASSWORD, n=2**12)}
    # No --dir: the demo makes its own temporary folder and removes it when the SIGTERM below stops it.
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--port", str(port), "--speed", str(SPEED),
                             "--interval", "2"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    # It answers at once and seeds its past meanwhile ("notice" in /healthz until then): the
    # charts are checked to open on their whole range, so the tests start once it is there.
    deadline = time.monotonic() + SEEDED
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"rackpulse demo exited with {proc.returncode} before it served (run it by hand to see why)")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as r:  # noqa: S310 - loopback
                if "notice" not in json.load(r):
                    break
        except OSError:
            pass
        time.sleep(0.2)
    try:
        yield base
    finally:
        stop(proc, grace=10.0)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser, server: str) -> Iterator[Page]:
    ctx = browser.new_context(base_url=server)
    pg = ctx.new_page()
    pg.goto("/login")
    pg.fill("input[name=password]", PASSWORD)
    # The login (a scrypt check and the overview) on a machine at load 50 took past Playwright's
    # default 30 s once; the demo's first page is what is waited for, not a race.
    pg.click("button[type=submit]", timeout=90_000)
    pg.wait_for_url(server + "/", timeout=90_000)
    yield pg
    ctx.close()


