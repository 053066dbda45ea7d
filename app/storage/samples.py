"""Writing: series, samples and collector runs in one transaction each; reading a series back."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence

from sqlalchemy import bindparam, delete, func, select

from app.storage import blocks, chunks
from app.storage.base import (
    _RUN_INSERT,
    RES_1H,
    RES_5M,
    ROLLUPS,
    Late,
    Point,
    _pg_array,
    labels_key,
)
from app.storage.chunks import in_chunks, readable
from app.storage.grouped_cache import TTL, grouped_cache
from app.storage.inventory import Inventory
from app.storage.models import (
    collector_state,
    sample,
    series,
)
from app.storage.rollups import Rollups
from collectors.base import CollectResult, Sample
from collectors.state import dump

_HOUR = (sample.c.ts // RES_1H).label("h")
# several series' raw samples by the hour, in one statement built once (SQLAlchemy caches its SQL)
_RAW_HOURS = (select(sample.c.series_id, _HOUR, func.min(sample.c.value), func.avg(sample.c.value),
                     func.max(sample.c.value))
              .where(sample.c.series_id.in_(bindparam("ids", expanding=True)), sample.c.ts >= bindparam("a"),
                     sample.c.ts < bindparam("b"))
              .group_by(sample.c.series_id, _HOUR).order_by(sample.c.series_id, _HOUR))
_SERIES_OF = select(series.c.id, series.c.labels).where(series.c.host == bindparam("h"), series.c.metric == bindparam("m"))

# PostgreSQL: from this many rows on, samples go in by COPY (the fastest way in; INSERT ... ON
# CONFLICT DO NOTHING ran at 77 % of it in bench/ingest.py), the insert being the fallback.
COPY_FROM = 64


def copy_rows(conn, rows: Sequence[tuple[int, int, float]]) -> bool:
    """COPY (series_id, ts, value) rows into sample inside a savepoint; False, with nothing
    written, when one of them is already stored (an agent's batch sent twice: the caller's
    ON CONFLICT insert then keeps the rest) or the driver is not psycopg 3."""
    raw = conn.connection.driver_connection
    if type(raw).__module__.split(".")[0] != "psycopg":
        return False
    from psycopg.errors import UniqueViolation

    savepoint = conn.begin_nested()
    try:
        with raw.cursor() as cur, cur.copy("COPY sample (series_id, ts, value) FROM STDIN") as cp:
            for row in rows:
                cp.write_row(row)
    except UniqueViolation:
        savepoint.rollback()
        return False
    savepoint.commit()
    return True


def per_second(points: Sequence[Point]) -> list[Point]:
    """A counter's points as its rate between each point and the one before; where it went back
    (a reboot, a restarted guest, a driver reloaded) no rate rather than a negative one."""
    out = []
    for a, b in zip(points, points[1:], strict=False):
        dt = b.ts - a.ts
        if dt <= 0 or b.vavg < a.vavg:
            continue
        v = (b.vavg - a.vavg) / dt
        out.append(Point(b.ts, v, v, v))
    return out


def thin(points: list[Point], max_points: int) -> list[Point]:
    """At most max_points: each run of k neighbours (k as small as fits) becomes one point at the
    first one's time with their lowest minimum, mean average and highest maximum, so a spike in
    a month of 5-minute rollups still shows at its height on a chart of 1,440 points."""
    if len(points) <= max_points or max_points < 1:
        return points
    k = -(-len(points) // max_points)
    out = []
    for i in range(0, len(points), k):
        group = points[i:i + k]
        out.append(Point(group[0].ts, min(p.vmin for p in group), sum(p.vavg for p in group) / len(group),
                         max(p.vmax for p in group)))
    return out


def resolution(span: float, max_points: int = 1500) -> int:
    """The step a chart of `span` seconds reads: 0 for raw samples (at a 30 s interval they fit
    in max_points), else 5-minute rollups while they are at most twice max_points (thinned to
    it), then hourly ones. Reading rows is what a chart costs: a month of 5-minute rollups is
    8,640 of them (20 ms a chart, measured with bench/page_cpu.py), its hourly ones 720 (3 ms),
    with the same highest and lowest values."""
    span = max(span, 1)
    if span / 30 <= max_points:
        return 0
    return RES_5M if span / RES_5M <= max_points * 2 else RES_1H


class SampleWriting(Rollups, Inventory):
    """Writing a run (samples, its record, its state, its entities) in one transaction, refolding
    what arrived late; reading a series back at the resolution a chart needs."""

    def write_samples(self, conn, ts: int, samples: Sequence[Sample],
                      skip: frozenset[str] = frozenset()) -> list[int]:
        """Store one timestamp's samples (the non-finite and those in ``skip`` left out); returns
        the series ids stored."""
        keep = [s for s in samples if s.metric not in skip and math.isfinite(s.value)]
        ids = self._sample_series_ids(conn, keep)
        if ids and self.dialect == "postgresql":
            if len(ids) < COPY_FROM or not copy_rows(conn, [(sid, ts, s.value) for sid, s in zip(ids, keep, strict=True)]):
                conn.exec_driver_sql(self._unnest_one_ts_sql,
                                     (ts, _pg_array(ids), _pg_array([s.value for s in keep], float)))
        elif ids:
            conn.exec_driver_sql(self._insert_sql, [(sid, ts, s.value) for sid, s in zip(ids, keep, strict=True)])
        return ids

    def _sample_series_ids(self, conn, samples: Sequence[Sample]) -> list[int]:
        """series_ids for samples, looked up by (metric, labels tuple) first: no JSON key per sample."""
        cache = self._sample_ids
        ids = [cache.get((s.metric, s.labels)) for s in samples]
        missing = [i for i, sid in enumerate(ids) if sid is None]
        if missing:
            # Not through labels_key's cache: a label set seen once is looked up by _sample_ids from
            # now on, and a refused batch of invented ones would otherwise stay in it.
            key = labels_key.__wrapped__
            new = self.series_ids(conn, ((samples[i].metric, key(samples[i].labels)) for i in missing))
            for i, sid in zip(missing, new, strict=True):
                cache[(samples[i].metric, samples[i].labels)] = ids[i] = sid
        return ids  # type: ignore[return-value]  # every None was filled in above

    def _insert_rows(self, conn, rows: Sequence[tuple[int, int, float]]) -> None:
        if not rows:
            return
        if self.dialect == "postgresql":
            if len(rows) >= COPY_FROM and copy_rows(conn, rows):
                return
            sids, tss, vals = zip(*rows, strict=True)
            conn.exec_driver_sql(self._unnest_sql, (_pg_array(sids), _pg_array(tss), _pg_array(vals, float)))
        else:
            conn.exec_driver_sql(self._insert_sql, list(rows))

    def write_rows(self, rows: Sequence[tuple[int, int, float]]) -> None:
        """Bulk insert of (series_id, ts, value) rows in one transaction (ingest path, bench)."""
        with self.lock.shared(), self.engine.begin() as conn:
            self._insert_rows(conn, rows)

    # -- one collector run --------------------------------------------------------------

    def write_run(
        self,
        collector: str,
        started: float,
        duration: float,
        ok: bool,
        error: str | None,
        result: CollectResult | None,
        skip: frozenset[str] = frozenset(),
    ) -> None:
        """Store one run atomically: its row, samples (except metrics in ``skip``), state and inventory."""
        with self.lock.shared(), self.engine.begin() as conn:
            self.write_run_in(conn, collector, started, duration, ok, error, result, skip)

    def write_run_in(self, conn, collector: str, started: float, duration: float, ok: bool,
                     error: str | None, result: CollectResult | None, skip: frozenset[str] = frozenset(),
                     late: Late | None = None) -> int:
        """write_run inside the caller's transaction (agent ingest: many runs, one commit). Returns samples stored.
        Samples below the rollup claim (a run that outlasted a fold, an agent's backlog) are folded into
        the rollups made for their time: at once, or via ``late`` when the caller refolds a whole batch."""
        ts = int(started)
        conn.execute(_RUN_INSERT, {"host": self.host, "collector": collector, "started": started,
                                   "duration": duration, "ok": ok, "error": error[:2000] if error else None})
        if result is None:
            return 0
        ids = self.write_samples(conn, ts, result.samples, skip)
        mine = late is None
        if ids:
            late = late or Late(self.watermarks(conn)[0])
            if ts < late.claim:
                late.add(ids, ts)
            if mine:
                self.refold(conn, late)
        if result.state is not None:
            conn.execute(self._state_upsert, {"host": self.host, "collector": collector, "updated": started,
                                              "state": json.dumps(dump(result.state))})
        elif ok:  # its source went away (no data): after a restart there is nothing of it to show either
            conn.execute(delete(collector_state).where(collector_state.c.host == self.host,
                                                       collector_state.c.collector == collector))
        self._sync_entities(conn, collector, started, result.entities)
        return len(ids)

    def series_of(self, metric: str) -> list[tuple[int, dict[str, str]]]:
        """Every series of `metric` on this host: (id, its labels)."""
        with self.engine.connect() as conn:
            return [(int(sid), dict(tuple(p) for p in json.loads(lab)))
                    for sid, lab in conn.execute(_SERIES_OF, {"h": self.host, "m": metric})]

    def find_series(self, metric: str, **labels: str) -> int | None:
        return next((sid for sid, pairs in self.series_of(metric)
                     if all(pairs.get(k) == v for k, v in labels.items())), None)

    def history(self, series_id: int, start: int, end: int, max_points: int = 1500,
                thinned: bool = True) -> list[Point]:
        """Points for a chart: raw samples for short ranges, rollups otherwise.

        Rollups exist for finished buckets up to the watermark; the part after it is
        aggregated from raw samples on the fly, so the newest data is always there. Where the
        resolution a range reads begins later than the range (raw samples kept `raw_days`, a
        database that has only the older, coarser rollups), the part before comes from the next
        coarser one: a chart shows the finest data there is for each part of its range.
        `thinned=False`: every point at that resolution (a rate is worked out before thinning)."""
        points = [p for _, part in self.history_parts(series_id, start, end, max_points) for p in part]
        # A month of 5-minute rollups is 8,640 points: as many as the chart can draw, no more
        # (567 KB and 26-41 ms per chart before).
        return thin(points, max_points) if thinned else points

    def history_parts(self, series_id: int, start: int, end: int, max_points: int = 1500
                      ) -> list[tuple[int, list[Point]]]:
        """`history`'s points unthinned, as (resolution, points) parts from the oldest: the coarser
        rollups where the finer data begins after `start` (a chart's step is each part's own)."""
        res = resolution(end - start, max_points)
        with self.engine.connect() as conn:
            parts = [(res, self._points(conn, series_id, start, end, res, max_points))]
            finer = res
            for coarser in (RES_5M, RES_1H):
                if coarser <= finer:
                    continue
                first = next((pts[0].ts for _, pts in parts if pts), end)
                if first <= start + max(finer, 60):
                    break
                parts.insert(0, (coarser, self._points(conn, series_id, start, first, coarser)))
                finer = coarser
        return [(r, pts) for r, pts in parts if pts]

    def hours(self, series_id: int, start: int, end: int) -> list[Point]:
        """Every hourly point from `start` to `end`: the hourly rollups up to their fold, the raw
        samples after it grouped by the hour (the energy ledger's hours, app/energy/book.py)."""
        with self.engine.connect() as conn:
            return self._points(conn, series_id, start, end, RES_1H)

    def raw_hours(self, series_ids: Sequence[int], start: int, end: int) -> dict[int, list[Point]]:
        """Several series' raw samples from `start` to `end` grouped by the hour, in one query: the
        hours the hourly fold has not reached yet, read on every /energy view."""
        out: dict[int, list[Point]] = {sid: [] for sid in series_ids}
        if series_ids:
            with self.engine.connect() as conn:
                for sid, h, mn, av, mx in conn.execute(_RAW_HOURS, {"ids": list(series_ids), "a": start, "b": end}):
                    out[int(sid)].append(Point(int(h) * RES_1H, mn, av, mx))
        return out

    def hourly_fold(self) -> tuple[int, int]:
        """(where the hourly rollups end, a count that moves when folded hours may have been
        rewritten): this database's refold count, and on PostgreSQL also every TTL, since another
        server on it refolds unseen here (as the chart cache's TTL)."""
        generation = grouped_cache(self.engine).generation
        if self.dialect == "postgresql":
            generation = generation * 1_000_000_007 + int(time.monotonic() // TTL)
        return self._watermark(RES_1H), generation

    def highest(self, series_id: int, start: int, end: int) -> float | None:
        """A series' highest value in [start, end) (a disk's hottest over 30 days), worked out by
        the database from the coarsest rows that fit: hourly maxima for the whole hours up to the
        hourly fold, 5-minute ones for the edges and up to the 5-minute fold, raw samples after
        it. A 5-minute bucket at an edge counts whole. A few dozen rows, none sent to Python;
        plain SQL, as a page asks for it on every view."""
        ph = "?" if self.dialect == "sqlite" else "%s"
        with self.engine.connect() as conn:
            marks: dict[str, str] = dict(conn.exec_driver_sql(f"SELECT key, value FROM meta WHERE key IN ({ph}, {ph})",
                                              (f"rollup_{RES_5M}", f"rollup_{RES_1H}")).all())
            wm5, wm1h = int(marks.get(f"rollup_{RES_5M}") or 0), int(marks.get(f"rollup_{RES_1H}") or 0)
            h0, h1 = -(-start // RES_1H), min(end, wm1h) // RES_1H  # whole hours inside, folded
            spans = [(RES_1H, h0, h1)] if h0 < h1 else []
            fine = [(start, h0 * RES_1H), (h1 * RES_1H, min(end, wm5))] if h0 < h1 else [(start, min(end, wm5))]
            spans += [(RES_5M, a // RES_5M, -(-b // RES_5M)) for a, b in fine if a < b]
            parts, args = [], []
            for res, b0, b1 in spans:
                table = ROLLUPS[res].name
                sql = f"SELECT max(vmax) AS v FROM {table} WHERE series_id = {ph} AND bucket >= {ph} AND bucket < {ph}"
                args += [series_id, b0, b1]
                if self.dialect == "postgresql":  # rows and chunks; only the chunks in range
                    tier = chunks.BY_TABLE[table]
                    sql = sql.replace(table, tier.view, 1) + f" AND chunk >= {ph} AND chunk <= {ph}"
                    args += [b0 // tier.span, (b1 - 1) // tier.span]
                parts.append(sql)
            parts.append(f"SELECT max(value) AS v FROM sample WHERE series_id = {ph} AND ts >= {ph} AND ts < {ph}")
            args += [series_id, max(start, wm5), end]
            found = conn.exec_driver_sql(f"SELECT max(v) FROM ({' UNION ALL '.join(parts)}) AS parts", tuple(args)).scalar()
        return float(found) if found is not None else None

    def _points(self, conn, series_id: int, start: int, end: int, res: int, max_points: int = 0) -> list[Point]:
        if res == 0:  # rows, and the Gorilla blocks of closed spans (app/storage/blocks.py)
            q = (select(sample.c.ts, sample.c.value).where(
                sample.c.series_id == series_id, sample.c.ts >= start, sample.c.ts < end).order_by(sample.c.ts))
            rows = conn.execute(q).all()
            packed = blocks.read(conn, [series_id], start, end).get(series_id)
            if packed:
                return [Point(t, v, v, v) for t, v in blocks.merged(packed, rows)]
            return [Point(t, v, v, v) for t, v in rows]
        watermark = self._watermark_in(conn, res)
        r = readable(self.dialect, ROLLUPS[res])
        lo, hi = start // res, min(end, watermark) // res
        where = (r.c.series_id == series_id, r.c.bucket >= lo, r.c.bucket < hi, in_chunks(r, lo, hi))
        # More rollups than max_points are grouped by the database (k buckets a row), not sent to
        # Python to be thinned: a year of hourly ones is 8,760 rows, 20 ms a chart that way.
        # Counted first (an index range, no row leaves the database): a sparse range stays whole.
        k = 1
        if max_points > 0 and (hi - lo) > max_points:
            k = -(-(conn.execute(select(func.count()).where(*where)).scalar() or 0) // max_points)
        if k > 1:  # each k buckets as one point: their first bucket, lowest, mean and highest
            group = (r.c.bucket - lo) // k  # from the range's first bucket: at most max_points groups
            q = (select(func.min(r.c.bucket), func.min(r.c.vmin), func.avg(r.c.vavg), func.max(r.c.vmax))
                 .where(*where).group_by(group).order_by(group))
            # the same grouped points until the fold moves on (hi) or a refold says so: kept a minute
            points = grouped_cache(self.engine).get((series_id, res, lo, hi, k), lambda: self._rows(conn, q, res))
        else:
            q = select(r.c.bucket, r.c.vmin, r.c.vavg, r.c.vmax).where(*where).order_by(r.c.bucket)
            points = self._rows(conn, q, res)
        if end > watermark:
            bucket = sample.c.ts // res * res  # integer division on both SQLite and PostgreSQL
            q2 = (select(bucket.label("b"), func.min(sample.c.value), func.avg(sample.c.value),
                         func.max(sample.c.value))
                  .where(sample.c.series_id == series_id, sample.c.ts >= max(start, watermark), sample.c.ts < end)
                  .group_by("b").order_by("b"))
            points = points + [Point(int(b), mn, av, mx) for b, mn, av, mx in conn.execute(q2).all()]
        return points

    @staticmethod
    def _rows(conn, q, res: int) -> list[Point]:
        # fetch all at once: row-by-row iteration cost more than the query itself
        return [Point(row[0] * res, row[1], row[2], row[3]) for row in conn.execute(q).all()]

    # -- rollups and retention ----------------------------------------------------------
