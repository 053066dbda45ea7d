"""The /energy page's stacked chart: each source's kWh per hour (the last 24 h), per day (30 d) or
per month (12 months), one bar a period with a band per source. Drawn as SVG on the server: the
figures are the ledger's hourly energy summed, so what a bar shows is what the table adds up, and
the chart needs no script (a phone, a page printed for the family's budget talk).

Only sources not inside another are stacked: the UPS's bar already holds the servers behind it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from app.energy.bill import month_start
from app.energy.hours import SourceHours, as_hours

RANGES = {"24h": "24 hours", "30d": "30 days", "12mo": "12 months"}
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 720, 240, 72, 22, 8  # the SVG's own units: it scales to the page
CHAR = 7.4  # the width of a tick label's character at the page's 13-unit font, about


@dataclass
class Band:
    source: str
    colour: int  # which of the page's source colours (CSS class src-N)
    x: float
    y: float
    width: float
    height: float
    kwh: float


@dataclass
class Stack:
    range: str
    starts: list[datetime]  # each bar's period start, local time
    sources: list[str]
    kwh: dict[str, list[float]]  # source -> kWh per bar
    bands: list[Band] = field(default_factory=list)
    ticks: list[tuple[float, str]] = field(default_factory=list)  # (y, label) of the value axis
    labels: list[tuple[float, str, str]] = field(default_factory=list)  # (x, label, anchor) under some bars
    top: float = 0.0  # kWh at the chart's top

    @property
    def totals(self) -> list[float]:
        return [sum(self.kwh[s][i] for s in self.sources) for i in range(len(self.starts))]


def since(range_: str, now: float, tz: tzinfo | None) -> float:
    """Where the range's first period starts."""
    return periods(range_, now, tz)[0].timestamp()


def periods(range_: str, now: float, tz: tzinfo | None) -> list[datetime]:
    local = datetime.fromtimestamp(now, tz)
    if range_ == "24h":
        hour = local.replace(minute=0, second=0, microsecond=0)
        # by the clock, not by adding hours to local times: a day with a clock change has 23 or 25
        return [datetime.fromtimestamp(hour.timestamp() - 3600 * i, tz) for i in range(23, -1, -1)]
    if range_ == "30d":
        day = local.replace(hour=0, minute=0, second=0, microsecond=0)
        return [day - timedelta(days=i) for i in range(29, -1, -1)]  # aware: each a local midnight
    first = month_start(local)
    out = [first]
    for _ in range(11):
        prev = out[0] - timedelta(days=1)
        out.insert(0, month_start(prev))
    return out


def stack(hourly: Mapping[str, SourceHours | Iterable[tuple[int, float]]], inside: Mapping[str, str], range_: str,
          now: float, tz: tzinfo | None) -> Stack:
    """Each counted source's hourly joules summed into the range's periods (local time)."""
    starts = periods(range_, now, tz)
    edges = [s.timestamp() for s in starts] + [now]
    hours = {s: as_hours(h) for s, h in hourly.items()}
    # a source inside one this host does not have is counted, as in the table (bill.bills)
    sources = sorted((s for s in hours if inside.get(s) not in hours), key=lambda s: -hours[s].joules(edges[0], now))
    kwh = {s: [hours[s].kwh(a, max(a, z)) for a, z in zip(edges, edges[1:], strict=False)] for s in sources}
    out = Stack(range_, starts, sources, kwh)
    draw(out)
    return out


def axis_steps(value: float, most: int = 5) -> tuple[float, float]:
    """The axis's top and its tick step for a highest bar of ``value``: a step of 1, 2 or 5 times
    a power of ten, at most ``most`` of them up to the top (25 kWh in steps of 5, not quarters of
    25: 6.25, 18.75)."""
    if value <= 0:
        return 1.0, 0.2
    step = 10.0 ** math.floor(math.log10(value / most))
    while True:
        for m in (1, 2, 5):
            if math.ceil(value / (m * step) - 1e-9) <= most:
                count = max(1, math.ceil(value / (m * step) - 1e-9))
                return count * m * step, m * step
        step *= 10


def tick_words(value: float, step: float) -> str:
    """A tick's figure with as many decimals as its step has, and its unit: "0.5 kWh", "20 kWh"."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 and value else 0
    return f"{value:.{decimals}f} kWh"


def period_label(x: float, label: str) -> tuple[float, str, str]:
    """A label centred under its bar, or held inside the chart at either edge (the last day's
    "12-01" was clipped to "12-0")."""
    half = len(label) * CHAR / 2
    if x + half > WIDTH:
        return WIDTH - 1.0, label, "end"
    if x - half < LEFT:
        return float(LEFT), label, "start"
    return x, label, "middle"


def draw(st: Stack) -> None:
    """Geometry of the bars, bands, value ticks and period labels, in the SVG's units."""
    n = len(st.starts)
    st.top, step = axis_steps(max(st.totals, default=0.0))
    plot_w, plot_h = WIDTH - LEFT, HEIGHT - BOTTOM - TOP
    slot = plot_w / n
    bar = slot * 0.78
    for i in range(n):
        y = float(TOP + plot_h)
        for c, s in enumerate(st.sources):
            v = st.kwh[s][i]
            if v <= 0:
                continue
            h = v / st.top * plot_h
            y -= h
            st.bands.append(Band(s, c % 8, round(LEFT + i * slot + (slot - bar) / 2, 1), round(y, 1), round(bar, 1),
                                 round(h, 1), v))
    for k in range(round(st.top / step) + 1):
        st.ticks.append((round(TOP + plot_h - plot_h * k * step / st.top, 1), tick_words(k * step, step)))
    every = {"24h": 3, "30d": 5, "12mo": 1}[st.range]
    # the pages' one way to write a date: 2026-12-01 14:05, a day of it 12-01 (as the charts' axes)
    fmt = {"24h": "%H:00", "30d": "%m-%d", "12mo": "%b"}[st.range]
    for i, start in enumerate(st.starts):
        if (n - 1 - i) % every == 0:
            st.labels.append(period_label(round(LEFT + i * slot + slot / 2, 1), start.strftime(fmt)))
