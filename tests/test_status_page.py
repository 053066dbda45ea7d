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
            # heartbeats: only the one that says public = true (the demo's photo-sync)
            assert "photo-sync" in r.text and "nightly-backup" not in r.text
            # containers and units too: only those marked public (jellyfin, nginx), never sonarr
            assert "media-jellyfin-1" in r.text and "nginx.service" in r.text and "media-sonarr-1" not in r.text
            assert (await c.get("/probes")).status_code == 303  # only /status is public
            await c.post("/login", data={"password": "correct horse", "next": "/status"})
            signed_in = (await c.get("/status")).text.split("<main")[1]
            assert "127.0.0.1:" in signed_in and "nightly-backup" in signed_in

    asyncio.run(scenario())


def ping_polls(store: Store, name: str, losses: list[float], every: int = 60, end: int = NOW) -> None:
    for i, loss in enumerate(losses):
        ts = end - (len(losses) - i) * every
        store.write_run("probes", ts, 0.01, True, None, CollectResult(samples=[
            Sample.of("rackpulse_probe_success", 1, probe=name, kind="ping"),
            Sample.of("rackpulse_probe_loss_ratio", loss, probe=name)]))


def test_a_ping_losing_30_percent_of_its_packets_is_70_percent_up_not_100(store: Store) -> None:
    ping_polls(store, "3G bond", [0.3] * 20)  # twenty minutes of data, every poll "succeeded"
    monitors = plugins()["probes"].monitor_list(one("probes", {"probes": [
        {"name": "3G bond", "kind": "ping", "ok": True, "target": "10.0.250.1", "loss": 0.3}]}))
    (row,) = status_rows(store, monitors, NOW)
    assert [round(u or 0, 3) for u in row.uptime] == [0.7, 0.7, 0.7]
    # twenty minutes of data do not make a 24 h, 7 d or 30 d figure: each says how much it covers
    assert [c.covered for c in row.cells] == [20 * 60] * 3 and row.since == NOW - 20 * 60


def test_the_last_day_is_90_bars_up_partly_up_down_or_without_data(store: Store) -> None:
    # 16 min per bar, three polls in the middle of each: the last bar's answered, the one before
    # partly, the one before that not at all
    width = 86400 // 90
    for back, results in ((0, [1, 1, 1]), (1, [1, 0, 1]), (2, [0, 0, 0])):
        polls(store, "web", results, end=NOW - back * width - 360)
    monitors = plugins()["probes"].monitor_list(one("probes", {"probes": [
        {"name": "web", "kind": "http", "ok": True, "target": "https://w.lan/"}]}))
    (row,) = status_rows(store, monitors, NOW)
    assert len(row.bars) == 90
    assert [b.state for b in row.bars[-3:]] == ["down", "partial", "up"]
    assert {b.state for b in row.bars[:-3]} == {"none"}
    assert row.bars_words == "last 24 hours in 90 stretches: 1 up, 1 partly up, 1 down, 87 without data"


def test_the_uptime_read_once_per_fold_follows_the_next_fold_and_the_clock(store: Store) -> None:
    """/status keeps the folded rollups' figures between requests (app/storage/uptime.py); a
    fold, or the windows moving on, must show, not the kept figures."""
    polls(store, "nas", [1] * 48, every=1800, end=NOW - 86400)  # a day of good polls, then a gap
    store.make_rollups(now=NOW - 86400 + 3600)
    monitors = plugins()["probes"].monitor_list(one("probes", {"probes": [
        {"name": "nas", "kind": "http", "ok": True, "target": "https://n.lan/"}]}))
    first = status_rows(store, monitors, NOW)
    assert first[0].uptime[1] == 1.0 and status_rows(store, monitors, NOW)[0].uptime == first[0].uptime
    polls(store, "nas", [0] * 20, every=1800, end=NOW)  # then down for ten hours
    store.make_rollups(now=NOW + 3600)
    after_fold = status_rows(store, monitors, NOW + 600)
    assert after_fold[0].uptime[0] == 0.0 and after_fold[0].uptime[1] == pytest.approx(48 / 68)
    # six days on, the good day has left the 7-day window: only the down hours are in it
    later = status_rows(store, monitors, NOW + 6 * 86400)[0].uptime
    assert later[1] == 0.0 and later[2] == pytest.approx(48 / 68)


def test_the_rows_are_read_once_a_minute_and_again_as_soon_as_a_monitor_changes(store: Store) -> None:
    polls(store, "nas", [1, 1, 0, 1], every=3600)
    up = plugins()["probes"].monitor_list(one("probes", {"probes": [
        {"name": "nas", "kind": "http", "ok": True, "target": "https://n.lan/"}]}))
    down = plugins()["probes"].monitor_list(one("probes", {"probes": [
        {"name": "nas", "kind": "http", "ok": False, "target": "https://n.lan/", "error": "HTTP 502"}]}))
    first = status_rows(store, up, NOW)
    assert status_rows(store, up, NOW + 1) is first  # the same minute, nothing changed: kept
    changed = status_rows(store, down, NOW + 2)
    assert changed is not first and changed[0].ok is False and changed[0].error == "HTTP 502"
    assert status_rows(store, up, NOW + 60) is not first  # the next minute: read again
