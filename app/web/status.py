"""/status: each probe's uptime over 24 hours, 7 days and 30 days, as Uptime Kuma users expect.

Public when [web] status_public is set; it then shows probe names and uptimes only, never a
probe's address or its error text (both can say more about a network than its owner wants)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.storage.store import Store
from app.web.sessions import COOKIE
from app.web.site import Page, Site
from collectors.findings import items

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


def probe_rows(store: Store, state: dict[str, Any], now: int) -> list[dict[str, Any]]:
    rows = []
    for p in items(state, "probes") if state else []:
        sid = store.find_series("rackpulse_probe_success", probe=p["name"], kind=p["kind"])
        rows.append({"name": p["name"], "kind": p["kind"], "ok": p["ok"], "target": p["target"], "error": p.get("error"),
                     "uptime": [uptime(store, sid, now - seconds, now) for _, seconds in WINDOWS]})
    return rows


@router.get("/status", response_class=HTMLResponse, name="status")
def status_page(request: Request, s: Site = Page) -> HTMLResponse:
    snap, store = s.view(request)
    signed_in = not s.password_hash or bool(s.sessions.check(request.cookies.get(COOKIE)))
    rows = probe_rows(store, snap.states.get("probes") or {}, int(time.time()))
    return s.render(request, "status.html", rows=rows, windows=[w for w, _ in WINDOWS], detailed=signed_in)
