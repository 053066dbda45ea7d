"""storage.max_size: a database filled past its bound gives up its oldest data first (raw samples,
then rollups), keeps the newest hour whole, says what it gave up, and the overview shows it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.storage.db import make_engine, upgrade
from app.storage.models import rollup_5m, sample
from app.storage.size import TIERS, last_trim, oldest_of, parse_size, table_bytes, trim, used_bytes
from app.storage.store import DAY, RES_5M, Store
from collectors.base import Sample

NOW = 1_800_000_000
SERIES = 40


def filled(tmp_path: Path, days: int = 6, url: str | None = None) -> Store:
    url = url or f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    store = Store(make_engine(url), "nas")
    step = 120
    with store.engine.begin() as conn:
        for ts in range(NOW - days * DAY, NOW, step):
            store.write_samples(conn, ts, [Sample.of("rackpulse_test_value", (ts // step + i) % 97, n=str(i))
                                           for i in range(SERIES)])
    store.make_rollups(now=NOW)
    return store


def oldest_raw(store: Store) -> int:
    """The oldest raw sample, rows and blocks alike."""
    found = oldest_of(store.engine, TIERS[0])
    assert found is not None
    return found


def counts(store: Store) -> tuple[int, int, int, int]:
    raw_first = oldest_raw(store)
    with store.engine.connect() as c:
        last_hour = c.execute(select(func.count()).select_from(sample).where(sample.c.ts >= NOW - 3600)).scalar()
        r5_first = c.execute(select(func.min(rollup_5m.c.bucket))).scalar()
        r5 = c.execute(select(func.count()).select_from(rollup_5m)).scalar()
    return int(raw_first), int(last_hour), int(r5_first) * RES_5M, int(r5)


def test_past_max_size_the_oldest_raw_samples_go_first_and_the_newest_hour_stays(tmp_path: Path) -> None:
    store = filled(tmp_path)
    before = used_bytes(store.engine)
    raw_first, hour, r5_first, r5 = counts(store)
    sizes = table_bytes(store.engine)
    assert sizes is not None
    bound = before - (sizes["sample"] + sizes["sample_block"]) // 3  # a third of the raw samples' room
    said = trim(store.engine, bound, store._watermark(RES_5M), now=NOW)
    assert used_bytes(store.engine) <= bound and said and said[0].startswith("raw samples before")
    raw_after, hour_after, r5_first_after, r5_after = counts(store)
    assert raw_after > raw_first  # the oldest raw went
    assert (r5_first_after, r5_after) == (r5_first, r5)  # and only raw: the rollups keep the past
    assert hour_after == hour == SERIES * 30  # the newest hour whole
    note = last_trim(store.engine)
    assert note is not None and note["max_bytes"] == bound and "raw samples" in str(note["dropped"])


def test_when_raw_samples_are_not_enough_the_oldest_rollups_go_too(tmp_path: Path) -> None:
    store = filled(tmp_path)
    _, hour, r5_first, _ = counts(store)
    # room for what is not history and 100 kB of history: less than the raw samples take (blocks)
    from app.storage.size import _other_bytes

    used = used_bytes(store.engine)
    said = trim(store.engine, _other_bytes(store.engine, used) + 100_000, store._watermark(RES_5M), now=NOW)
    assert said[0].startswith("raw samples") and any(s.startswith("5-minute rollups") for s in said)
    raw_after, hour_after, r5_first_after, _ = counts(store)
    assert r5_first_after > r5_first and raw_after >= NOW - 3600 - 120
    assert hour_after == hour  # whatever the bound, the newest hour stays


@pytest.mark.parametrize("text, value", [("5GB", 5 * 10**9), ("500 MB", 500 * 10**6), ("2GiB", 2 * 2**30),
                                         ("1024", 1024), (None, None)])
def test_max_size_is_read_in_the_units_people_write(text: str | None, value: int | None) -> None:
    assert parse_size(text) == value


def test_a_max_size_that_is_not_a_size_is_a_config_error(tmp_path: Path) -> None:
    from app.config import load_config

    with pytest.raises(Exception, match="max_size"):
        load_config(None, {"storage": {"max_size": "lots"}})


def test_the_overview_says_what_max_size_gave_up(tmp_path: Path) -> None:
    from tests.test_web import demo_app, fetch

    app = demo_app(tmp_path, 80)
    app.state.runtime.size_note = {"at": time.time() - 60, "max_bytes": 5 * 10**9,
                                   "dropped": "raw samples before 2026-11-01 00:00 (1200 rows)", "steps": 3}
    page = fetch(app, "/").text
    assert "reached storage.max_size" in page and "raw samples before 2026-11-01 00:00" in page


@pytest.mark.peers  # the real PostgreSQL server
def test_on_postgresql_a_step_goes_each_time_the_files_grow_past_the_bound_not_everything_at_once(
        tmp_path: Path, pg_url: str) -> None:
    """PostgreSQL's files keep their size after a delete: measured the SQLite way, every trim
    would give up all but the newest hour, at every maintenance. One day goes, its space is
    vacuumed for new rows, and nothing more until the files grow again."""
    from app.storage.chunks import readable

    store = filled(tmp_path, url=pg_url)
    raw, r5 = sample, readable("postgresql", rollup_5m)

    def firsts() -> tuple[int, int, int]:
        with store.engine.connect() as c:
            return (oldest_raw(store),
                    int(c.execute(select(func.min(r5.c.bucket))).scalar_one()),
                    int(c.execute(select(func.count()).select_from(raw).where(raw.c.ts >= NOW - 3600)).scalar_one()))

    raw_first, r5_first, hour = firsts()
    bound = used_bytes(store.engine) - 1
    said = trim(store.engine, bound, store._watermark(RES_5M), now=NOW)
    assert len(said) == 1 and said[0].startswith("raw samples before")
    raw_after, r5_after, hour_after = firsts()
    assert raw_first < raw_after <= raw_first + DAY and r5_after == r5_first and hour_after == hour == SERIES * 30
    assert trim(store.engine, bound, store._watermark(RES_5M), now=NOW) == []  # the files did not grow
    with store.engine.begin() as conn:  # three days of twice the series: more than the day given up
        for ts in range(NOW - 3 * DAY, NOW, 120):
            store.write_samples(conn, ts, [Sample.of("rackpulse_test_more", i, n=str(i)) for i in range(2 * SERIES)])
    assert used_bytes(store.engine) > bound
    assert [w.split(" before")[0] for w in trim(store.engine, bound, store._watermark(RES_5M), now=NOW)] == [
        "raw samples"]
    assert firsts()[0] > raw_after
    store.engine.dispose()


def flood_inventory(store: Store, rows: int, days: int = 3) -> None:
    """An agent's inventory changes: ``rows`` entity events spread over the last ``days`` days."""
    from app.storage.models import entity_event

    with store.engine.begin() as conn:
        conn.execute(entity_event.insert(), [
            {"host": "flood", "kind": "disk", "key": f"d{i % 500}", "ts": NOW - days * DAY + i * (days * DAY / rows),
             "field": "temperature", "old": "x" * 80, "new": "y" * 80} for i in range(rows)])


