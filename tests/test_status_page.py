"""/status: each probe's uptime over 24 h, 7 d and 30 d; public only when configured, and then
without addresses or error texts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from app.credentials import hash_password
from app.storage.db import make_engine, upgrade
from app.storage.store import Store
from app.web.status import status_rows, uptime
from collectors import plugins
from collectors.base import CollectResult, Sample
from tests.states import one
from tests.test_web import demo_app, fetch

NOW = 1_795_000_000 // 3600 * 3600


@pytest.fixture
def store(tmp_path: Path) -> Store:
    url = f"sqlite:///{tmp_path / 's.db'}"
    upgrade(url)
    return Store(make_engine(url), "nas")


def polls(store: Store, name: str, results: list[int], every: int = 60, end: int = NOW) -> None:
    for i, ok in enumerate(results):
        ts = end - (len(results) - i) * every
        store.write_run("probes", ts, 0.01, True, None, CollectResult(samples=[
            Sample.of("rackpulse_probe_success", ok, probe=name, kind="http")]))


def test_uptime_is_the_share_of_polls_that_succeeded_within_each_window(store: Store) -> None:
    polls(store, "cloud", [1, 1, 0, 1], every=3600)  # the last four hours: one failed poll
    polls(store, "cloud", [0] * 10, every=3600, end=NOW - 3 * 86400)  # down for ten hours three days ago
    sid = store.find_series("rackpulse_probe_success", probe="cloud", kind="http")
    assert uptime(store, sid, NOW - 86400, NOW) == 0.75
    assert uptime(store, sid, NOW - 7 * 86400, NOW) == pytest.approx(3 / 14)
    assert uptime(store, None, NOW - 86400, NOW) is None  # never stored: no figure, not 0 %
    monitors = plugins()["probes"].monitor_list(one("probes", {"probes": [
        {"name": "cloud", "kind": "http", "ok": True, "target": "https://c.lan/"}]}))
    rows = status_rows(store, monitors, NOW)
    assert rows[0].uptime[0] == 0.75 and rows[0].name == "cloud"


def test_the_status_page_lists_every_probe_with_its_uptime(tmp_path: Path) -> None:
    text = fetch(demo_app(tmp_path, 80, runs=2), "/status").text
    row = text.split("UPS server")[1].split("</tr>")[0]
    assert "127.0.0.1:" in row and "✔</span> up" in row and row.count("100.00 %") == 3


@pytest.mark.parametrize("public", [False, True])
def test_behind_a_login_the_status_page_is_public_only_when_configured_and_then_says_no_addresses(
        tmp_path: Path, public: bool) -> None:
    pw_hash = hash_password("correct horse", n=2**10)
    app = demo_app(tmp_path, 0, extra={"web": {"listen": "0.0.0.0", "password_hash": pw_hash, "status_public": public}})

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            r = await c.get("/status")
            if not public:
                assert r.status_code == 303 and r.headers["location"] == "/login?next=/status"
                return
            assert r.status_code == 200 and "UPS server" in r.text and "heat pump gateway" in r.text
            assert "127.0.0.1:" not in r.text.split("<main")[1]
            assert (await c.get("/probes")).status_code == 303  # only /status is public
            await c.post("/login", data={"password": "correct horse", "next": "/status"})
            assert "127.0.0.1:" in (await c.get("/status")).text.split("<main")[1]

    asyncio.run(scenario())
