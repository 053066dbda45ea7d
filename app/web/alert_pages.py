"""The alerts page, acknowledging and silencing, and the alerts API, per host."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.web.site import Checked, Page, Site

router = APIRouter()


@router.get("/alerts", response_class=HTMLResponse, name="alerts")
def alerts_page(request: Request, s: Site = Page) -> HTMLResponse:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    return s.render(request, "alerts.html", al=a.view() if a else None, csrf=s.csrf_token(request))


@router.post("/alerts/ack", dependencies=[Checked])
def alerts_ack(request: Request, rule: str = Form(...), subject: str = Form(...), s: Site = Page) -> Response:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    if a is None or not a.ack(rule, subject):
        raise HTTPException(404, "no such firing alert")
    return RedirectResponse("/alerts", status_code=303)


@router.post("/alerts/silence", dependencies=[Checked])
def alerts_silence(request: Request, rule: str = Form(""), subject: str = Form(""), hours: float = Form(4.0),
                   reason: str = Form(""), s: Site = Page) -> Response:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    if a is None or not (0 < hours <= 24 * 90):
        raise HTTPException(400, "alerts disabled, or hours out of range")
    a.silence(rule or None, subject or None, hours, reason)
    return RedirectResponse("/alerts", status_code=303)


@router.get("/api/alerts")
def api_alerts(request: Request, s: Site = Page) -> dict[str, Any]:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    return a.view() if a else {"active": [], "history": [], "outbox": [], "silences": []}
