"""PostgreSQL keeps older rollups in per-series chunks (app/storage/chunks.py), and both databases
keep older raw samples in Gorilla blocks (app/storage/blocks.py): every reader sees the same points
on both, and a late write lands in its chunk, or its block's span, once."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from alembic import command
from sqlalchemy import text

from app.storage import blocks, gorilla
from app.storage.db import alembic_config, make_engine, upgrade
from app.storage.dbcopy import copy_database
from app.storage.store import DAY, RES_1H, RES_5M, Store
from collectors.base import CollectResult, Sample

pytestmark = pytest.mark.peers  # the real PostgreSQL server

T0 = 1_790_000_000 // 3600 * 3600
END = T0 + 16 * DAY  # long enough for a whole week's chunk of hourly rollups
METRIC = "rackpulse_disk_temperature_celsius"
KINDS = ("constant", "integer", "float")


def value(kind: str, ts: int) -> float:
    if kind == "constant":
        return 1.0
    if kind == "integer":
        return float(30 + (ts // 3600) % 7)
    return 20.0 + math.sin(ts / 5000)


def fill(url: str, step: int = 300) -> Store:
    """16 days of three series (one sample every ``step`` s), folded and (on PostgreSQL) chunked."""
    upgrade(url)
    store = Store(make_engine(url), "nas")
    with store.engine.begin() as conn:
        ids = store.series_ids(conn, [(METRIC, f'[["serial","{k}"]]') for k in KINDS])
    store.write_rows([(sid, ts, value(kind, ts)) for ts in range(T0, END, step)
                      for sid, kind in zip(ids, KINDS, strict=True)])
    store.make_rollups(now=END)
    return store


def charts(store: Store) -> dict[tuple[str, str], list[tuple[int, float, float, float]]]:
    """What the charts read, per series: raw hours, 5-minute days, hourly weeks, and the
    whole span at hourly resolution."""
    sids = {kind: store.find_series(METRIC, serial=kind) for kind in KINDS}
    ranges = {"raw": (T0 + 3600, T0 + 9 * 3600, 1500), "day": (T0 + DAY, T0 + 2 * DAY, 1500),
              "all-5m": (T0, END, 1500), "all-1h": (T0, END, 100), "late-day": (T0 + 5 * DAY, T0 + 6 * DAY, 1500)}
    return {(kind, name): [(p.ts, round(p.vmin, 9), round(p.vavg, 9), round(p.vmax, 9))
                           for p in store.history(sid, lo, hi, max_points)]
            for kind, sid in sids.items() if sid is not None for name, (lo, hi, max_points) in ranges.items()}


def count(store: Store, table: str) -> int:
    with store.engine.connect() as c:
        return int(c.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


def raw_count(store: Store) -> int:
    """Raw samples, rows and blocks alike (a block's header says how many it holds)."""
    with store.engine.connect() as c:
        packed = sum(gorilla.count(bytes(d)) for (d,) in c.execute(text("SELECT data FROM sample_block")))
    return count(store, "sample") + packed


def oldest_raw(store: Store) -> int:
    with store.engine.connect() as c:
        ids = [int(i) for (i,) in c.execute(text("SELECT id FROM series"))]
        found = [int(t) for (t,) in c.execute(text("SELECT min(ts) FROM sample")) if t is not None]
        found += [min(p) for p in blocks.read(c, ids, 0, 2**62).values() if p]
    return min(found)


@pytest.fixture
def both(pg_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    stores = (fill(f"sqlite:///{tmp_path / 'rows.db'}"), fill(pg_url))
    yield stores
    for s in stores:
        s.engine.dispose()


def test_postgresql_moves_old_points_into_chunks_and_charts_read_the_same_points_as_on_sqlite(both) -> None:
    sqlite_store, pg = both
    assert count(pg, "rollup_5m_chunk") > 0 and count(pg, "rollup_1h_chunk") > 0
    # raw samples below the hour before the hourly fold are blocks, on both databases
    blocked = (END - 3600) // 7200 * 7200
    for store in both:
        assert count(store, "sample_block") == 3 * (blocked - T0) // 7200
        with store.engine.connect() as c:
            assert c.execute(text("SELECT value FROM meta WHERE key = 'blocked_sample'")).scalar() == str(blocked)
            assert c.execute(text("SELECT count(*) FROM sample WHERE ts < :m"), {"m": blocked}).scalar() == 0
    # what stays rows is only what the next fold may still read: nothing below each tier's mark
    with pg.engine.connect() as c:
        marks = pg.chunk_marks(c)
        assert marks == {"chunked_rollup_5m": END // DAY * 288, "chunked_rollup_1h": END // 3600 // 168 * 168}
        assert c.execute(text("SELECT count(*) FROM rollup_5m WHERE bucket < :m"),
                         {"m": marks["chunked_rollup_5m"]}).scalar() == 0
        assert 0 < c.execute(text("SELECT count(*) FROM rollup_1h")).scalar_one() < 3 * 168
    assert raw_count(pg) == raw_count(sqlite_store) == 3 * 16 * 288
    assert count(pg, "rollup_5m_all") == count(sqlite_store, "rollup_5m")
    assert count(pg, "rollup_1h_all") == count(sqlite_store, "rollup_1h")
    got, want = charts(pg), charts(sqlite_store)
    assert len(want) == 15 and all(want[k] for k in want) and got == want


def test_a_late_sample_below_the_chunk_mark_is_folded_with_its_chunk_and_a_replayed_one_counts_once(both) -> None:
    """An agent's backlog reaches days back: the block of their two hours becomes rows again (the
    next compaction packs it), the 5-minute and hourly rollups of their time are worked out again
    from those and the new sample together, and the same batch sent twice changes nothing."""
    late = T0 + 5 * DAY + 3600 + 17  # inside a chunk of each tier on PostgreSQL
    run = CollectResult(samples=[Sample.of(METRIC, 99.0, serial="integer")])
    for store in both:
        store.write_run("smart", late, 0.1, True, None, run)
        store.write_run("smart", late, 0.1, True, None, run)  # replayed after a lost answer
    sqlite_store, pg = both
    assert raw_count(pg) == raw_count(sqlite_store) == 3 * 16 * 288 + 1
    sid = pg.find_series(METRIC, serial="integer")
    for store in both:
        span = late // 7200 * 7200
        with store.engine.connect() as c:  # the late sample's span is rows again, the others still blocks
            assert c.execute(text("SELECT count(*) FROM sample WHERE series_id = :s AND ts >= :a AND ts < :b"),
                             {"s": sid, "a": span, "b": span + 7200}).scalar_one() == 7200 // 300 + 1
        assert raw_count(store) == 3 * 16 * 288 + 1
        store.make_rollups(now=END + 2 * 7200)  # the mark's next move takes the rows below it along
        assert raw_count(store) == 3 * 16 * 288 + 1
        with store.engine.connect() as c:
            assert c.execute(text("SELECT count(*) FROM sample WHERE ts = :t"), {"t": late}).scalar_one() == 0
    with pg.engine.connect() as c:
        assert c.execute(text("SELECT n, vmax FROM rollup_5m_all WHERE series_id = :s AND bucket = :b"),
                         {"s": sid, "b": late // RES_5M}).one() == (2, 99.0)
        assert c.execute(text("SELECT count(*) FROM rollup_5m WHERE bucket = :b"), {"b": late // RES_5M}).scalar() == 0
        assert c.execute(text("SELECT n, vmax FROM rollup_1h_all WHERE series_id = :s AND bucket = :b"),
                         {"s": sid, "b": late // RES_1H}).one() == (13, 99.0)
    got, want = charts(pg), charts(sqlite_store)
    assert got == want and max(p[3] for p in got[("integer", "late-day")]) == 99.0


def test_pruning_drops_whole_chunks_past_retention_and_keeps_the_rest(both) -> None:
    _, pg = both
    before = charts(pg)
    pg.prune(raw_days=7, rollup_5m_days=10, rollup_1h_days=0, now=END)
    raw_cut = END - 7 * DAY
    oldest = oldest_raw(pg)
    with pg.engine.connect() as c:
        oldest5 = c.execute(text("SELECT min(bucket) FROM rollup_5m_all")).scalar_one() * RES_5M
    assert raw_cut - 7200 < oldest <= raw_cut  # at most one block's worth kept beyond the cut
    assert END - 10 * DAY - DAY < oldest5 <= END - 10 * DAY
    assert count(pg, "rollup_1h_all") == 3 * 16 * 24  # hourly rollups kept for good
    after = charts(pg)
    assert all(after[(kind, "all-1h")] == before[(kind, "all-1h")] for kind in KINDS)
    assert after[("integer", "late-day")] != before[("integer", "late-day")]  # hourly where 5-minute ones went


def test_copying_a_chunked_postgresql_database_to_sqlite_brings_every_point(both, tmp_path: Path) -> None:
    sqlite_store, pg = both
    url = f"sqlite:///{tmp_path / 'copy.db'}"
    counts = copy_database(pg.engine.url.render_as_string(hide_password=False), url)
    assert counts["sample_block"] == count(pg, "sample_block") > 0
    assert counts["rollup_1h"] == count(sqlite_store, "rollup_1h")
    copy = Store(make_engine(url), "nas")
    assert raw_count(copy) == 3 * 16 * 288
    assert charts(copy) == charts(sqlite_store)
    copy.engine.dispose()


def test_remote_write_reads_a_backlog_that_reaches_into_the_chunks(both) -> None:
    from app.export.remote_write import RemoteWrite

    sqlite_store, pg = both
    start, end = T0 + 2 * DAY, T0 + 2 * DAY + 4 * 3600
    windows = [RemoteWrite(SimpleNamespace(url="http://127.0.0.1:9/w"), s.engine).read_window([1, 2, 3], start, end)
               for s in both]
    assert windows[0] == windows[1] and [len(w) for w in windows[1].values()] == [4 * 12] * 3
    assert windows[1][1][0][0] == (start + 300) * 1000  # start < ts <= end


def test_going_back_to_revision_0010_turns_the_chunks_into_rows(pg_url: str) -> None:
    pg = fill(pg_url, step=900)
    total = raw_count(pg)
    pg.engine.dispose()
    command.downgrade(alembic_config(pg_url), "0010")
    engine = make_engine(pg_url)
    with engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM sample")).scalar_one() == total == 3 * 16 * 96
        assert "sample_chunk" not in {r[0] for r in c.execute(text("SELECT tablename FROM pg_tables"))}
    engine.dispose()


def test_upgrading_from_0012_moves_the_raw_chunks_into_rows_then_blocks_and_loses_no_sample(pg_url: str) -> None:
    """A server of last week: its raw samples partly in 0011's chunk arrays. 0013 gives them back to
    rows; the next compaction packs them into blocks; going back to 0012 unpacks every block."""
    pg = fill(pg_url, step=900)
    total = raw_count(pg)
    want = charts(pg)
    pg.engine.dispose()
    command.downgrade(alembic_config(pg_url), "0012")  # blocks -> rows, the chunk table and view back
    engine = make_engine(pg_url)
    with engine.begin() as c:
        assert c.execute(text("SELECT count(*) FROM sample")).scalar_one() == total
        c.execute(text("INSERT INTO sample_chunk (series_id, chunk, k, value) SELECT series_id, ts / 7200, "
                       "array_agg((ts % 7200)::smallint ORDER BY ts), array_agg(value ORDER BY ts) FROM sample "
                       "WHERE ts < :m GROUP BY series_id, ts / 7200"), {"m": T0 + 3 * DAY})
        c.execute(text("DELETE FROM sample WHERE ts < :m"), {"m": T0 + 3 * DAY})
        assert c.execute(text("SELECT count(*) FROM sample_all")).scalar_one() == total
    engine.dispose()
    upgrade(pg_url)
    store = Store(make_engine(pg_url), "nas")
    assert raw_count(store) == count(store, "sample") == total  # every chunk's point a row again
    store.make_rollups(now=END + 7200)
    assert raw_count(store) == total and count(store, "sample_block") > 0
    assert charts(store) == want
    store.engine.dispose()