def history(store: Store) -> tuple[int, int, int]:
    from app.storage.models import rollup_1h

    with store.engine.connect() as c:
        return tuple(int(c.execute(select(func.count()).select_from(t)).scalar_one())  # type: ignore[return-value]
                     for t in (sample, rollup_5m, rollup_1h))


def test_inventory_changes_over_the_bound_never_cost_the_history_a_single_rollup(tmp_path: Path) -> None:
    """The inventory changes alone are over the bound: deleting history cannot fit, so the
    history stays whole; the changes' old days go, their newest day stays, and the note says why."""
    from app.storage.models import entity_event

    store = filled(tmp_path, days=2)
    kept = history(store)
    flood_inventory(store, 60_000)
    bound = used_bytes(store.engine) // 3  # less than the inventory changes' newest day alone
    said = trim(store.engine, bound, store._watermark(RES_5M), now=NOW)
    assert history(store) == kept
    assert said and all(s.startswith("inventory changes") for s in said)
    with store.engine.connect() as c:
        first = c.execute(select(func.min(entity_event.c.ts))).scalar_one()
        newest_day = c.execute(select(func.count()).select_from(entity_event)
                               .where(entity_event.c.ts >= NOW - DAY)).scalar_one()
    assert first >= NOW - DAY - 1 and newest_day >= 19_000
    note = last_trim(store.engine)
    assert note is not None and "cannot be met" in str(note["unmet"])


def test_old_inventory_changes_go_before_any_history_when_that_is_enough(tmp_path: Path) -> None:
    store = filled(tmp_path, days=2)
    kept = history(store)
    flood_inventory(store, 60_000, days=10)
    before = used_bytes(store.engine)
    said = trim(store.engine, int(before * 0.8), store._watermark(RES_5M), now=NOW)
    assert said and said[0].startswith("inventory changes") and used_bytes(store.engine) <= before * 0.8
    assert history(store) == kept
    assert "unmet" not in (last_trim(store.engine) or {})


def test_the_overview_says_when_max_size_cannot_be_met(tmp_path: Path) -> None:
    from tests.test_web import demo_app, fetch

    app = demo_app(tmp_path, 80)
    app.state.runtime.size_note = {"at": time.time() - 60, "max_bytes": 30 * 10**6, "dropped": "nothing", "steps": 0,
                                   "unmet": "the bound cannot be met without the newest day: 64 MB are not history"}
    page = fetch(app, "/").text
    assert "cannot be met without the newest day" in page and "the oldest data was given up" not in page


def test_raw_samples_the_5_minute_fold_has_not_taken_yet_are_never_trimmed(tmp_path: Path) -> None:
    """The fold stopped two days ago (a server that was busy, or stopped folding): those two days
    exist only as raw samples, so trimming them would lose them for good, not coarsen them. Under
    a bound they cannot all fit in, the raw samples since the fold's mark all stay."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    store = Store(make_engine(url), "nas")
    with store.engine.begin() as conn:
        for ts in range(NOW - 4 * DAY, NOW, 120):
            store.write_samples(conn, ts, [Sample.of("rackpulse_test_value", i, n=str(i)) for i in range(SERIES)])
    store.make_rollups(now=NOW - 2 * DAY)
    mark = store._watermark(RES_5M)
    assert NOW - 2 * DAY - 600 <= mark <= NOW - 2 * DAY

    def unfolded() -> int:
        with store.engine.connect() as c:
            return int(c.execute(select(func.count()).select_from(sample).where(sample.c.ts >= mark)).scalar_one())

    before = unfolded()
    said = trim(store.engine, int(used_bytes(store.engine) * 0.25), mark, now=NOW)
    assert said and said[0].startswith("raw samples")  # something older did go
    assert unfolded() == before  # and not one sample the fold had yet to take
