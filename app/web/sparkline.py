"""A row's last 24 hours at a glance: a small line drawn on the server as inline SVG.

A table of a dozen guests with a chart each would ask the server for a dozen series every time
the page is opened, and draw them in the browser; a sparkline is read from the 5-minute rollups
once every five minutes (they change no faster) and sent with the row, so the live update and a
browser without JavaScript show it the same. Its label says in words what the line shows (the
peak and the latest value: a guest stopped since keeps its last line), for a screen reader and for a tooltip."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from app.storage.base import RES_5M, Point
from app.storage.samples import per_second, thin
from app.views import chart_unit

SPAN = 86400  # what a sparkline shows: the last 24 hours
POINTS = 60  # 24 minutes each, 2 px apart: enough for a day's shape, small in every live update
READ = 300  # read at the 5-minute rollups' resolution (288 a day), then thinned to POINTS
KEEP = RES_5M  # seconds a drawn line is kept: the 5-minute rollups change no faster
WIDTH, HEIGHT = 120, 24

_lock = threading.Lock()
_kept: dict[tuple[int, str, str, tuple[tuple[str, str], ...], bool], tuple[float, Markup]] = {}


def segments(points: Sequence[Point], gap: float) -> list[list[Point]]:
    """The points in runs with no hole wider than ``gap`` seconds: a guest that was stopped for an
    hour has no line there, not a straight one across the hour."""
    runs: list[list[Point]] = []
    for p in points:
        if runs and p.ts - runs[-1][-1].ts <= gap:
            runs[-1].append(p)
        else:
            runs.append([p])
    return runs


def words(metric: str, value: float, rate: bool = False) -> str:
    """A value in the unit of its chart: 0.41 of a ratio is "41 %", 2.1e9 bytes "2.1 GB"."""
    u = chart_unit(metric, rate)
    v = value * u.scale
    if u.si:
        for prefix, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
            if abs(v) >= size:
                return f"{v / size:.1f} {prefix}{u.unit}"
    return f"{v:.0f} {u.unit}".rstrip() if abs(v) >= 10 or v == 0 else f"{v:.1f} {u.unit}".rstrip()


def draw(points: Sequence[Point], start: int, end: int, title: str, metric: str, rate: bool = False) -> Markup:
    """The SVG of ``points`` between ``start`` and ``end``: the average's line from zero up to its
    highest (a CPU at 3 % looks low, not like a mountain), its label in words with the peak of
    every sample (a spike inside a quarter of an hour is said, though the line shows its mean)."""
    if not points:
        return Markup("")
    top = max(p.vavg for p in points)
    peak = max(p.vmax for p in points)  # a spike inside a quarter of an hour is said, if not drawn
    scale = (HEIGHT - 2) / top if top > 0 else 0.0
    span = max(1, end - start)
    steps = sorted(b.ts - a.ts for a, b in zip(points, points[1:], strict=False))
    usual = steps[len(steps) // 2] if steps else RES_5M
    lines = []
    for run in segments(points, gap=3 * max(RES_5M, usual)):
        xy = " ".join(f"{(p.ts - start) * WIDTH / span:.0f},{HEIGHT - 1 - p.vavg * scale:.0f}" for p in run)
        lines.append(f'<polyline points="{xy}"/>' if len(run) > 1 else
                     f'<circle cx="{xy.split(",")[0]}" cy="{xy.split(",")[1]}" r="1"/>')
    label = f"{title}, last 24 h: peak {words(metric, peak, rate)}, latest {words(metric, points[-1].vavg, rate)}"
    return Markup(f'<svg class="spark" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
                  f'role="img" aria-label="{escape(label)}"><title>{escape(label)}</title>{"".join(lines)}</svg>')


class Sparks:
    """What a template calls: ``spark(metric, labels, title)`` for one host's store."""

    def __init__(self, store: Any, clock: Any = time.time) -> None:
        self.store, self.clock = store, clock

    def __call__(self, metric: str, labels: Mapping[str, object], title: str, rate: bool = False) -> Markup:
        pairs = tuple(sorted((k, str(v)) for k, v in labels.items()))
        key = (id(self.store.engine), self.store.host, metric, pairs, rate)
        now = self.clock()
        with _lock:
            hit = _kept.get(key)
        if hit is not None and now - hit[0] < KEEP:
            return hit[1]
        sid = self.store.find_series(metric, **dict(pairs))
        end = int(now)
        pts = thin(self.store.history(sid, end - SPAN, end + 1, max_points=READ), POINTS) if sid is not None else []
        svg = draw(per_second(pts) if rate else pts, end - SPAN, end, title, metric, rate)
        with _lock:
            if len(_kept) > 4096:  # guests come and go; a server running for a year keeps no more
                _kept.clear()
            _kept[key] = (now, svg)
        return svg
