"""A year's chart kept for a minute (app/storage/grouped_cache.py): read again it is the same
points without the database's grouping; a late sample refolded into an hour it covers shows at
the next read, as does the hourly fold moving on; the newest part after the fold is always read
fresh; nothing kept outlives its minute or the cache's room."""

from __future__ import annotations

import time

from app.storage.base import DAY, RES_1H, RES_5M, ROLLUPS, Point
from app.storage.db import make_engine, upgrade
from app.storage.grouped_cache import ENTRIES, TTL, GroupedCache, grouped_cache
from app.storage.store import Store
from collectors.base import CollectResult, Sample


def pts(*values: float) -> list[Point]:
    return [Point(i, v, v, v) for i, v in enumerate(values)]


def test_a_kept_chart_is_read_once_within_its_minute_and_again_after() -> None:
    cache, reads = GroupedCache(), []

    def read() -> list[Point]:
        reads.append(1)
        return pts(1, 2, 3)

    assert cache.get((1, 3600, 0, 10, 6), read, now=0) == pts(1, 2, 3)
    assert cache.get((1, 3600, 0, 10, 6), read, now=TTL) == pts(1, 2, 3)
    assert len(reads) == 1
    cache.get((1, 3600, 0, 10, 6), read, now=TTL + 0.1)
    assert len(reads) == 2
    cache.get((1, 3600, 0, 11, 6), read, now=TTL + 0.2)  # the fold moved on: another key
    assert len(reads) == 3


def test_what_a_caller_adds_to_a_kept_chart_is_not_kept() -> None:
    cache = GroupedCache()
    first = cache.get((1, 3600, 0, 10, 6), lambda: pts(1, 2), now=0)
    first.append(Point(9, 9, 9, 9))
    assert cache.get((1, 3600, 0, 10, 6), lambda: pts(7), now=1) == pts(1, 2)


def test_a_change_forgets_everything_kept_and_one_during_a_read_keeps_that_read_out() -> None:
    cache = GroupedCache()
    cache.get((1, 3600, 0, 10, 6), lambda: pts(1), now=0)
    cache.changed()
    assert cache.get((1, 3600, 0, 10, 6), lambda: pts(2), now=1) == pts(2)

    def read_while_a_refold_lands() -> list[Point]:
        cache.changed()
        return pts(3)

    assert cache.get((2, 3600, 0, 10, 6), read_while_a_refold_lands, now=2) == pts(3)
    assert cache.get((2, 3600, 0, 10, 6), lambda: pts(4), now=3) == pts(4)


def test_only_the_most_recently_read_charts_are_kept() -> None:
    cache = GroupedCache()
    for sid in range(ENTRIES + 1):
        cache.get((sid, 3600, 0, 10, 6), lambda sid=sid: pts(sid), now=0)  # type: ignore[misc]
    assert cache.get((0, 3600, 0, 10, 6), lambda: pts(-1), now=1) == pts(-1)  # the oldest went
    assert cache.get((ENTRIES, 3600, 0, 10, 6), lambda: pts(-1), now=1) == pts(ENTRIES)


def year_of_hours(store: Store, now: int) -> int:
    """A year of hourly rollups at 30 for one series, folded up to the last whole hour."""
    with store.engine.begin() as conn:
        (sid,) = store.series_ids(conn, [("rackpulse_disk_temperature_celsius", "[]")])
    end = now // RES_1H * RES_1H
    rows = [{"series_id": sid, "bucket": b, "vmin": 30.0, "vavg": 30.0, "vmax": 30.0, "n": 120}
            for b in range((end - 365 * DAY) // RES_1H, end // RES_1H)]
    store.import_rollups({RES_1H: rows}, {RES_5M: end, RES_1H: end})
    return sid


def test_a_late_sample_in_a_folded_hour_shows_in_the_next_year_chart(db_url: str) -> None:
    upgrade(db_url)
    store = Store(make_engine(db_url), "nas")
    now = int(time.time())
    sid = year_of_hours(store, now)
    year = store.history(sid, now - 365 * DAY, now)
    assert 1000 < len(year) <= 1500 and max(p.vmax for p in year) == 30.0
    assert store.history(sid, now - 365 * DAY, now) == year
    # an agent's backlog: a reading of 55 from 100 days ago arrives now and refolds its hour
    late = now - 100 * DAY
    store.write_run("smart", late, 0.1, True, None,
                    CollectResult(samples=[Sample.of("rackpulse_disk_temperature_celsius", 55.0)]))
    after = store.history(sid, now - 365 * DAY, now)
    assert max(p.vmax for p in after) == 55.0
    # the newest part, after the hourly fold, is read on every request and added to a copy
    store.write_run("smart", now - 10, 0.1, True, None,
                    CollectResult(samples=[Sample.of("rackpulse_disk_temperature_celsius", 41.0)]))
    first, second = (store.history(sid, now - 365 * DAY, now + 1) for _ in range(2))
    assert first == second and first[-1].vmax == 41.0
    assert [p.ts for p in second] == sorted({p.ts for p in second})
    store.engine.dispose()


def test_retention_pruning_hours_is_seen_by_the_next_chart(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    upgrade(url)
    store = Store(make_engine(url), "nas")
    now = int(time.time())
    sid = year_of_hours(store, now)
    assert store.history(sid, now - 365 * DAY, now)[0].ts < now - 300 * DAY
    generation = grouped_cache(store.engine).generation
    store.prune(raw_days=7, rollup_5m_days=35, rollup_1h_days=200, now=now)
    assert grouped_cache(store.engine).generation > generation
    assert store.history(sid, now - 365 * DAY, now)[0].ts >= now - 201 * DAY
    with store.engine.connect() as conn:
        left = conn.execute(ROLLUPS[RES_1H].select()).all()
    assert min(r.bucket for r in left) * RES_1H >= now - 201 * DAY
    store.engine.dispose()
