"""Everything rackpulse keeps in SQL: samples, rollups, collector runs, state and inventory.

Plain functions over one Engine. Writes of one collector run happen in one transaction,
so a crash never leaves half a run behind.
"""

from __future__ import annotations

import functools
import json
import math
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Engine, bindparam, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from app.storage.models import (
    collector_run,
    collector_state,
    entity,
    entity_event,
    meta,
    rollup_1h,
    rollup_5m,
    sample,
    series,
)
from collectors.base import CollectResult, Entity, Labels, Sample

RES_5M, RES_1H = 300, 3600
FOLD_SERIES = 500  # series per fold transaction: short enough that ingest (SQLite: one writer) barely waits
ROLLUPS = {RES_5M: rollup_5m, RES_1H: rollup_1h}
DAY = 86400


@functools.lru_cache(maxsize=65536)  # agents send the same label sets every run
def labels_key(labels: Labels) -> str:
    return json.dumps([list(p) for p in labels], separators=(",", ":"))


# Statements every collector run executes, built once (see _CLAIM in app/ingest/agents.py for why).
_RUN_INSERT = collector_run.insert()
_STILL_HERE = update(entity).where(entity.c.host == bindparam("b_host"), entity.c.collector == bindparam("b_collector"),
                                   entity.c.present.is_(True)).values(last_seen=bindparam("b_now"))
_WATERMARKS = select(meta.c.key, meta.c.value).where(
    meta.c.key.in_([f"{k}_{r}" for k in ("rollup", "claim") for r in (RES_5M, RES_1H)]))


