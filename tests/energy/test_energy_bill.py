"""The month's bill, worked out by hand from known counters and time-of-use bands, is the figure
the /energy page and /api/v1/energy show, to the cent; a source inside another (the server behind
the UPS) is counted once. Counters stored as the real rollups store them (hourly rows), in SQLite
and in PostgreSQL."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from app.config import load_config
from app.storage.base import RES_1H
from app.storage.db import upgrade
from app.web.app import create_app
from collectors.base import Sample

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 15, 12, 0, tzinfo=BERLIN).timestamp()
START = datetime(2026, 10, 20, 0, 0, tzinfo=BERLIN).timestamp()  # the counters' first hour
WATTS = {"rack": 100.0, "ups": 150.0, "r720": 90.0}  # r720's BMC: a server the UPS feeds


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'db.sqlite'}"
        return
    from tests.conftest import pg_database

    with pg_database() as url:
        yield url


def config(url: str) -> Any:
    return load_config(None, {"host": "nas", "storage": {"url": url},
                              "collectors": {"host": {"enabled": False}},
                              "energy": {"price_per_kwh": 0.30, "currency": "EUR", "timezone": "Europe/Berlin",
                                         "monthly_budget": 45.0, "inside": {"r720": "ups"},
                                         "tariffs": [{"from": "22:00", "to": "06:00", "price": 0.24}]}})


def store_counters(store: Any) -> None:
    """Each source's never-falling counter, hour by hour from START to NOW, as hourly rollups."""
    keys = [("rackpulse_energy_joules_total", Sample.of("rackpulse_energy_joules_total", 0, source=s).labels)
            for s in WATTS]
    from app.storage.store import labels_key

    with store.engine.begin() as conn:
        ids = store.series_ids(conn, [(m, labels_key(lab)) for m, lab in keys])
    rows = []
    for sid, watts in zip(ids, WATTS.values(), strict=True):
        for hour in range(int(START), int(NOW), RES_1H):
            before, after = (hour - START) * watts, (hour + RES_1H - START) * watts
            rows.append({"series_id": sid, "bucket": hour // RES_1H, "vmin": before, "vavg": (before + after) / 2,
                         "vmax": after, "n": 120})
    store.import_rollups({RES_1H: rows}, {RES_1H: int(NOW)})


