"""The chart heat pump owners compare: each day's COP against that day's mean outside
temperature. Drawn here as a small SVG (points, two axes, a title per point) rather than a
time chart: its x axis is a temperature, not a time, and it has at most a season of points."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from markupsafe import Markup

from collectors.home.heatpump.ledger import HeatpumpDay, total

W, H, LEFT, BOTTOM, TOP, RIGHT = 640, 300, 44, 36, 12, 12


def points(days: Sequence[HeatpumpDay]) -> list[tuple[str, float, float, float | None]]:
    """(date, mean outside °C, COP, booster share) for every day that has both numbers within
    what a heat pump can show (a bad stored number would stretch the axes to nothing)."""
    out = []
    for d in days:
        t = total(d.date, [d])
        if t.cop is not None and d.outside_mean is not None and -60 <= d.outside_mean <= 60 and 0 <= t.cop <= 15:
            out.append((d.date, d.outside_mean, t.cop, t.backup_share))
    return out


def _ticks(low: float, high: float, step: float) -> list[float]:
    first = math.floor(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 2) if first + i * step <= high + 1e-9]


def cop_scatter(days: Sequence[HeatpumpDay], heavy_share: float = 0.10) -> Markup | None:
    """The SVG, or None with fewer than two days to compare."""
    pts = points(days)
    if len(pts) < 2:
        return None
    x_lo = math.floor(min(p[1] for p in pts) / 5) * 5
    x_hi = max(math.ceil(max(p[1] for p in pts) / 5) * 5, x_lo + 5)
    y_hi = max(math.ceil(max(p[2] for p in pts)), 1)

    def x(v: float) -> float:
        return LEFT + (v - x_lo) / (x_hi - x_lo) * (W - LEFT - RIGHT)

    def y(v: float) -> float:
        return H - BOTTOM - v / y_hi * (H - BOTTOM - TOP)

    parts = [f'<svg class="scatter" viewBox="0 0 {W} {H}" role="img" aria-labelledby="cop-scatter-title">',
             '<title id="cop-scatter-title">Daily COP against the day\'s mean outside temperature</title>',
             f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}"/>',
             f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}"/>']
    for tx in _ticks(x_lo, x_hi, 5):
        parts.append(f'<text x="{x(tx):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{tx:g}</text>')
    for ty in _ticks(0, y_hi, 1):
        parts.append(f'<line class="grid" x1="{LEFT}" y1="{y(ty):.1f}" x2="{W - RIGHT}" y2="{y(ty):.1f}"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y(ty) + 4:.1f}" text-anchor="end">{ty:g}</text>')
    parts.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 4}" text-anchor="middle">mean outside °C</text>')
    for date, temp, cop, share in pts:
        heavy = share is not None and share > heavy_share
        label = f"{date}: COP {cop:g} at {temp:g} °C" + (f", booster {share:.0%} of the heat" if share else "")
        parts.append(f'<circle class="{"heavy" if heavy else "day"}" cx="{x(temp):.1f}" cy="{y(cop):.1f}" r="5">'
                     f'<title>{escape(label)}</title></circle>')
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - built here from numbers and escaped dates
