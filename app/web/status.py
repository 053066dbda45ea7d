"""/status: each probe's uptime over 24 hours, 7 days and 30 days, and a 90-bar timeline of its
last day, as Uptime Kuma users expect.

Uptime counts loss: a poll of an HTTP or TCP probe is up or down, a ping poll is up by the share
of its pings answered (a ping losing 30 % of its packets is 70 % up for that poll), so a lossy
link never reads 100 %. A window the data does not cover yet says how much it covers ("12 min
of data"), so a fresh install does not claim 100 % over 30 days.

Public when [web] status_public is set; it then shows probe names and uptimes only, never a
probe's address or its error text (both can say more about a network than its owner wants), and
a heartbeat only when it is `public = true`."""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from app import views
from app.storage.base import Point
from app.storage.samples import RES_5M, resolution
from app.storage.store import Store
from app.storage.uptime import find_many, uptimes
from app.web.site import SiteDep, principal
from collectors.findings import Monitor

router = APIRouter()
WINDOWS = (("24 h", 86400), ("7 d", 7 * 86400), ("30 d", 30 * 86400))
BARS, BAR_SPAN = 90, 86400  # the timeline: 90 bars over the last 24 hours (16 minutes each)
BAR_POINTS = BAR_SPAN // RES_5M  # what makes history() read 5-minute rollups for the day
FULL_UP = 0.999  # a bar is "up" at or above this share, "down" below half, "partly up" between


def up_share(p: Point, counts: str) -> float:
    """How up a stored point (a poll or a rollup of polls) was, 0..1."""
    return 1.0 - p.vavg if counts == "loss" else p.vavg


def uptime(store: Store, series_id: int | None, start: int, end: int, counts: str = "success") -> float | None:
    """The share of the window the probe was up: the mean over its stored points (a raw poll or a
    5-minute or hourly bucket, each counting for its stretch of time)."""
    if series_id is None:
        return None
    values = [up_share(p, counts) for p in store.history(series_id, start, end + 1) if p.vavg is not None]
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class Bar:
    start: int
    state: str  # up, partial, down, none (no data)
    share: float | None

    @property
    def words(self) -> str:
        when = _clock(self.start)
        if self.share is None:
            return f"{when}: no data"
        return f"{when}: {self.share * 100:.1f} % up"


@functools.lru_cache(maxsize=1024)
def _clock(ts: int) -> str:
    """A bar's start as "14:05": the same 90 for every row of a page, so worked out once."""
    return time.strftime("%H:%M", time.localtime(ts))


@dataclass(frozen=True)
class Cell:
    uptime: float | None
    covered: int | None  # seconds of data within the window when less than the window, else None

    @property
    def words(self) -> str:
        if self.uptime is None:
            return "–"
        return f"{self.uptime * 100:.2f} %"


@dataclass(frozen=True)
class StatusRow:
    name: str
    kind: str
    ok: bool
    target: str
    error: str | None
    uptime: list[float | None]  # over each of WINDOWS
    cells: list[Cell]
    bars: list[Bar]
    since: float | None  # the first data there is, when within the longest window

    @property
    def bars_html(self) -> Markup:
        """The 90 bars as one string: drawn in the template, bar by bar, they were half of the
        page's time. A state is one of four words and a title is a time and a percentage."""
        return Markup("".join(f'<i class="bar {b.state}" title="{b.words}"></i>' for b in self.bars))  # noqa: S704

    @property
    def bars_words(self) -> str:
        """The timeline for a screen reader: how many of the 90 stretches were down or lossy."""
        down = sum(b.state == "down" for b in self.bars)
        partial = sum(b.state == "partial" for b in self.bars)
        known = sum(b.state != "none" for b in self.bars)
        return (f"last 24 hours in {BARS} stretches: {known - down - partial} up, {partial} partly up, "
                f"{down} down, {BARS - known} without data")


def timeline(points: Sequence[Point], counts: str, now: int, step: int = 0) -> list[Bar]:
    """90 bars over the last day, each the mean up-share of the points within it; a rollup
    (`step` seconds from its ts) counts for the bar its middle falls in."""
    width = BAR_SPAN // BARS
    start = now - BARS * width
    sums = [[0.0, 0] for _ in range(BARS)]
    for p in points:
        i = (p.ts + step // 2 - start) // width
        if 0 <= i < BARS and p.vavg is not None:
            sums[i][0] += up_share(p, counts)
            sums[i][1] += 1
    bars = []
    for i, (total, n) in enumerate(sums):
        share = total / n if n else None
        state = "none" if share is None else "up" if share >= FULL_UP else "down" if share < 0.5 else "partial"
        bars.append(Bar(start + i * width, state, share))
    return bars


ROWS_SECONDS = 60  # how long a page's rows are reused while nothing about its monitors changed
# Per store (a host's history), so rows never outlive the store they were read from.
_rows: weakref.WeakKeyDictionary[Store, dict[tuple[object, ...], list[StatusRow]]] = weakref.WeakKeyDictionary()


def status_rows(store: Store, found: list[Monitor], now: int) -> list[StatusRow]:
    """Each monitor (every plug-in's: the probes) with its uptime over each window and its day.
    The same rows for a minute while no monitor changes (up or down, its error): the uptimes and
    the bars come from 5-minute rollups, and working out 90 bars a probe was half the page."""
    key = (now // ROWS_SECONDS,
           tuple((m.name, m.kind, m.ok, m.target, m.error, m.metric, m.counts, tuple(sorted(m.labels.items())))
                 for m in found))
    kept = _rows.setdefault(store, {})
    rows = kept.get(key)
    if rows is None:
        if len(kept) > 4:  # the public and the signed-in view of this minute: older minutes go
            kept.clear()
        rows = kept[key] = _status_rows(store, found, now)
    return rows


def _status_rows(store: Store, found: list[Monitor], now: int) -> list[StatusRow]:
    """Read for all monitors together (app/storage/uptime.py: four queries, whatever their number)."""
    ids = find_many(store, [(m.metric, dict(m.labels)) for m in found])
    figures = uptimes(store, [i for i in ids if i is not None], [w for _, w in WINDOWS], now, BAR_SPAN)
    rows = []
    for m, sid in zip(found, ids, strict=True):
        u = figures.get(sid) if sid is not None else None
        cells = []
        for _, seconds in WINDOWS:
            mean = u.mean(seconds) if u else None
            up = None if mean is None else (1.0 - mean if m.counts == "loss" else mean)
            covered = now - u.first if u and u.first is not None and u.first > now - seconds + 300 else None
            cells.append(Cell(up, covered))
        rows.append(StatusRow(m.name, m.kind, m.ok, m.target, m.error, [c.uptime for c in cells], cells,
                              timeline(u.day if u else [], m.counts, now, resolution(BAR_SPAN, BAR_POINTS)),
                              u.first if u else None))
    return rows


@router.get("/status", response_class=HTMLResponse, name="status")
def status_page(s: SiteDep, request: Request) -> HTMLResponse:
    snap, store = s.view(request)
    signed_in = principal(request) is not None
    shown = [m for m in views.monitors(snap) if m.public or signed_in]
    rows = status_rows(store, shown, int(time.time()))
    return s.render(request, "status.html", rows=rows, windows=[w for w, _ in WINDOWS], detailed=signed_in)
