"""A chart gets at most the points it can draw: a month of 5-minute rollups (8,640 buckets) comes
as at most 1,500 points, fewer when a narrow chart asks, each standing for its buckets' lowest,
mean and highest, so a spike still shows at its height."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.demo import story
from app.demo.history import seed_history
from app.storage.base import RES_5M, Point
from app.storage.db import make_engine
from app.storage.samples import thin
from app.storage.store import Store
from tests.security.test_web_guards import make_app


def test_thinning_keeps_the_spike_the_dip_and_the_mean_of_each_group() -> None:
    points = [Point(t * RES_5M, 20.0, 21.0, 22.0) for t in range(8640)]
    points[4321] = Point(4321 * RES_5M, 5.0, 40.0, 90.0)
    got = thin(points, 1500)
    assert len(got) <= 1500 and got[0].ts == 0
    assert max(p.vmax for p in got) == 90.0 and min(p.vmin for p in got) == 5.0
    spiked = next(p for p in got if p.vmax == 90.0)
    assert spiked.vavg == pytest.approx((21.0 * 5 + 40.0) / 6)  # six buckets a point: 8,640 / 6 = 1,440
    assert thin(points[:1500], 1500) == points[:1500]  # what fits is left alone


def test_a_month_of_rollups_comes_as_at_most_the_points_asked_for(tmp_path: Path) -> None:
    app = make_app(tmp_path, password=False)
    store = Store(make_engine(app.state.site.cfg.storage.url), "nas")
    now = int(time.time())  # the API's charts end now
    seed_history(store, now=now, days=31)
    serial = story.story_state(0)["disks"][0]["serial"]
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial=serial)
    assert sid is not None
    every = store.history(sid, now - 30 * 86400, now, max_points=10**6)
    assert len(every) > 8000  # the month's 5-minute rollups, whole
    month = store.history(sid, now - 30 * 86400, now)
    assert len(month) <= 1500
    # The seeded history has rollups and no raw samples: past the hourly fold (the last hour or
    # two) a month's chart has nothing to aggregate, where a running server has its raw samples.
    # The extremes are compared over the hours it covers (the newest one could hold the lowest
    # value of the month: the test failed at some times of day).
    covered = [p for p in every if p.ts < month[-1].ts + 3600]
    assert max(p.vmax for p in month) == max(p.vmax for p in covered)
    assert min(p.vmin for p in month) == min(p.vmin for p in covered)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        for path in ("/api/series", "/api/v1/series"):
            q = {"metric": "rackpulse_disk_temperature_celsius", "label": f"serial={serial}", "range": "30d"}
            wide, narrow = c.get(path, params=q).json(), c.get(path, params={**q, "points": 300}).json()
            assert 0 < len(wide["ts"]) <= 1500 and 0 < len(narrow["ts"]) <= 300, path
            # the step is the points' usual distance, so the chart draws no gap between them
            assert narrow["step"] >= 30 * 86400 / 300 * 0.9 and wide["step"] >= RES_5M
            assert c.get(path, params={**q, "points": 10}).status_code == 422


def test_a_year_of_hourly_rollups_is_grouped_by_the_database_to_the_points_asked_for(tmp_path: Path) -> None:
    from app.storage.samples import resolution

    app = make_app(tmp_path, password=False)
    store = Store(make_engine(app.state.site.cfg.storage.url), "nas")
    now = int(time.time())
    seed_history(store, now=now, days=2)
    serial = story.story_state(0)["disks"][0]["serial"]
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial=serial)
    assert sid is not None
    start = now - 365 * 86400
    every = store.history(sid, start, now, max_points=10**6)
    year = store.history(sid, start, now)
    assert resolution(now - start) == 3600 and len(every) > 8000
    assert 1000 < len(year) <= 1500  # six hours a point: 1,460
    assert max(p.vmax for p in year) == max(p.vmax for p in every)
    assert min(p.vmin for p in year) == min(p.vmin for p in every)
    assert [p.ts for p in year] == sorted(p.ts for p in year)


@pytest.mark.parametrize("range_", ["1h", "6h", "24h"])
def test_a_counters_rate_covers_the_range_as_the_counter_does(tmp_path: Path, range_: str) -> None:
    """A rate has no point at the first sample (nothing before it): one bucket earlier is read,
    so the rate's chart starts where the counter's does, not a bucket late ("no data before …",
    as a server's first minutes of raw samples beside its seeded 5-minute past showed)."""
    from app.storage.store import labels_key

    app = make_app(tmp_path, password=False)
    store = Store(make_engine(app.state.site.cfg.storage.url), "nas")
    now = int(time.time())
    metric = "rackpulse_openvpn_received_bytes_total"
    with store.engine.begin() as conn:
        (sid,) = store.series_ids(conn, [(metric, labels_key((("instance", "site-b"),)))])
    past = now // RES_5M * RES_5M - 300  # two days of 5-minute rollups of a counter climbing 1 kB/s...
    rows = [{"series_id": sid, "bucket": ts // RES_5M, "vmin": ts * 1e3, "vavg": ts * 1e3 + 150e3, "vmax": ts * 1e3 + 300e3,
             "n": 10} for ts in range(past - 2 * 86400, past, RES_5M)]
    store.import_rollups({RES_5M: rows, 3600: []}, {RES_5M: past, 3600: past // 3600 * 3600})
    store.write_rows([(sid, ts, ts * 1e3) for ts in range(past, now, 2)])  # ...then raw samples every 2 s
    with TestClient(app, base_url="http://127.0.0.1") as c:
        q = {"metric": metric, "label": "instance=site-b", "range": range_}
        counter, rate = c.get("/api/series", params=q).json(), c.get("/api/series", params={**q, "rate": 1}).json()
    assert counter["ts"] and rate["ts"]
    # the chart's own test (static/app.js since()): a first point later than 3 steps is "no data before"
    assert rate["ts"][0] <= counter["ts"][0] + 1 and rate["ts"][0] <= rate["start"] + 3 * rate["step"], rate["ts"][:3]
    assert all(v >= 0 for v in rate["avg"])