def bill_app(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The app over the counters of store_counters, at NOW."""
    cfg = config(db_url)
    upgrade(cfg.storage.url)
    app = create_app(cfg, collect=False, migrate=False)
    store_counters(app.state.store)
    monkeypatch.setattr("app.energy.ledger.clock", lambda: NOW)
    return app


def test_the_months_bill_by_hand_is_what_the_page_and_the_api_say(db_url: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # By hand, for the lab (rack 0.1 kWh an hour, the UPS 0.15; r720 is inside the UPS: not added):
    # 1 to 15 November 12:00 is 348 hours, 118 of them in the 22:00-06:00 band (14 nights of 8
    # hours, and 00:00-06:00 today): 0.25 kWh x (118 x 0.24 + 230 x 0.30) = 24.33 EUR for 87 kWh.
    # Today, 00:00-12:00: 0.25 x (6 x 0.24 + 6 x 0.30) = 0.81 EUR. At this pace November (720
    # hours) costs 24.33 x 720 / 348 = 50.34 EUR, past the budget of 45. October from the 20th:
    # 289 hours (the 25th has 25: summer time ends), 97 at night: 0.25 x (97 x 0.24 + 192 x 0.30).
    app = bill_app(db_url, monkeypatch)

    async def read() -> tuple[dict[str, Any], str]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            return (await c.get("/api/v1/energy")).json(), (await c.get("/energy")).text

    got, page = asyncio.run(read())
    lab = got["lab"]
    assert lab["month"] == {"kwh": 87.0, "cost": 24.33}
    assert lab["today"] == {"kwh": 3.0, "cost": 0.81}
    assert lab["last_month"] == {"kwh": 72.25, "cost": round(0.25 * (97 * 0.24 + 192 * 0.30), 2)}
    assert got["projected_month_cost"] == 50.34 and got["monthly_budget"] == 45.0
    sources = {s["source"]: s for s in got["sources"]}
    assert sources["r720"]["inside"] == "ups" and sources["r720"]["share"] is None
    assert sources["r720"]["month"]["kwh"] == pytest.approx(348 * 0.09)  # shown on its own row, counted once
    assert (sources["rack"]["share"], sources["ups"]["share"]) == (pytest.approx(0.4), pytest.approx(0.6))
    assert "24.33 EUR</strong>" in page and '<strong id="projected">50.34 EUR</strong>' in page and "over" in page
    assert "inside ups: counted there" in page


def test_the_stacked_chart_adds_up_to_the_bill_by_hour_day_and_month(db_url: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    app = bill_app(db_url, monkeypatch)

    async def read() -> tuple[dict[str, dict[str, Any]], str]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            got = {r: (await c.get(f"/api/v1/energy/history?range={r}")).json() for r in ("24h", "30d", "12mo")}
            return got, (await c.get("/energy?range=12mo")).text

    got, page = asyncio.run(read())
    # the rack (0.1 kWh an hour) and the UPS (0.15) stacked; r720 is inside the UPS: not a band of its own
    assert [s["source"] for s in got["30d"]["sources"]] == ["ups", "rack"]
    day = dict(zip(got["30d"]["periods"], got["30d"]["total"], strict=True))
    assert day["2026-10-19T00:00:00+02:00"] == 0  # before the counters began
    assert day["2026-10-20T00:00:00+02:00"] == 6.0
    assert day["2026-10-25T00:00:00+02:00"] == 6.25  # 25 hours: summer time ended that night
    assert day["2026-10-26T00:00:00+01:00"] == 6.0
    assert (day["2026-11-14T00:00:00+01:00"], day["2026-11-15T00:00:00+01:00"]) == (6.0, 3.0)  # today: to noon
    assert len(day) == 30
    hours = got["24h"]["total"]
    assert got["24h"]["periods"][-1] == "2026-11-15T12:00:00+01:00" and hours == [0.25] * 23 + [0.0]
    month = dict(zip(got["12mo"]["periods"], got["12mo"]["total"], strict=True))
    assert len(month) == 12 and list(month)[0] == "2025-12-01T00:00:00+01:00"
    # what the table says for this month and last: 87 and 72.25 kWh
    assert (month["2026-10-01T00:00:00+02:00"], month["2026-11-01T00:00:00+01:00"]) == (72.25, 87.0)
    assert sum(month.values()) == 72.25 + 87.0
    bands = re.findall(r'<rect class="src-\d" [^>]*data-source="(\w+)" data-kwh="([\d.]+)"', page)
    assert sorted(bands) == [("rack", "28.900"), ("rack", "34.800"), ("ups", "43.350"), ("ups", "52.200")]
    assert '<a href="?range=12mo" aria-current="true">12 months</a>' in page


def test_a_source_inside_one_this_host_does_not_have_is_counted_in_the_lab(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    cfg = load_config(None, {"host": "nas", "storage": {"url": url}, "collectors": {"host": {"enabled": False}},
                             "energy": {"price_per_kwh": 0.30, "timezone": "Europe/Berlin",
                                        "inside": {"r720": "ups", "rack": "pdu"}}})  # no "pdu" here
    upgrade(url)
    app = create_app(cfg, collect=False, migrate=False)
    store_counters(app.state.store)
    monkeypatch.setattr("app.energy.ledger.clock", lambda: NOW)

    async def read() -> tuple[dict[str, Any], dict[str, Any]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            return ((await c.get("/api/v1/energy")).json(),
                    (await c.get("/api/v1/energy/history?range=12mo")).json())

    got, chart = asyncio.run(read())
    sources = {s["source"]: s for s in got["sources"]}
    assert sources["rack"]["inside"] is None and sources["r720"]["inside"] == "ups"
    assert got["lab"]["month"]["kwh"] == 87.0  # the rack and the UPS, as without a "pdu" at all
    assert [s["source"] for s in chart["sources"]] == ["ups", "rack"]
