"""/energy and /api/v1/energy: the lab's power bill. One report (app/energy/ledger.py) feeds both,
so the page and a script read the same figure to the cent."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from app.energy.bill import SourceBill, Tally
from app.energy.ledger import EnergyReport, report
from app.web.api_v1 import ERRORS
from app.web.site import SiteDep

router = APIRouter()


class Period(BaseModel):
    kwh: float
    cost: float


class SourceOut(BaseModel):
    source: str
    inside: str | None  # the source that already counts this one's energy
    watts: float | None  # now; None when it reports no power or is silent
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
    watts = sum(r.watts.get(s.source, 0.0) for s in r.sources if s.inside is None) if lab else r.watts.get(b.source)
    return SourceOut(source=b.source, inside=b.inside, watts=watts, today=_period(b.today), month=_period(b.month),
                     last_month=_period(b.last_month), share=1.0 if lab else r.shares.get(b.source))


def energy_out(r: EnergyReport) -> EnergyOut:
    return EnergyOut(currency=r.currency, lab=_source(r.lab, r), sources=[_source(b, r) for b in r.sources],
                     projected_month_cost=round(r.projected, 2), monthly_budget=r.budget)


async def _report(s: Any, request: Request) -> EnergyOut:
    snap, store = s.view(request)
    r = await run_in_threadpool(report, store, dict(snap.samples), s.cfg.energy)
    return energy_out(r)


@router.get("/api/v1/energy", tags=["v1"], responses=ERRORS)
async def energy_api(s: SiteDep, request: Request) -> EnergyOut:
    """Every source's energy today, this month and last month, its cost, and the lab's (each source
    counted once), with the month's projected bill."""
    return await _report(s, request)


@router.get("/energy", response_class=HTMLResponse, name="energy")
async def energy_page(s: SiteDep, request: Request) -> HTMLResponse:
    return s.render(request, "energy.html", title="Energy", e=await _report(s, request))
