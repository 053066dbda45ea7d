"""Shared test fixtures: paths, databases (SQLite and the PostgreSQL server on this machine)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, text

if TYPE_CHECKING:
    from tests.peers.mosquitto import Broker

FIXTURES = Path(__file__).parent / "fixtures"


def _travel_for_the_calendar_sweep() -> None:
    """RACKPULSE_TEST_CLOCK=<ISO date-time> (scripts/calendar_sweep.py sets it, with TZ): this
    process's wall clock starts at that moment and ticks on, before any test module is imported
    (the demo's heat pump reads the clock at import). time-machine moves time.time(), datetime and
    localtime in-process and leaves time.monotonic and the peers' own clocks alone, which
    libfaketime 0.9.10 could not here: with a faked monotonic clock Event.wait(1) never returned,
    with a real one every time.sleep raised EINVAL."""
    when = os.environ.get("RACKPULSE_TEST_CLOCK")
    if not when:
        return
    import datetime as dt
    from zoneinfo import ZoneInfo

    import time_machine

    moment = dt.datetime.fromisoformat(when)
    if moment.tzinfo is None:  # local wall time of TZ, as a person names the moment
        moment = moment.replace(tzinfo=ZoneInfo(os.environ.get("TZ", "UTC")))
    time_machine.travel(moment, tick=True).start()


_travel_for_the_calendar_sweep()
# Fixtures that start or use a real peer (routers, openvpn, upsd, snmpd, Prometheus, a browser, the PostgreSQL
# server). Tests using one are marked `peers`, so `-m "not peers"` picks the fast tests that need nothing
# beyond this checkout (the quick loop; scripts/mutation.py runs it per mutant). SQLite runs in both.
PEER_FIXTURES = {"routers", "vpn", "ups", "bmc", "broker", "agent", "switch", "stack", "server", "browser", "pg_url"}
# Whole files whose tests start rackpulse itself (serve, agent, demo) or a peer in the test body.
PEER_FILES = {"test_agents_e2e.py", "test_energy_bill.py", "test_agent_sender.py", "test_prometheus_stack.py", "test_serve_episodes.py",
              "test_dbcopy_and_agents_cli.py", "test_pages_with_real_peers.py", "test_endless_command.py",
              "test_browser.py", "test_heatpump.py", "test_packaging.py", "test_demo_cleanup.py",
              "test_mqtt_export.py", "test_remote_write.py", "test_export_guards.py", "test_one_truth.py", "test_stopping.py", "test_demo_story.py",
              "test_email.py", "test_dependencies_serve.py", "test_try_channel.py",
              "test_heartbeats_serve.py", "test_podman.py", "test_two_servers.py", "test_api_scripts.py",
              "test_agent_footprint.py", "test_demo_starts.py", "test_reload.py", "test_client_address.py",
              "test_privilege_split.py", "test_plugins.py"}


# Tests without peers measured over 0.3 s (scripts/slow_tests.py writes the list): marked `slow`,
# so `make quick` can leave them out. `make test` and CI run every test, listed or not.
SLOW_LIST = Path(__file__).parent / "slow-tests.txt"
SLOW = {line.split(" ", 1)[1] for line in SLOW_LIST.read_text().splitlines()
        if line and not line.startswith("#")} if SLOW_LIST.exists() else set()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "peers: starts a real peer process (set from its fixtures, or by hand)")
    config.addinivalue_line("markers", "slow: no peer, but over 0.3 s (tests/slow-tests.txt): left out of `make quick`")


# First: xdist's worker reads the xdist_group markers in its own hook of the same name.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if PEER_FIXTURES & set(getattr(item, "fixturenames", ())) or item.path.name in PEER_FILES:
            item.add_marker(pytest.mark.peers)
        elif item.nodeid in SLOW:
            item.add_marker(pytest.mark.slow)
        # `make test` runs with --dist loadgroup: a file whose tests share a peer started once for
        # the module (FRR, snmpd, upsd, a browser module's demo server) stays on one worker, in
        # order. The two browser modules run apart, at once, each with its own demo server and
        # Chromium: tests/e2e/conftest.py says what their demos cost. Every other test goes
        # wherever a worker is free.
        if together(item):
            item.add_marker(pytest.mark.xdist_group(name=str(item.path.relative_to(item.config.rootpath))))


def together(item: pytest.Item) -> bool:
    """Whether the test uses a fixture its module starts once (scope "module")."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


PG_ADMIN_URL = os.environ.get("RACKPULSE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'rackpulse.db'}"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database per test, dropped afterwards."""
    with pg_database() as url:
        yield url


@contextlib.contextmanager
def pg_database() -> Iterator[str]:
    """A new PostgreSQL database while the block runs (a test that needs a second one)."""
    name = f"rackpulse_t_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield url
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.peers)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each storage test runs twice: on a SQLite file and on the real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'rackpulse.db'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture(autouse=True)
def _stop_demo_peers() -> Iterator[None]:
    """The demo's simulated upsd and ISG a test started stop with it: no thread or port outlives a test."""
    from tests.peers import DEMO_PEERS

    yield
    while DEMO_PEERS:
        DEMO_PEERS.pop().stop()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """A real Mosquitto for the test, on a free port, stopped after it (tests/peers/mosquitto.py)."""
    from tests.peers import free_port
    from tests.peers.mosquitto import Broker

    b = Broker(tmp_path, free_port())
    b.start()
    yield b
    b.stop()
