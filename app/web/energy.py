"""/energy and /api/v1/energy: the lab's power bill. One report (app/energy/ledger.py) feeds both,
so the page and a script read the same figure to the cent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from markupsafe import Markup, escape
from pydantic import BaseModel

from app.energy import ledger
from app.energy.bill import SourceBill, Tally
from app.energy.chart import BOTTOM, HEIGHT, LEFT, RANGES, WIDTH, Stack, since, stack
from app.energy.config import EnergyConfig
from app.energy.ledger import EnergyReport, hourly_by_source, report, report_since
from app.energy.reading import Reading, SeriesStore
from app.web.api_v1 import ERRORS
from app.web.site import SiteDep

router = APIRouter()
Range = Literal["24h", "30d", "12mo"]


class Period(BaseModel):
    kwh: float
    cost: float


class SourceOut(BaseModel):
    source: str
    inside: str | None  # the source that already counts this one's energy
    watts: float | None  # now; None when it reports no power or is silent
    reports_power: bool  # False: a counter only (the heat pump's whole kWh), so no draw "now"
    today: Period
    month: Period
    last_month: Period
    share: float | None  # of the lab's energy this month; None for a source inside another


class EnergyOut(BaseModel):
    currency: str
    lab: SourceOut
    sources: list[SourceOut]
    projected_month_cost: float
    monthly_budget: float | None


def _period(t: Tally) -> Period:
    return Period(kwh=round(t.kwh, 3), cost=round(t.cost, 2))


def _source(b: SourceBill, r: EnergyReport) -> SourceOut:
    lab = b.source == "lab" and b is r.lab
    watts = (round(sum(r.watts.get(s.source, 0.0) for s in r.sources if s.inside is None), 1) if lab
             else r.watts.get(b.source))
    return SourceOut(source=b.source, inside=b.inside, watts=watts, reports_power=lab or b.source in r.with_power,
                     today=_period(b.today), month=_period(b.month),
                     last_month=_period(b.last_month), share=1.0 if lab else r.shares.get(b.source))


def energy_out(r: EnergyReport) -> EnergyOut:
    return EnergyOut(currency=r.currency, lab=_source(r.lab, r), sources=[_source(b, r) for b in r.sources],
                     projected_month_cost=round(r.projected, 2), monthly_budget=r.budget)


class SourceSeries(BaseModel):
    source: str
    kwh: list[float]  # per period, as `periods`


class EnergyHistoryOut(BaseModel):
    range: Range
    periods: list[str]  # each period's start, local time (ISO 8601 with its offset)
    sources: list[SourceSeries]  # the sources not inside another, most energy first
    total: list[float]  # kWh per period, the lab's


async def _report(s: Any, request: Request) -> EnergyOut:
    snap, store = s.view(request)
    r = await run_in_threadpool(report, store, dict(snap.samples), s.cfg.energy)
    return energy_out(r)


def _stack(store: SeriesStore, cfg: EnergyConfig, range_: str) -> Stack:
    now = ledger.clock()
    tz = cfg.zone()
    return stack(hourly_by_source(store, since(range_, now, tz), now), cfg.inside, range_, now, tz)


def table_and_chart(store: SeriesStore, samples: Mapping[str, Sequence[Reading]], cfg: EnergyConfig,
                    range_: str) -> tuple[EnergyReport, Stack]:
    """The page's table and chart from one read of the hours: from whichever starts first."""
    now = ledger.clock()
    tz = cfg.zone()
    first = since(range_, now, tz)
    hours = hourly_by_source(store, min(first, report_since(now, cfg)), now)
    return report(store, samples, cfg, now, hours), stack(hours, cfg.inside, range_, now, tz)


def bands_svg(st: Stack) -> Markup:
    """The chart's bands as SVG, written here rather than by the template: a 30-day chart of five
    sources is 150 bands of eight values each, and Jinja's escaping of every one was most of the
    page's cost (7.4 ms a view on the demo, measured with bench/page_cpu.py)."""
    out = []
    for b in st.bands:
        src = escape(b.source)
        out.append(f'<rect class="src-{b.colour}" x="{b.x}" y="{b.y}" width="{b.width}" height="{b.height}" '
                   f'data-source="{src}" data-kwh="{b.kwh:.3f}"><title>{src}: {b.kwh:.2f}&nbsp;kWh</title></rect>\n')
    return Markup("".join(out))  # noqa: S704 - each value formatted or escaped above


async def _history(s: Any, request: Request, range_: str) -> Stack:
    _snap, store = s.view(request)
    return await run_in_threadpool(_stack, store, s.cfg.energy, range_)


@router.get("/api/v1/energy/history", tags=["v1"], responses=ERRORS)
async def energy_history_api(s: SiteDep, request: Request, range: Range = "30d") -> EnergyHistoryOut:  # noqa: A002
    """The lab's kWh per hour (24h), per day (30d) or per month (12mo), by source: the stacked chart
    of /energy. Sources inside another (the servers behind the UPS) are in the one that holds them."""
    st = await _history(s, request, range)
    return EnergyHistoryOut(range=range, periods=[p.isoformat() for p in st.starts],
                            sources=[SourceSeries(source=src, kwh=[round(v, 3) for v in st.kwh[src]])
                                     for src in st.sources],
                            total=[round(v, 3) for v in st.totals])


@router.get("/api/v1/energy", tags=["v1"], responses=ERRORS)
async def energy_api(s: SiteDep, request: Request) -> EnergyOut:
    """Every source's energy today, this month and last month, its cost, and the lab's (each source
    counted once), with the month's projected bill."""
    return await _report(s, request)


@router.get("/energy", response_class=HTMLResponse, name="energy")
async def energy_page(s: SiteDep, request: Request, range: Range = "30d") -> HTMLResponse:  # noqa: A002
    snap, store = s.view(request)
    r, chart = await run_in_threadpool(table_and_chart, store, dict(snap.samples), s.cfg.energy, range)
    return s.render(request, "energy.html", title="Energy", e=energy_out(r), chart=chart, bands=bands_svg(chart),
                    ranges=RANGES, geometry={"width": WIDTH, "height": HEIGHT, "left": LEFT, "bottom": BOTTOM})