class SharedLock:
    """Many writers share it; make_rollups takes it alone, only to move its claim.

    A sample committed while make_rollups folds the same bucket would be missed by the fold
    and never rolled up. Writers of samples hold it shared for their transaction; the claim
    moves only between transactions, so a writer sees either the old claim (its samples
    are committed before the fold starts) or the new one (it folds its late samples itself).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._exclusive = False

    def shared(self) -> _Held:
        return _Held(self, exclusive=False)

    def exclusive(self) -> _Held:
        return _Held(self, exclusive=True)

    def _acquire(self, exclusive: bool) -> None:
        with self._cond:
            if exclusive:
                self._cond.wait_for(lambda: not self._exclusive)
                self._exclusive = True  # new shared holders wait from now on
                self._cond.wait_for(lambda: self._shared == 0)
            else:
                self._cond.wait_for(lambda: not self._exclusive)
                self._shared += 1

    def _release(self, exclusive: bool) -> None:
        with self._cond:
            if exclusive:
                self._exclusive = False
            else:
                self._shared -= 1
            self._cond.notify_all()


class _Held:
    def __init__(self, lock: SharedLock, exclusive: bool) -> None:
        self.lock, self.exclusive = lock, exclusive

    def __enter__(self) -> None:
        self.lock._acquire(self.exclusive)

    def __exit__(self, *exc: object) -> None:
        self.lock._release(self.exclusive)


# One per engine: every Store on the same database (one per host) shares it.
_LOCKS: dict[int, SharedLock] = {}


def rollup_lock(engine: Engine) -> SharedLock:
    return _LOCKS.setdefault(id(engine), SharedLock())


class Late:
    """Samples written below the rollup claim in one transaction, refolded once at its end."""

    def __init__(self, claim: int) -> None:
        self.claim = claim
        self.ids: set[int] = set()
        self.span: tuple[int, int] | None = None

    def add(self, ids: Iterable[int], ts: int) -> None:
        self.ids.update(ids)
        self.span = (min(self.span[0], ts), max(self.span[1], ts)) if self.span else (ts, ts)


class Point(NamedTuple):
    ts: int
    vmin: float
    vavg: float
    vmax: float


class SeriesLimit(Exception):
    """A write would give the host more series than it may have (agents.max_series_per_host)."""


class Store:
    def __init__(self, engine: Engine, host: str, max_series: int | None = None) -> None:
        self.engine = engine
        self.host = host
        # For agent hosts: a host that invents label values must not grow the database and this
        # process without end. None: no limit (this server's own collectors).
        self.max_series = max_series
        self._series_count: int | None = None
        self.dialect = engine.dialect.name
        self._ids: dict[tuple[str, str], int] = {}
        # The same ids keyed the way samples carry them, (metric, labels tuple): the ingest path
        # looks up every sample of every run, and this skips building the JSON key each time.
        self._sample_ids: dict[tuple[str, Labels], int] = {}
        ph = "?" if self.dialect == "sqlite" else "%s"
        if self.dialect == "sqlite":
            self._insert_sql = f"INSERT OR IGNORE INTO sample (series_id, ts, value) VALUES ({ph}, {ph}, {ph})"
        else:
            self._insert_sql = (
                f"INSERT INTO sample (series_id, ts, value) VALUES ({ph}, {ph}, {ph}) ON CONFLICT DO NOTHING"
            )
        # PostgreSQL: a whole batch as three arrays in one statement, one round trip instead of
        # one per row (psycopg's pipelined executemany took 12 ms for 500 rows, this ~2 ms). The
        # arrays go as text literals we join ourselves: psycopg's list dumper quotes element by
        # element in Python (1.1 ms of CPU per 500 rows, this 0.5 ms; the server parses either).
        self._unnest_sql = ("INSERT INTO sample (series_id, ts, value) SELECT * FROM "
                            "unnest(%s::integer[], %s::bigint[], %s::float8[]) ON CONFLICT DO NOTHING")
        self._unnest_one_ts_sql = ("INSERT INTO sample (series_id, ts, value) SELECT s, %s::bigint, v FROM "
                                   "unnest(%s::integer[], %s::float8[]) AS t(s, v) ON CONFLICT DO NOTHING")
        self._entities: dict[tuple[str, str], dict[str, Any]] | None = None
        # Statements every run executes, built once (see _CLAIM in app/ingest/agents.py for why).
        upsert = self._insert(collector_state)
        self._state_upsert = upsert.on_conflict_do_update(
            index_elements=["host", "collector"], set_={"updated": upsert.excluded.updated, "state": upsert.excluded.state})
        self.lock = rollup_lock(engine)

    # -- series and samples -------------------------------------------------------------

    def _insert(self, table):
        return (sqlite.insert if self.dialect == "sqlite" else postgresql.insert)(table)

    def series_ids(self, conn, keys: Iterable[tuple[str, str]]) -> list[int]:
        """Ids for (metric, labels_json) pairs, creating the series that are new."""
        keys = list(keys)
        missing = {k for k in keys if k not in self._ids}
        if missing and self.max_series is not None:
            self._load_ids(conn, {m for m, _ in missing})  # known to the database, not yet to this cache
            missing = {k for k in missing if k not in self._ids}
            if missing:
                if self._series_count is None:
                    self._series_count = int(conn.execute(
                        select(func.count()).select_from(series).where(series.c.host == self.host)).scalar_one())
                if self._series_count + len(missing) > self.max_series:
                    raise SeriesLimit(f"host {self.host!r} has {self._series_count} series and this would add "
                                      f"{len(missing)}, beyond its limit of {self.max_series} "
                                      "(agents.max_series_per_host)")
                self._series_count += len(missing)
        if missing:
            rows = [{"host": self.host, "metric": m, "labels": lab} for m, lab in missing]
            conn.execute(self._insert(series).on_conflict_do_nothing(), rows)
            self._load_ids(conn, {m for m, _ in missing})
        return [self._ids[k] for k in keys]

    def _load_ids(self, conn, metrics: set[str]) -> None:
        for sid, m, lab in conn.execute(
            select(series.c.id, series.c.metric, series.c.labels).where(
                series.c.host == self.host, series.c.metric.in_(metrics)
            )
        ):
            self._ids[(m, lab)] = sid

    def write_samples(self, conn, ts: int, samples: Sequence[Sample],
                      skip: frozenset[str] = frozenset()) -> list[int]:
        """Store one timestamp's samples (the non-finite and those in ``skip`` left out); returns
        the series ids stored."""
        keep = [s for s in samples if s.metric not in skip and math.isfinite(s.value)]
        ids = self._sample_series_ids(conn, keep)
        if ids and self.dialect == "postgresql":
            conn.exec_driver_sql(self._unnest_one_ts_sql, (ts, _pg_array(ids), _pg_array([s.value for s in keep], float)))
        elif ids:
            conn.exec_driver_sql(self._insert_sql, [(sid, ts, s.value) for sid, s in zip(ids, keep, strict=True)])
        return ids

    def _sample_series_ids(self, conn, samples: Sequence[Sample]) -> list[int]:
        """series_ids for samples, looked up by (metric, labels tuple) first: no JSON key per sample."""
        cache = self._sample_ids
        ids = [cache.get((s.metric, s.labels)) for s in samples]
        missing = [i for i, sid in enumerate(ids) if sid is None]
        if missing:
            new = self.series_ids(conn, ((samples[i].metric, labels_key(samples[i].labels)) for i in missing))
            for i, sid in zip(missing, new, strict=True):
                cache[(samples[i].metric, samples[i].labels)] = ids[i] = sid
        return ids  # type: ignore[return-value]  # every None was filled in above

    def _insert_rows(self, conn, rows: Sequence[tuple[int, int, float]]) -> None:
        if not rows:
            return
        if self.dialect == "postgresql":
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
        conn.execute(self._state_upsert, {"host": self.host, "collector": collector, "updated": started,
                                          "state": json.dumps(result.state, default=str)})
        self._sync_entities(conn, collector, started, result.entities)
        return len(ids)

    def load_states(self) -> dict[str, dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(collector_state.c.collector, collector_state.c.state)
                                .where(collector_state.c.host == self.host))
            return {c: json.loads(s) for c, s in rows}

    # -- inventory ----------------------------------------------------------------------

    def _load_entities(self, conn) -> dict[tuple[str, str], dict[str, Any]]:
        if self._entities is None:
            self._entities = {}
            for kind, key, coll, attrs, present in conn.execute(
                select(entity.c.kind, entity.c.key, entity.c.collector, entity.c.attrs, entity.c.present)
                .where(entity.c.host == self.host)
            ):
                self._entities[(kind, key)] = {"collector": coll, "attrs": json.loads(attrs), "present": present}
        return self._entities

    def _sync_entities(self, conn, collector: str, now: float, ents: Sequence[Entity]) -> None:
        """Diff the run's entities against the stored ones; every change becomes an event row."""
        known = self._load_entities(conn)
        events: list[dict[str, Any]] = []
        seen = set()
        for e in ents:
            k = (e.kind, e.key)
            seen.add(k)
            attrs = json.loads(json.dumps(dict(e.attrs), default=str))
            old = known.get(k)
            base = {"host": self.host, "kind": e.kind, "key": e.key, "ts": now}
            if old is None:
                conn.execute(entity.insert().values(
                    host=self.host, collector=collector, kind=e.kind, key=e.key, attrs=json.dumps(attrs),
                    first_seen=now, last_seen=now, present=True,
                ))
                events.append({**base, "field": "present", "old": None, "new": "appeared"})
            else:
                changed = {f for f in set(attrs) | set(old["attrs"]) if attrs.get(f) != old["attrs"].get(f)}
                for f in sorted(changed):
                    events.append({**base, "field": f, "old": _text(old["attrs"].get(f)), "new": _text(attrs.get(f))})
                if not old["present"]:
                    events.append({**base, "field": "present", "old": "gone", "new": "back"})
                if changed or not old["present"]:
                    conn.execute(update(entity).where(
                        entity.c.host == self.host, entity.c.kind == e.kind, entity.c.key == e.key
                    ).values(attrs=json.dumps(attrs), last_seen=now, present=True))
            known[k] = {"collector": collector, "attrs": attrs, "present": True}
        for k, v in known.items():
            if v["collector"] == collector and v["present"] and k not in seen:
                v["present"] = False
                conn.execute(update(entity).where(
                    entity.c.host == self.host, entity.c.kind == k[0], entity.c.key == k[1]
                ).values(present=False))
                events.append({"host": self.host, "kind": k[0], "key": k[1], "ts": now,
                               "field": "present", "old": "present", "new": "gone"})
        # One statement for "still here" instead of one per unchanged entity.
        conn.execute(_STILL_HERE, {"b_host": self.host, "b_collector": collector, "b_now": now})
        if events:
            conn.execute(entity_event.insert(), events)

    def events(self, kind: str | None = None, key: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        q = select(entity_event).where(entity_event.c.host == self.host)
        if kind:
            q = q.where(entity_event.c.kind == kind)
        if key:
            q = q.where(entity_event.c.key == key)
        q = q.order_by(entity_event.c.ts.desc(), entity_event.c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def entities(self, kind: str) -> list[dict[str, Any]]:
        q = select(entity).where(entity.c.host == self.host, entity.c.kind == kind).order_by(entity.c.key)
        with self.engine.connect() as conn:
            return [{**dict(r._mapping), "attrs": json.loads(r.attrs)} for r in conn.execute(q)]

    # -- history ------------------------------------------------------------------------

    def find_series(self, metric: str, **labels: str) -> int | None:
        with self.engine.connect() as conn:
            for sid, lab in conn.execute(select(series.c.id, series.c.labels)
                                         .where(series.c.host == self.host, series.c.metric == metric)):
                pairs = dict(tuple(p) for p in json.loads(lab))
                if all(pairs.get(k) == v for k, v in labels.items()):
                    return int(sid)
        return None

    def history(self, series_id: int, start: int, end: int, max_points: int = 1500) -> list[Point]:
        """Points for a chart: raw samples for short ranges, rollups otherwise.

        Rollups exist for finished buckets up to the watermark; the part after it is
        aggregated from raw samples on the fly, so the newest data is always there.
        """
        span = max(end - start, 1)
        if span / 30 <= max_points:  # raw at the collection interval fits
            q = (select(sample.c.ts, sample.c.value).where(
                sample.c.series_id == series_id, sample.c.ts >= start, sample.c.ts < end).order_by(sample.c.ts))
            with self.engine.connect() as conn:
                return [Point(t, v, v, v) for t, v in conn.execute(q).all()]
        res = RES_5M if span / RES_5M <= max_points * 6 else RES_1H
        watermark = self._watermark(res)
        points: list[Point] = []
        with self.engine.connect() as conn:
            r = ROLLUPS[res]
            q = (select(r.c.bucket, r.c.vmin, r.c.vavg, r.c.vmax).where(
                r.c.series_id == series_id, r.c.bucket >= start // res,
                r.c.bucket < min(end, watermark) // res).order_by(r.c.bucket))
            # fetch all at once: row-by-row iteration cost more than the query itself
            points = [Point(row[0] * res, row[1], row[2], row[3]) for row in conn.execute(q).all()]
            if end > watermark:
                bucket = sample.c.ts // res * res  # integer division on both SQLite and PostgreSQL
                q2 = (select(bucket.label("b"), func.min(sample.c.value), func.avg(sample.c.value),
                             func.max(sample.c.value))
                      .where(sample.c.series_id == series_id, sample.c.ts >= max(start, watermark), sample.c.ts < end)
                      .group_by("b").order_by("b"))
                points += [Point(int(b), mn, av, mx) for b, mn, av, mx in conn.execute(q2).all()]
        return points

    # -- rollups and retention ----------------------------------------------------------

    def _watermark(self, res: int) -> int:
        with self.engine.connect() as conn:
            v = conn.execute(select(meta.c.value).where(meta.c.key == f"rollup_{res}")).scalar()
        return int(v) if v else 0

    def import_rollups(self, rows: Mapping[int, Sequence[dict[str, Any]]], folded_up_to: Mapping[int, int]) -> None:
        """Rollup rows made elsewhere (the demo's past month and year), per resolution, kept
        as they are where a bucket already exists; then each resolution counts as folded up to
        the time given, so reads take those rows and the fold does not redo them."""
        with self.lock.shared(), self.engine.begin() as conn:
            for res, batch in rows.items():
                for i in range(0, len(batch), 20_000):
                    conn.execute(self._insert(ROLLUPS[res]).on_conflict_do_nothing(), batch[i:i + 20_000])
            for res, value in folded_up_to.items():
                self._set_watermark(conn, res, value)

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
            for first_id in range(0, max_id + 1, FOLD_SERIES):
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
        ph = "?" if self.dialect == "sqlite" else "%s"
        marks = ",".join([ph] * len(ids))
        lo5 = since // RES_5M * RES_5M
        hi5 = min(wm5, (until // RES_5M + 1) * RES_5M) if until is not None else wm5
        conn.exec_driver_sql(
            "INSERT INTO rollup_5m (series_id, bucket, vmin, vavg, vmax, n) "
            f"SELECT series_id, ts / {RES_5M}, min(value), avg(value), max(value), count(*) FROM sample "
            f"WHERE series_id IN ({marks}) AND ts >= {ph} AND ts < {ph} GROUP BY series_id, ts / {RES_5M} "
            "ON CONFLICT (series_id, bucket) DO UPDATE SET vmin = excluded.vmin, vavg = excluded.vavg, "
            "vmax = excluded.vmax, n = excluded.n", (*ids, lo5, hi5))
        self.refold_hours(conn, ids, lo5 // RES_5M, (hi5 - 1) // RES_5M, wm1h)

    def refold_hours(self, conn, ids: Sequence[int], first_bucket5: int, last_bucket5: int,
                     wm1h: int | None = None) -> None:
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
            f"SELECT series_id, bucket / {k}, min(vmin), sum(vavg * n) / sum(n), max(vmax), sum(n) FROM rollup_5m "
            f"WHERE series_id IN ({marks}) AND bucket >= {ph} AND bucket < {ph} GROUP BY series_id, bucket / {k} "
            "ON CONFLICT (series_id, bucket) DO UPDATE SET vmin = excluded.vmin, vavg = excluded.vavg, "
            "vmax = excluded.vmax, n = excluded.n", (*ids, lo, hi))

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
            # A bucket can arrive in two parts (an hour split between two compactions): merge them.
            ins = self._insert(table)
            least, greatest = (func.min, func.max) if self.dialect == "sqlite" else (func.least, func.greatest)
            ex = ins.excluded
            conn.execute(ins.on_conflict_do_update(index_elements=["series_id", "bucket"], set_={
                "vmin": least(table.c.vmin, ex.vmin), "vmax": greatest(table.c.vmax, ex.vmax),
                "vavg": (table.c.vavg * table.c.n + ex.vavg * ex.n) / (table.c.n + ex.n), "n": table.c.n + ex.n,
            }), rows)
            if res == RES_5M:
                self.refold_hours(conn, sorted(set(ids)), int(min(r["bucket"] for r in rows)),
                                  int(max(r["bucket"] for r in rows)))
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
            n += conn.execute(delete(rollup_5m).where(
                rollup_5m.c.bucket < int(now - rollup_5m_days * DAY) // RES_5M)).rowcount or 0
            if rollup_1h_days > 0:
                n += conn.execute(delete(rollup_1h).where(
                    rollup_1h.c.bucket < int(now - rollup_1h_days * DAY) // RES_1H)).rowcount or 0
            n += conn.execute(delete(collector_run).where(collector_run.c.started < now - raw_days * DAY)).rowcount or 0
        return n


def _pg_array(items: Iterable[int | float], kind: type = int) -> str:
    """A PostgreSQL array literal of numbers (``kind`` int or float: a bool or numpy value prints as
    a plain number). repr() of a float round-trips exactly; the callers have left out NaN and
    infinities, which PostgreSQL would read under other names."""
    return "{" + ",".join(map(repr, map(kind, items))) + "}"


def _text(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, default=str)
