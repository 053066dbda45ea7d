"""Rollups and retention: raw samples folded into 5-minute and hourly rows (the fold SQL written once), late writes refolded, old rows pruned."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, Table, bindparam, delete, func, select

from app.storage import blocks, chunks
from app.storage.base import (
    _WATERMARKS,
    DAY,
    FOLD_SERIES,
    RES_1H,
    RES_5M,
    ROLLUPS,
    Late,
    StoreBase,
    labels_key,
)
from app.storage.grouped_cache import grouped_cache
from app.storage.models import (
    collector_run,
    meta,
    rollup_1h,
    rollup_5m,
    sample,
    series,
)
from collectors.base import Labels

# A collector run's row (its duration and error) is read for the last day or so; a row a run would
# be about 6.7 M rows in 90 days of the demo's 26 collectors, so runs keep a week whatever
# storage.raw_days says (it may be shorter).
RUNS_DAYS = 7.0

# Built once: pages read the watermarks on every chart (see CLAIM in app/ingest/records.py for why).
_META_VALUE = select(meta.c.value).where(meta.c.key == bindparam("k"))


def _insert_new(conn: Connection, table: Table, rows: Sequence[dict[str, object]]) -> None:
    """Rows whose key is not in the table yet, as the driver's own executemany (the same columns
    in every row). Through SQLAlchemy's insert each row's parameters were worked out
    one by one: 10 of the 13 CPU-s a demo spent writing its 1.36 million rows of past."""
    if not rows:
        return
    quote = conn.dialect.identifier_preparer
    cols = [c for c in rows[0] if c in table.c]  # a name from the table, never one made up by a row
    # Named parameters, so the rows go as they are: sqlite3 takes :name, psycopg %(name)s.
    marks = [f":{c}" if conn.dialect.paramstyle in ("qmark", "named") else f"%({c})s" for c in cols]
    sql = (f"INSERT INTO {quote.format_table(table)} ({', '.join(quote.quote(c) for c in cols)}) "
           f"VALUES ({', '.join(marks)}) ON CONFLICT DO NOTHING")
    conn.exec_driver_sql(sql, list(rows))


class Rollups(StoreBase):
    def _watermark(self, res: int) -> int:
        with self.engine.connect() as conn:
            return self._watermark_in(conn, res)

    def _watermark_in(self, conn, res: int) -> int:
        v = conn.execute(_META_VALUE, {"k": f"rollup_{res}"}).scalar()
        return int(v) if v else 0

    def import_rollups(self, rows: Mapping[int, Sequence[dict[str, object]]], folded_up_to: Mapping[int, int]) -> None:
        """Rollup rows made elsewhere (the demo's past month and year), per resolution, kept
        as they are where a bucket already exists; then each resolution counts as folded up to
        the time given, so reads take those rows and the fold does not redo them."""
        with self.lock.shared(), self.engine.begin() as conn:
            for res, batch in rows.items():
                for i in range(0, len(batch), 20_000):
                    _insert_new(conn, ROLLUPS[res], batch[i:i + 20_000])
            for res, value in folded_up_to.items():
                self._set_watermark(conn, res, value)
        if rows:
            grouped_cache(self.engine).changed()

    def mark_folded(self, folded_up_to: Mapping[int, int]) -> None:
        """Rollups of each resolution count as complete up to the time given (a benchmark that
        wrote its own year of rows)."""
        self.import_rollups({}, folded_up_to)

    def _set_watermark(self, conn, res: int, value: int) -> None:
        stmt = self._insert(meta).values(key=f"rollup_{res}", value=str(value))
        conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"value": str(value)}))

    def _meta_int(self, key: str) -> int:
        with self.engine.connect() as conn:
            v = conn.execute(select(meta.c.value).where(meta.c.key == key)).scalar()
        return int(v) if v else 0

    def _set_meta(self, conn, key: str, value: int) -> None:
        stmt = self._insert(meta).values(key=key, value=str(value))
        conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"value": str(value)}))

    def make_rollups(self, now: float | None = None) -> int:
        """Fold finished 5-minute buckets of raw samples, then finished hours of 5-minute rollups.

        Two marks per resolution: ``claim_<res>`` (samples below it that arrive later fold
        themselves in, see refold_late) and ``rollup_<res>`` (rollups are complete below it;
        charts and pruning go by it). The claim moves under the exclusive lock, which only
        waits for the writes in flight; the fold itself runs after, in small transactions,
        so ingest never waits for a fold of many buckets. A fold cut short by a crash is
        finished by the next call (each chunk is idempotent).
        """
        now = int(now if now is not None else time.time())
        made = 0
        done5 = self._watermark(RES_5M) or self._start(RES_5M, now)
        if done5 == 0:
            return 0  # no samples yet
        target5 = self._claim(RES_5M, max(done5, self._meta_int(f"claim_{RES_5M}")), (now // RES_5M) * RES_5M)
        made += self._fold(RES_5M, done5, target5)
        done1h = self._watermark(RES_1H) or self._start(RES_1H, now)
        if done1h:
            target1h = self._claim(RES_1H, max(done1h, self._meta_int(f"claim_{RES_1H}")),
                                   (self._watermark(RES_5M) // RES_1H) * RES_1H)
            made += self._fold(RES_1H, done1h, target1h)
        self.compact()
        return made

    def _start(self, res: int, now: int) -> int:
        """The first fold: where it starts (the oldest data) and its first claim are set together,
        under the lock, so that a sample older than the start arriving later folds itself in."""
        with self.lock.exclusive(), self.engine.begin() as conn:
            if res == RES_5M:
                first = conn.execute(select(func.min(sample.c.ts))).scalar()
                start = int(first) if first is not None else None
            else:
                # 5-minute rows can predate every raw sample: an agent's compacted backlog.
                first5 = conn.execute(select(func.min(rollup_5m.c.bucket))).scalar()
                start = int(first5) * RES_5M if first5 is not None else None
            if start is None:
                return 0
            start = start // res * res
            end = max(start, (now // res) * res if res == RES_5M else start)
            self._set_watermark(conn, res, start)
            self._set_meta(conn, f"claim_{res}", end)
        return start

    def _claim(self, res: int, claimed: int, end: int) -> int:
        if end > claimed:
            with self.lock.exclusive(), self.engine.begin() as conn:
                self._set_meta(conn, f"claim_{res}", end)
            return end
        return claimed

    def _fold(self, res: int, lo: int, hi: int) -> int:
        """Fold [lo, hi) into ``res`` rollups: a few buckets and 500 series per transaction."""
        if hi <= lo:
            return 0
        with self.engine.connect() as conn:
            max_id = int(conn.execute(select(func.max(series.c.id))).scalar() or 0)
        per_bucket = RES_5M if res == RES_5M else RES_1H
        span = per_bucket * max(1, (5000 if res == RES_5M else 60000) // max(max_id, 1))
        sql = self._fold_raw_sql(chunked=True) if res == RES_5M else self._fold_5m_sql(chunked=True)
        made = 0
        t = lo
        while t < hi:
            t2 = min(hi, t + span)
            bounds = (t, t2) if res == RES_5M else (t // RES_5M, t2 // RES_5M)
            step = blocks.PACK_SERIES if sql is None else FOLD_SERIES
            for first_id in range(0, max_id + 1, step):
                with self.engine.begin() as conn:
                    made += conn.exec_driver_sql(sql, (*bounds, first_id, first_id + FOLD_SERIES)).rowcount or 0
            with self.engine.begin() as conn:
                self._set_watermark(conn, res, t2)
            t = t2
        return made

    def forget(self) -> None:
        """Drop the caches of series ids and entities (after a rolled-back transaction)."""
        self._ids.clear()
        self._sample_ids.clear()
        self._entities = None
        self._series_count = None

    def chunk_marks(self, conn) -> dict[str, int]:
        """PostgreSQL: below these (meta ``chunked_<table>``, in the table's keys) points live in chunks."""
        keys = [t.mark_key for t in chunks.TIERS]
        return {k: int(v) for k, v in conn.execute(select(meta.c.key, meta.c.value).where(meta.c.key.in_(keys)))}

    def compact(self) -> int:
        """Move raw samples below their mark into Gorilla blocks (app/storage/blocks.py, both
        databases), then on PostgreSQL each rollup tier's points below its mark into chunks
        (app/storage/chunks.py); returns the blocks and chunks written. A mark moves under the
        exclusive lock, like a claim: a writer sees the old one (its rows are committed before the
        move starts, and moved with the rest) or the new one (below it, it unpacks or merges
        itself: refold_late)."""
        with self.engine.connect() as conn:
            marks = self.chunk_marks(conn) if self.dialect == "postgresql" else {}
            marks[blocks.MARK_KEY] = int(conn.execute(_META_VALUE, {"k": blocks.MARK_KEY}).scalar() or 0)
            max_id = int(conn.execute(select(func.max(series.c.id))).scalar() or 0)
        wm1h = self._watermark(RES_1H)
        # (mark, where it may go, the move: None for the blocks, else a chunk tier's SQL)
        moves: list[tuple[str, int, str | None]] = [
            (blocks.MARK_KEY, blocks.target(self._watermark(RES_5M), wm1h), None)]
        if self.dialect == "postgresql":
            moves += [(tier.mark_key, target, chunks.move_sql(tier, restricted=False))
                      for tier, target in chunks.targets(wm1h).items()]
        written = 0
        for key, target, sql in moves:
            if target <= marks.get(key, 0):
                continue
            with self.lock.exclusive(), self.engine.begin() as conn:
                self._set_meta(conn, key, target)
            step = blocks.PACK_SERIES if sql is None else FOLD_SERIES
            for first_id in range(0, max_id + 1, step):
                # Alone, as the mark: a writer's transaction merging late rows into the same chunks
                # took the rows in the other order, and PostgreSQL ended one of the two as a
                # deadlock (CI, test_samples_written_while_rollups_are_made...). One batch at a time
                # keeps the writers' pause to one batch's move.
                with self.lock.exclusive(), self.engine.begin() as conn:
                    if sql is None:
                        written += blocks.pack(conn, first_id, first_id + step, target)
                    else:
                        written += conn.exec_driver_sql(sql, (first_id, first_id + FOLD_SERIES, target)).rowcount or 0
        return written

    def _absorb(self, conn, tier: chunks.Tier, ids: Sequence[int], lo: int, hi: int,
                marks: dict[str, int] | None = None) -> None:
        """PostgreSQL: this transaction's rows of ``ids`` in [lo, hi) below the tier's mark join their chunks."""
        if self.dialect == "postgresql":
            chunks.absorb(conn, marks if marks is not None else self.chunk_marks(conn), tier, ids, lo, hi)

    def _source(self, tier: chunks.Tier, lo: int, hi: int) -> str:
        """What a refold reads a tier's points from: the table, or on PostgreSQL its rows and
        the chunks that can hold [lo, hi)."""
        if self.dialect != "postgresql":
            return tier.table
        return (f"(SELECT * FROM {tier.view} WHERE chunk >= {int(lo) // tier.span} "
                f"AND chunk <= {(int(hi) - 1) // tier.span}) AS src")

    def watermarks(self, conn) -> tuple[int, int]:
        """Below these (5-minute, hourly), a sample arriving now must fold itself into the rollups:
        the claims of make_rollups (or, on a database that has none, how far it has folded)."""
        got = {k: int(v) for k, v in conn.execute(_WATERMARKS)}
        return (max(got.get(f"rollup_{RES_5M}", 0), got.get(f"claim_{RES_5M}", 0)),
                max(got.get(f"rollup_{RES_1H}", 0), got.get(f"claim_{RES_1H}", 0)))

    def refold(self, conn, late: Late) -> None:
        if late.span is not None:
            self.refold_late(conn, late.ids, *late.span)

    def refold_late(self, conn, series_ids: set[int], since: int, until: int | None = None) -> None:
        """Samples from ``since`` to ``until`` arrived below the rollup claim (an agent's backlog,
        a run that outlasted a fold): recompute the buckets they fall in, for their series only.
        Call inside the writing transaction, holding ``lock.shared()``."""
        wm5, wm1h = self.watermarks(conn)
        if not series_ids or since >= wm5:
            return
        ids = sorted(series_ids)
        # Folded hours change: charts kept from before are not read again. (Said before the
        # commit; a chart read in between is kept at most grouped_cache.TTL.)
        grouped_cache(self.engine).changed()
        ph = "?" if self.dialect == "sqlite" else "%s"
        marks = ",".join([ph] * len(ids))
        lo5 = since // RES_5M * RES_5M
        hi5 = min(wm5, (until // RES_5M + 1) * RES_5M) if until is not None else wm5
        cmarks = self.chunk_marks(conn) if self.dialect == "postgresql" else {}
        # the blocks of the late samples' spans back into rows first: the refold reads rows
        blocks.unpack(conn, ids, lo5, hi5)
        conn.exec_driver_sql(
            "INSERT INTO rollup_5m (series_id, bucket, vmin, vavg, vmax, n) "
            f"SELECT series_id, ts / {RES_5M}, min(value), avg(value), max(value), count(*) "
            "FROM sample "
            f"WHERE series_id IN ({marks}) AND ts >= {ph} AND ts < {ph} GROUP BY series_id, ts / {RES_5M} "
            "ON CONFLICT (series_id, bucket) DO UPDATE SET vmin = excluded.vmin, vavg = excluded.vavg, "
            "vmax = excluded.vmax, n = excluded.n", (*ids, lo5, hi5))
        self._absorb(conn, chunks.FIVE, ids, lo5 // RES_5M, hi5 // RES_5M, cmarks)
        self.refold_hours(conn, ids, lo5 // RES_5M, (hi5 - 1) // RES_5M, wm1h, cmarks)

    def refold_hours(self, conn, ids: Sequence[int], first_bucket5: int, last_bucket5: int,
                     wm1h: int | None = None, cmarks: dict[str, int] | None = None) -> None:
        """Recompute the hours holding 5-minute buckets first..last (inclusive), below the hourly claim."""
        if wm1h is None:
            wm1h = self.watermarks(conn)[1]
        k = RES_1H // RES_5M
        lo = first_bucket5 // k * k
        hi = min(wm1h // RES_5M, (last_bucket5 // k + 1) * k)
        if not ids or lo >= hi:
            return
        ph = "?" if self.dialect == "sqlite" else "%s"
        marks = ",".join([ph] * len(ids))
        conn.exec_driver_sql(
            "INSERT INTO rollup_1h (series_id, bucket, vmin, vavg, vmax, n) "
            f"SELECT series_id, bucket / {k}, min(vmin), sum(vavg * n) / sum(n), max(vmax), sum(n) "
            f"FROM {self._source(chunks.FIVE, lo, hi)} "
            f"WHERE series_id IN ({marks}) AND bucket >= {ph} AND bucket < {ph} GROUP BY series_id, bucket / {k} "
            "ON CONFLICT (series_id, bucket) DO UPDATE SET vmin = excluded.vmin, vavg = excluded.vavg, "
            "vmax = excluded.vmax, n = excluded.n", (*ids, lo, hi))
        self._absorb(conn, chunks.HOURS, ids, lo // k, hi // k, cmarks)

    def write_rollup_points(self, conn, res: int,
                            points: Sequence[tuple[str, Labels, Sequence[tuple[int, float, float, float, int]]]]) -> int:
        """Rollups an agent made of its backlog when its outbox ran short of room. Each record
        is applied once (the batch sequence sees to that), so parts of one bucket add up.
        Returns the rows offered."""
        table = ROLLUPS[res]
        ids = self.series_ids(conn, ((m, labels_key(lab)) for m, lab, _ in points))
        rows = [{"series_id": sid, "bucket": b, "vmin": mn, "vavg": av, "vmax": mx, "n": n}
                for sid, (_, _, pts) in zip(ids, points, strict=True) for b, mn, av, mx, n in pts]
        if rows:
            grouped_cache(self.engine).changed()  # rewrites folded buckets (see refold_late)
            # A bucket can arrive in two parts (an hour split between two compactions): merge them.
            ins = self._insert(table)
            least, greatest = (func.min, func.max) if self.dialect == "sqlite" else (func.least, func.greatest)
            ex = ins.excluded
            conn.execute(ins.on_conflict_do_update(index_elements=["series_id", "bucket"], set_={
                "vmin": least(table.c.vmin, ex.vmin), "vmax": greatest(table.c.vmax, ex.vmax),
                "vavg": (table.c.vavg * table.c.n + ex.vavg * ex.n) / (table.c.n + ex.n), "n": table.c.n + ex.n,
            }), rows)
            # Below the chunk mark the row replaces its bucket in the chunk (a bucket split between
            # two compactions of an agent's backlog that old keeps its newer part only).
            first, last = int(min(r["bucket"] for r in rows)), int(max(r["bucket"] for r in rows))
            self._absorb(conn, chunks.FIVE if res == RES_5M else chunks.HOURS, sorted(set(ids)), first, last + 1)
            if res == RES_5M:
                self.refold_hours(conn, sorted(set(ids)), first, last)
        return len(rows)

    def _fold_raw_sql(self, chunked: bool = False) -> str:
        ph = "?" if self.dialect == "sqlite" else "%s"
        ids = f" AND series_id >= {ph} AND series_id < {ph}" if chunked else ""
        return (
            "INSERT INTO rollup_5m (series_id, bucket, vmin, vavg, vmax, n) "
            f"SELECT series_id, ts / {RES_5M}, min(value), avg(value), max(value), count(*) "
            f"FROM sample WHERE ts >= {ph} AND ts < {ph}{ids} GROUP BY series_id, ts / {RES_5M} ON CONFLICT DO NOTHING"
        )

    def _fold_5m_sql(self, chunked: bool = False) -> str:
        ph = "?" if self.dialect == "sqlite" else "%s"
        ids = f" AND series_id >= {ph} AND series_id < {ph}" if chunked else ""
        k = RES_1H // RES_5M
        return (
            "INSERT INTO rollup_1h (series_id, bucket, vmin, vavg, vmax, n) "
            f"SELECT series_id, bucket / {k}, min(vmin), sum(vavg * n) / sum(n), max(vmax), sum(n) "
            f"FROM rollup_5m WHERE bucket >= {ph} AND bucket < {ph}{ids} "
            f"GROUP BY series_id, bucket / {k} ON CONFLICT DO NOTHING"
        )

    def prune(self, raw_days: float, rollup_5m_days: float, rollup_1h_days: float, now: float | None = None) -> int:
        """Delete what retention no longer keeps. Raw samples go only once they are rolled up."""
        now = now if now is not None else time.time()
        wm = self._watermark(RES_5M)
        raw_cut = min(int(now - raw_days * DAY), wm)
        n = 0
        with self.engine.begin() as conn:
            n += conn.execute(delete(sample).where(sample.c.ts < raw_cut)).rowcount or 0
            n += blocks.prune(conn, raw_cut)
            n += conn.execute(delete(rollup_5m).where(
                rollup_5m.c.bucket < int(now - rollup_5m_days * DAY) // RES_5M)).rowcount or 0
            if rollup_1h_days > 0:
                n += conn.execute(delete(rollup_1h).where(
                    rollup_1h.c.bucket < int(now - rollup_1h_days * DAY) // RES_1H)).rowcount or 0
            if self.dialect == "postgresql":  # whole chunks below each cut
                cuts = {chunks.FIVE: int(now - rollup_5m_days * DAY) // RES_5M}
                if rollup_1h_days > 0:
                    cuts[chunks.HOURS] = int(now - rollup_1h_days * DAY) // RES_1H
                for tier, cut in cuts.items():
                    table = chunks.CHUNKS[tier.table]
                    n += conn.execute(delete(table).where(table.c.chunk < cut // tier.span)).rowcount or 0
            runs_cut = now - min(raw_days, RUNS_DAYS) * DAY
            n += conn.execute(delete(collector_run).where(collector_run.c.started < runs_cut)).rowcount or 0
        grouped_cache(self.engine).changed()  # after the commit: a chart read from now on has lost them too
        return n
