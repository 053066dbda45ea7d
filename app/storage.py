"""Everything rackpulse keeps in SQL: samples, rollups, collector runs, state and inventory.

Plain functions over one Engine. Writes of one collector run happen in one transaction,
so a crash never leaves half a run behind.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from app.models import (
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
ROLLUPS = {RES_5M: rollup_5m, RES_1H: rollup_1h}
DAY = 86400


def labels_key(labels: Labels) -> str:
    return json.dumps([list(p) for p in labels], separators=(",", ":"))


class Point(NamedTuple):
    ts: int
    vmin: float
    vavg: float
    vmax: float


class Store:
    def __init__(self, engine: Engine, host: str) -> None:
        self.engine = engine
        self.host = host
        self.dialect = engine.dialect.name
        self._ids: dict[tuple[str, str], int] = {}
        ph = "?" if self.dialect == "sqlite" else "%s"
        if self.dialect == "sqlite":
            self._insert_sql = f"INSERT OR IGNORE INTO sample (series_id, ts, value) VALUES ({ph}, {ph}, {ph})"
        else:
            self._insert_sql = (
                f"INSERT INTO sample (series_id, ts, value) VALUES ({ph}, {ph}, {ph}) ON CONFLICT DO NOTHING"
            )
        self._entities: dict[tuple[str, str], dict[str, Any]] | None = None

    # -- series and samples -------------------------------------------------------------

    def _insert(self, table):  # type: ignore[no-untyped-def]
        return (sqlite.insert if self.dialect == "sqlite" else postgresql.insert)(table)

    def series_ids(self, conn, keys: Iterable[tuple[str, str]]) -> list[int]:  # type: ignore[no-untyped-def]
        """Ids for (metric, labels_json) pairs, creating the series that are new."""
        keys = list(keys)
        missing = {k for k in keys if k not in self._ids}
        if missing:
            rows = [{"host": self.host, "metric": m, "labels": lab} for m, lab in missing]
            conn.execute(self._insert(series).on_conflict_do_nothing(), rows)
            metrics = {m for m, _ in missing}
            for sid, m, lab in conn.execute(
                select(series.c.id, series.c.metric, series.c.labels).where(
                    series.c.host == self.host, series.c.metric.in_(metrics)
                )
            ):
                self._ids[(m, lab)] = sid
        return [self._ids[k] for k in keys]

    def write_samples(self, conn, ts: int, samples: Sequence[Sample],  # type: ignore[no-untyped-def]
                      skip: frozenset[str] = frozenset()) -> int:
        keep = [s for s in samples if math.isfinite(s.value) and s.metric not in skip]
        ids = self.series_ids(conn, ((s.metric, labels_key(s.labels)) for s in keep))
        rows = [(sid, ts, s.value) for sid, s in zip(ids, keep, strict=True)]
        if rows:
            conn.exec_driver_sql(self._insert_sql, rows)
        return len(rows)

    def write_rows(self, rows: Sequence[tuple[int, int, float]]) -> None:
        """Bulk insert of (series_id, ts, value) rows in one transaction (ingest path, bench)."""
        with self.engine.begin() as conn:
            conn.exec_driver_sql(self._insert_sql, list(rows))

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
        ts = int(started)
        with self.engine.begin() as conn:
            conn.execute(collector_run.insert().values(
                host=self.host, collector=collector, started=started, duration=duration, ok=ok,
                error=error[:2000] if error else None,
            ))
            if result is None:
                return
            self.write_samples(conn, ts, result.samples, skip)
            state = json.dumps(result.state, default=str)
            stmt = self._insert(collector_state).values(host=self.host, collector=collector, updated=started, state=state)
            conn.execute(stmt.on_conflict_do_update(
                index_elements=["host", "collector"], set_={"updated": started, "state": state}
            ))
            self._sync_entities(conn, collector, started, result.entities)

    def load_states(self) -> dict[str, dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(collector_state.c.collector, collector_state.c.state)
                                .where(collector_state.c.host == self.host))
            return {c: json.loads(s) for c, s in rows}

    # -- inventory ----------------------------------------------------------------------

    def _load_entities(self, conn) -> dict[tuple[str, str], dict[str, Any]]:  # type: ignore[no-untyped-def]
        if self._entities is None:
            self._entities = {}
            for kind, key, coll, attrs, present in conn.execute(
                select(entity.c.kind, entity.c.key, entity.c.collector, entity.c.attrs, entity.c.present)
                .where(entity.c.host == self.host)
            ):
                self._entities[(kind, key)] = {"collector": coll, "attrs": json.loads(attrs), "present": present}
        return self._entities

    def _sync_entities(self, conn, collector: str, now: float, ents: Sequence[Entity]) -> None:  # type: ignore[no-untyped-def]
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
        conn.execute(update(entity).where(entity.c.host == self.host, entity.c.collector == collector,
                                          entity.c.present.is_(True)).values(last_seen=now))
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

    def last_runs(self, collector: str, limit: int = 20) -> list[dict[str, Any]]:
        q = (select(collector_run).where(collector_run.c.host == self.host, collector_run.c.collector == collector)
             .order_by(collector_run.c.started.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

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
            points = [Point(b * res, mn, av, mx) for b, mn, av, mx in conn.execute(q).all()]
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

    def _set_watermark(self, conn, res: int, value: int) -> None:  # type: ignore[no-untyped-def]
        stmt = self._insert(meta).values(key=f"rollup_{res}", value=str(value))
        conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"value": str(value)}))

    def make_rollups(self, now: float | None = None) -> int:
        """Fold finished 5-minute buckets of raw samples, then finished hours of 5-minute rollups."""
        now = int(now if now is not None else time.time())
        made = 0
        with self.engine.begin() as conn:
            start = self._watermark(RES_5M)
            if start == 0:
                first = conn.execute(select(func.min(sample.c.ts))).scalar()
                start = (int(first) // RES_5M) * RES_5M if first is not None else (now // RES_5M) * RES_5M
            end = (now // RES_5M) * RES_5M
            if end > start:
                made += conn.exec_driver_sql(self._fold_raw_sql(), (start, end)).rowcount or 0
                self._set_watermark(conn, RES_5M, end)
            h_start = self._watermark(RES_1H)
            if h_start == 0:
                h_start = (start // RES_1H) * RES_1H
            h_end = (end // RES_1H) * RES_1H
            if h_end > h_start:
                made += conn.exec_driver_sql(self._fold_5m_sql(), (h_start // RES_5M, h_end // RES_5M)).rowcount or 0
                self._set_watermark(conn, RES_1H, h_end)
        return made

    def _fold_raw_sql(self) -> str:
        ph = "?" if self.dialect == "sqlite" else "%s"
        return (
            "INSERT INTO rollup_5m (series_id, bucket, vmin, vavg, vmax, n) "
            f"SELECT series_id, ts / {RES_5M}, min(value), avg(value), max(value), count(*) "
            f"FROM sample WHERE ts >= {ph} AND ts < {ph} GROUP BY series_id, ts / {RES_5M} ON CONFLICT DO NOTHING"
        )

    def _fold_5m_sql(self) -> str:
        ph = "?" if self.dialect == "sqlite" else "%s"
        k = RES_1H // RES_5M
        return (
            "INSERT INTO rollup_1h (series_id, bucket, vmin, vavg, vmax, n) "
            f"SELECT series_id, bucket / {k}, min(vmin), sum(vavg * n) / sum(n), max(vmax), sum(n) "
            f"FROM rollup_5m WHERE bucket >= {ph} AND bucket < {ph} "
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


def _text(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, default=str)
