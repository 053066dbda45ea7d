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
from playwright.sync_api import Error as PlaywrightError

from app.credentials import hash_password
from tests.agent_hosts import DEMO_READY, free_port, stop

ROOT = Path(__file__).parent.parent.parent
ARTIFACTS = ROOT / "test-artifacts"
PASSWORD = "correct horse battery"
SPEED = 4  # the demo's story speed: a loop in demo.story.CYCLE / SPEED seconds
# Every 2 s, not 1: the demo's collectors start their tool stand-ins (a Python each, one per disk for
# smartctl) on every round, for the server and its agent; at 1 s that alone kept two cores busy and
# the browser tests then timed out on a CI machine. At 2 s a demo burns 0.61 cores of this machine's
# two while it runs (`bench/demo_cpu.py`); each browser module has its own, at once, on two workers.
INTERVAL = 2
SEEDED = DEMO_READY  # start-up, then the seeded past (tests/agent_hosts.py)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A demo of the module's own (each browser module runs on a worker of its own, beside the rest
    of the suite), polling every INTERVAL seconds or at the module's own DEMO_INTERVAL."""
    interval = getattr(request.module, "DEMO_INTERVAL", INTERVAL)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RACKPULSE_PASSWORD_HASH": hash_password(PASSWORD, n=2**12)}
    log = tmp_path_factory.mktemp("demo") / "demo.log"
    # No --dir: the demo makes its own temporary folder and removes it when the SIGTERM below stops it.
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--port", str(port), "--speed", str(SPEED),
                                 "--interval", str(interval)],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_seeded(proc, base, log)
        yield base
    finally:
        stop(proc, grace=10.0)


def wait_until_seeded(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    """Until the demo answers with its past seeded ("notice" in /healthz until then: the charts
    are checked to open on their whole range). A demo that exits, or is not ready by SEEDED,
    fails the test at once with the end of its log: no test gets a server that is not up."""
    deadline = time.monotonic() + SEEDED
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"rackpulse demo exited with {proc.returncode} before it served; its log ends:\n"
                        + tail(log))
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as r:  # noqa: S310 - loopback
                if "notice" not in json.load(r):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"rackpulse demo was not serving its seeded history within {SEEDED:.0f} s; its log ends:\n"
                + tail(log))


def tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


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
    retry_when_the_network_changes(pg)
    pg.goto("/login")
    pg.fill("input[name=password]", PASSWORD)
    # The login (a scrypt check and the overview) on a machine at load 50 took past Playwright's
    # default 30 s once; the demo's first page is what is waited for, not a race.
    pg.click("button[type=submit]", timeout=90_000)
    pg.wait_for_url(server + "/", timeout=90_000)
    yield pg
    ctx.close()




def retry_when_the_network_changes(pg: Page) -> None:
    """Chromium aborts every request in flight with net::ERR_NETWORK_CHANGED when an interface
    comes or goes anywhere on the machine, loopback requests included. Tests running beside the
    browser's (pytest -n) make them: Podman's veth pairs, network namespaces for FRR and OpenVPN.
    Such a navigation is made again, once or twice; any other failure is the test's."""
    original = pg.goto

    def goto(url: str, **kwargs: object) -> object:
        for attempt in range(3):
            try:
                return original(url, **kwargs)  # type: ignore[arg-type]
            except PlaywrightError as exc:
                if "ERR_NETWORK_CHANGED" not in str(exc) or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    pg.goto = goto  # type: ignore[method-assign]


def keep_screenshot(page: Page, path: Path) -> None:
    """A whole page as a picture for a person to look at (test-artifacts/), never the cause of a failure
    by itself taking long: a phone's long page (alerts, all disks: 8,000 CSS px) at its device scale
    of 2 is a 780×16,000 image, and under a CI load of 10 Chromium took over 30 s for it. It is taken
    at CSS scale (a quarter of the pixels), with the load's time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True, scale="css", timeout=90_000)
