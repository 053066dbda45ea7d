"""/status: each probe's uptime over 24 hours, 7 days and 30 days, as Uptime Kuma users expect.

Public when [web] status_public is set; it then shows probe names and uptimes only, never a
probe's address or its error text (both can say more about a network than its owner wants)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app import views
from app.storage.store import Store
from app.web.sessions import COOKIE
from app.web.site import SiteDep
from collectors.findings import Monitor

router = APIRouter()
WINDOWS = (("24 h", 86400), ("7 d", 7 * 86400), ("30 d", 30 * 86400))


def uptime(store: Store, series_id: int | None, start: int, end: int) -> float | None:
    """The share of the window the probe succeeded: the mean of its success series, each stored
    point (a raw poll or a 5-minute or hourly bucket) counting for its stretch of time."""
    if series_id is None:
        return None
    points = store.history(series_id, start, end + 1)
    values = [p.vavg for p in points if p.vavg is not None]
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class StatusRow:
    name: str
    kind: str
    ok: bool
    target: str
    error: str | None
    uptime: list[float | None]  # over each of WINDOWS


def status_rows(store: Store, found: list[Monitor], now: int) -> list[StatusRow]:
    """Each monitor (every plug-in's: the probes) with its uptime over each window."""
    rows = []
    for m in found:
        sid = store.find_series(m.metric, **m.labels)
        rows.append(StatusRow(m.name, m.kind, m.ok, m.target, m.error,
                              [uptime(store, sid, now - seconds, now) for _, seconds in WINDOWS]))
    return rows


@router.get("/status", response_class=HTMLResponse, name="status")
def status_page(s: SiteDep, request: Request) -> HTMLResponse:
    snap, store = s.view(request)
    signed_in = not s.password_hash or bool(s.sessions.check(request.cookies.get(COOKIE)))
    rows = status_rows(store, views.monitors(snap), int(time.time()))
    return s.render(request, "status.html", rows=rows, windows=[w for w, _ in WINDOWS], detailed=signed_in)
