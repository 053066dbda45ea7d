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
from app.storage.chunks import in_chunks, readable
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

    def merge(self, other: Uptimes) -> None:
        for w, n in other.counts.items():
            self.sums[w] = self.sums.get(w, 0.0) + other.sums[w]
            self.counts[w] = self.counts.get(w, 0) + n
        if other.first is not None:
            self.first = other.first if self.first is None else min(self.first, other.first)
        self.day.extend(other.day)

    def mean(self, window: int) -> float | None:
        n = self.counts.get(window, 0)
        return self.sums[window] / n if n else None


def find_many(store, wanted: Sequence[tuple[str, dict[str, str]]]) -> list[int | None]:
    """Store.find_series for many (metric, labels) at once: one query, and none once all were
    found (a series keeps its id; one not stored yet is looked for again next time)."""
    metrics = {m for m, _ in wanted}
    if not metrics:
        return []
    key = tuple((m, tuple(sorted(labels.items()))) for m, labels in wanted)
    known: dict = store.__dict__.setdefault("_found_series", {})
    if all(k in known for k in key):
        return [known[k] for k in key]
    with store.engine.connect() as conn:
        rows = conn.execute(select(series.c.id, series.c.metric, series.c.labels).where(
            series.c.host == store.host, series.c.metric.in_(metrics)).order_by(series.c.id)).all()
    parsed = [(int(sid), metric, dict(tuple(p) for p in json.loads(lab))) for sid, metric, lab in rows]
    found = [next((sid for sid, metric, pairs in parsed if metric == m and all(pairs.get(k) == v for k, v in
                                                                              labels.items())), None)
             for m, labels in wanted]
    known.update((k, sid) for k, sid in zip(key, found, strict=True) if sid is not None)
    return found


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
        folded, day_points = _folded(store, conn, tuple(ids), tuple(windows), now, day, wm5)
        for sid, first, figures in folded:
            u = out[sid]
            u.first = first
            for w, (total, n) in zip(windows, figures, strict=True):
                u.sums[w], u.counts[w] = total, n
        for sid, ts, avg in day_points:
            out[sid].day.append(Point(ts, avg, avg, avg))
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
            for sid, part in _hourly(store, conn, late, firsts, tuple(windows), now, day, wm1).items():
                out[sid].merge(part)
    for u in out.values():
        u.day.sort(key=lambda p: p.ts)
    return out



_Folded = tuple[list[tuple[int, int, list[tuple[float, int]]]], list[tuple[int, int, float]]]


def _folded(store, conn, ids: tuple[int, ...], windows: tuple[int, ...], now: int, day: int, wm5: int) -> _Folded:
    """The finished 5-minute rollups' share: per series its first bucket and each window's sum
    and count, and the day's points. They change only when a fold moves the watermark or the
    windows move on by a bucket, so a page refreshed every few seconds reads them once per five
    minutes (a month of buckets per monitor was 50 ms of a 55 ms /status). A late batch refolded
    below the watermark shows in the next five minutes."""
    key = (ids, windows, now // RES_5M, day, wm5)
    cached = getattr(store, "_uptime_folded", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    r5 = readable(store.dialect, rollup_5m)
    b = r5.c.bucket
    cols = [r5.c.series_id, func.min(b)]
    for w in windows:
        inside = b >= (now - w) // RES_5M
        cols += [func.sum(case((inside, r5.c.vavg), else_=0.0)), func.sum(case((inside, 1), else_=0))]
    lo, hi = (now - max(windows)) // RES_5M, wm5 // RES_5M
    q1 = select(*cols).where(r5.c.series_id.in_(ids), b >= lo, b < hi, in_chunks(r5, lo, hi)).group_by(r5.c.series_id)
    folded = [(int(row[0]), int(row[1]) * RES_5M,
               [(float(row[2 + 2 * i] or 0.0), int(row[3 + 2 * i] or 0)) for i in range(len(windows))])
              for row in conn.execute(q1).all()]
    q_day = select(r5.c.series_id, b, r5.c.vavg).where(
        r5.c.series_id.in_(ids), b >= (now - day) // RES_5M, b < hi, in_chunks(r5, (now - day) // RES_5M, hi)
    ).order_by(r5.c.series_id, b)
    day_points = [(int(sid), int(bucket) * RES_5M, avg) for sid, bucket, avg in conn.execute(q_day).all()]
    store._uptime_folded = (key, (folded, day_points))
    return folded, day_points


def _hourly(store, conn, late: list[int], firsts: dict[int, int], windows: tuple[int, ...], now: int, day: int,
            wm1: int) -> dict[int, Uptimes]:
    """The hourly rollups before the 5-minute ones begin, for the series that have them (as a
    chart of the month would read). An hourly point falls in or out of a window only when the
    clock passes an hour, so this too is read once per hour or fold, not per request (a month
    of hourly rows for the demo's monitors was 60 % of /status)."""
    # ts >= now - w for hour-multiples ts and w changes when now passes k * 3600 + 1
    key = (tuple(late), tuple(firsts[sid] for sid in late), windows, (now - 1) // RES_1H, day, wm1)
    cached = getattr(store, "_uptime_hourly", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    start = now - max(windows)
    parts = {sid: Uptimes() for sid in late}
    r1 = readable(store.dialect, rollup_1h)
    h = r1.c.bucket
    q3 = select(r1.c.series_id, h, r1.c.vavg).where(
        r1.c.series_id.in_(late), h >= start // RES_1H, h < wm1 // RES_1H,
        in_chunks(r1, start // RES_1H, wm1 // RES_1H)).order_by(r1.c.series_id, h)
    for sid, bucket, avg in conn.execute(q3).all():
        if int(bucket) < firsts[int(sid)] // RES_1H:  # as history() reads up to the first finer point
            parts[int(sid)].add(int(bucket) * RES_1H, float(avg), windows, now, day)
    store._uptime_hourly = (key, parts)
    return parts
