"""Uptime of many series at once, for /status: the mean over each window and the last day's
5-minute points, read in four queries for every monitor together (it was five per monitor,
each fetching a month of rows: 70 ms for the demo's monitors).

The points are the ones a chart of the window reads (Store.history): finished 5-minute rollups,
the raw samples after the last fold grouped into 5-minute buckets, and, where the 5-minute
rollups begin later than the window (a database that has only older hourly ones), the hourly
rollups before them. Each point counts once; the mean of the windows is summed in SQL, so a
month is a count and a sum per series, not 8,640 rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import case, func, select

from app.storage.base import RES_1H, RES_5M, Point
from app.storage.models import rollup_1h, rollup_5m, sample, series


@dataclass
class Uptimes:
    """One series' figures: per window (seconds) the sum and count of its points' averages, its
    first point, and the points of the last `day` seconds (for the timeline)."""

    sums: dict[int, float] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    first: int | None = None
    day: list[Point] = field(default_factory=list)

    def add(self, ts: int, value: float, windows: Sequence[int], now: int, day: int) -> None:
        for w in windows:
            if ts >= now - w:
                self.sums[w] = self.sums.get(w, 0.0) + value
                self.counts[w] = self.counts.get(w, 0) + 1
        self.first = ts if self.first is None else min(self.first, ts)
        if ts >= now - day:
            self.day.append(Point(ts, value, value, value))

    def mean(self, window: int) -> float | None:
        n = self.counts.get(window, 0)
        return self.sums[window] / n if n else None


def find_many(store, wanted: Sequence[tuple[str, dict[str, str]]]) -> list[int | None]:
    """Store.find_series for many (metric, labels) at once: one query."""
    metrics = {m for m, _ in wanted}
    if not metrics:
        return []
    with store.engine.connect() as conn:
        rows = conn.execute(select(series.c.id, series.c.metric, series.c.labels).where(
            series.c.host == store.host, series.c.metric.in_(metrics)).order_by(series.c.id)).all()
    parsed = [(int(sid), metric, dict(tuple(p) for p in json.loads(lab))) for sid, metric, lab in rows]
    return [next((sid for sid, metric, pairs in parsed if metric == m and all(pairs.get(k) == v for k, v in
                                                                             labels.items())), None)
            for m, labels in wanted]


def uptimes(store, ids: Sequence[int], windows: Sequence[int], now: int,
            day: int = 86400) -> dict[int, Uptimes]:
    out = {sid: Uptimes() for sid in ids}
    if not ids:
        return out
    longest = max(windows)
    start = now - longest
    with store.engine.connect() as conn:
        wm5 = store._watermark_in(conn, RES_5M)
        wm1 = store._watermark_in(conn, RES_1H)
        b = rollup_5m.c.bucket
        cols = [rollup_5m.c.series_id, func.min(b)]
        for w in windows:
            inside = b >= (now - w) // RES_5M
            cols += [func.sum(case((inside, rollup_5m.c.vavg), else_=0.0)), func.sum(case((inside, 1), else_=0))]
        q1 = select(*cols).where(rollup_5m.c.series_id.in_(ids), b >= start // RES_5M,
                                 b < wm5 // RES_5M).group_by(rollup_5m.c.series_id)
        for row in conn.execute(q1).all():
            sid, first = int(row[0]), int(row[1]) * RES_5M
            u = out[sid]
            u.first = first
            for i, w in enumerate(windows):
                u.sums[w] = float(row[2 + 2 * i] or 0.0)
                u.counts[w] = int(row[3 + 2 * i] or 0)
        # the day's 5-minute points, for the timeline
        q_day = select(rollup_5m.c.series_id, b, rollup_5m.c.vavg).where(
            rollup_5m.c.series_id.in_(ids), b >= (now - day) // RES_5M, b < wm5 // RES_5M
        ).order_by(rollup_5m.c.series_id, b)
        for sid, bucket, avg in conn.execute(q_day).all():
            out[int(sid)].day.append(Point(int(bucket) * RES_5M, avg, avg, avg))
        # after the last fold: raw samples in 5-minute buckets
        tb = (sample.c.ts // RES_5M * RES_5M).label("b")
        q2 = (select(sample.c.series_id, tb, func.avg(sample.c.value)).where(
            sample.c.series_id.in_(ids), sample.c.ts >= max(start, wm5), sample.c.ts < now + 1)
            .group_by(sample.c.series_id, tb).order_by(sample.c.series_id, tb))
        for sid, ts, avg in conn.execute(q2).all():
            out[int(sid)].add(int(ts), float(avg), windows, now, day)
        # before the 5-minute rollups begin: hourly ones (as a chart of the month would read)
        firsts = {sid: u.first if u.first is not None else now + 1 for sid, u in out.items()}
        late = [sid for sid in ids if firsts[sid] > start + RES_5M]
        if late:
            h = rollup_1h.c.bucket
            q3 = select(rollup_1h.c.series_id, h, rollup_1h.c.vavg).where(
                rollup_1h.c.series_id.in_(late), h >= start // RES_1H, h < wm1 // RES_1H
            ).order_by(rollup_1h.c.series_id, h)
            for sid, bucket, avg in conn.execute(q3).all():
                ts = int(bucket) * RES_1H
                if int(bucket) < firsts[int(sid)] // RES_1H:  # as history() reads up to the first finer point
                    out[int(sid)].add(ts, float(avg), windows, now, day)
    for u in out.values():
        u.day.sort(key=lambda p: p.ts)
    return out

