"""Raw samples in Gorilla blocks (app/storage/blocks.py), on SQLite and the real PostgreSQL: what
goes in comes back bit for bit through the history API, a row wins over a block's sample for the
same second, a late write turns its span back into rows, and the rows stay where SQL reads them."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import func, select

from app.storage import blocks
from app.storage.db import make_engine, upgrade
from app.storage.models import rollup_5m, sample, sample_block
from app.storage.store import Store
from collectors.base import CollectResult, Sample

T0 = 1_790_000_000 // 7200 * 7200
STEP = 30


@pytest.fixture
def store(db_url: str):  # type: ignore[no-untyped-def]
    upgrade(db_url)
    engine = make_engine(db_url)
    yield Store(engine, "nas")
    engine.dispose()


def one_series(store: Store) -> int:
    with store.engine.begin() as conn:
        return store.series_ids(conn, [("rackpulse_x", "[]")])[0]


def tables(store: Store) -> tuple[int, int]:
    with store.engine.connect() as c:
        return (int(c.execute(select(func.count()).select_from(sample)).scalar_one()),
                int(c.execute(select(func.count()).select_from(sample_block)).scalar_one()))


@pytest.mark.parametrize("wm5, wm1h, mark", [
    (T0 + 7 * 3600, T0 + 7 * 3600, T0 + 6 * 3600),  # the hour before the hourly fold, to a whole span
    (T0 + 3 * 3600, T0 + 9 * 3600, T0 + 2 * 3600),  # the 5-minute fold behind: its mark
    (0, 0, 0),  # nothing folded yet: nothing packed
], ids=["hourly fold", "5-minute fold behind", "nothing folded"])
def test_blocks_reach_only_below_what_sql_still_reads_as_rows(wm5: int, wm1h: int, mark: int) -> None:
    assert blocks.target(wm5, wm1h) == mark


def test_samples_packed_into_blocks_come_back_through_the_history_bit_for_bit(store: Store) -> None:
    sid = one_series(store)
    values = [math.sin(i / 7) * 40 for i in range(8 * 3600 // STEP)] + [-0.0, 5e-324]
    times = [T0 + STEP * i for i in range(len(values))]
    store.write_rows(list(zip([sid] * len(times), times, values, strict=True)))
    before = store.history(sid, T0, T0 + 3 * 3600)
    store.make_rollups(now=times[-1] + 1)
    rows, packed = tables(store)
    assert packed == 3 and rows == len(times) - 3 * 240  # 6 of 8 hours below the mark: three spans
    after = store.history(sid, T0, T0 + 3 * 3600)
    assert [(p.ts, p.vavg) for p in after] == [(p.ts, p.vavg) for p in before] and len(after) == 360
    # a range across the mark reads both, in order, once each
    across = store.history(sid, T0 + 5 * 3600, T0 + 7 * 3600)
    assert [p.ts for p in across] == list(range(T0 + 5 * 3600, T0 + 7 * 3600, STEP))


def test_a_row_below_the_mark_wins_over_the_blocks_sample_for_the_same_second(store: Store) -> None:
    """As another server's late write that commits just after a mark moved: it stays a row until
    the next pack, and readers take it over the block's older value."""
    sid = one_series(store)
    store.write_rows([(sid, T0 + STEP * i, 1.0) for i in range(240)])
    with store.engine.begin() as conn:
        assert blocks.pack(conn, 0, 10, T0 + 7200) == 1
        conn.execute(sample.insert().values(series_id=sid, ts=T0 + 60, value=7.0))
    got = store.history(sid, T0, T0 + 7200)
    assert len(got) == 240 and got[2].vavg == 7.0 and got[1].vavg == 1.0
    with store.engine.begin() as conn:  # the next pack merges it into the block, the row's value kept
        assert blocks.pack(conn, 0, 10, T0 + 7200) == 1
    assert tables(store) == (0, 1)
    assert [p.vavg for p in store.history(sid, T0, T0 + 7200)][:3] == [1.0, 1.0, 7.0]


def test_a_late_sample_below_the_mark_unpacks_its_span_and_is_folded_with_it(store: Store) -> None:
    sid = one_series(store)
    store.write_rows([(sid, T0 + STEP * i, 10.0) for i in range(4 * 3600 // STEP)])
    store.make_rollups(now=T0 + 4 * 3600)
    assert tables(store)[1] == 1  # the first span
    store.write_run("x", T0 + 600 + 7, 0.1, True, None, CollectResult(samples=[Sample.of("rackpulse_x", 40.0)]))
    assert tables(store) == (4 * 3600 // STEP + 1, 0)  # that span is rows again
    with store.engine.connect() as c:
        n, vavg, vmax = c.execute(select(rollup_5m.c.n, rollup_5m.c.vavg, rollup_5m.c.vmax).where(
            rollup_5m.c.series_id == sid, rollup_5m.c.bucket == (T0 + 600) // 300)).one()
    assert (n, vmax) == (11, 40.0) and vavg == pytest.approx((10 * 10 + 40) / 11)


def test_pruning_drops_whole_blocks_before_the_cut_and_keeps_the_one_across_it(store: Store) -> None:
    sid = one_series(store)
    with store.engine.begin() as conn:
        for span in range(3):
            conn.execute(sample.insert(), [{"series_id": sid, "ts": T0 + span * 7200 + STEP * i, "value": 1.0}
                                           for i in range(240)])
        assert blocks.pack(conn, 0, 10, T0 + 3 * 7200) == 3
        assert blocks.prune(conn, T0 + 7200 + 3600) == 1
    assert tables(store) == (0, 2)
    assert len(store.history(sid, T0, T0 + 3 * 7200)) == 480
