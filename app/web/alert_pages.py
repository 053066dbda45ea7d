"""The alerts page, acknowledging and silencing, and the alerts API, per host."""

from __future__ import annotations

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.alerting.records import AlertsView
from app.web.site import Checked, SiteDep

router = APIRouter()


# How long a silence lasts, as the form offers it.
DURATIONS = {"30m": 0.5, "1h": 1.0, "4h": 4.0, "12h": 12.0, "1d": 24.0, "3d": 72.0, "7d": 168.0, "30d": 720.0}
SEVERITIES = ("critical", "warning", "info")


@router.get("/alerts", response_class=HTMLResponse, name="alerts")
def alerts_page(s: SiteDep, request: Request, rule: str = "", severity: str = "") -> HTMLResponse:
    return _render(s, request, rule, severity)


def _render(s: SiteDep, request: Request, rule: str = "", severity: str = "", **extra: object) -> HTMLResponse:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    severity = severity if severity in SEVERITIES else ""
    hosts = s.host_pages("alerts")
    return s.render(request, "alerts.html", al=a.view(rule=rule, severity=severity) if a else None,
                    csrf=s.csrf_token(request), rule=rule, severity=severity, severities=SEVERITIES,
                    durations=list(DURATIONS), hosts=hosts, this_host=snap.host, **extra)


def _back(request: Request) -> str:
    return request.scope.get("rackpulse_base", "") + "/alerts"


@router.post("/alerts/ack", dependencies=[Checked])
def alerts_ack(s: SiteDep, request: Request, rule: str = Form(...), subject: str = Form(...),
               note: str = Form("")) -> Response:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    if a is None or not a.ack(rule, subject, note=note.strip()[:500]):
        raise HTTPException(404, "no such firing alert")
    return RedirectResponse(_back(request), status_code=303)


@router.post("/alerts/silence", dependencies=[Checked])
def alerts_silence(s: SiteDep, request: Request, rule: str = Form(""), subject: str = Form(""),
                   duration: str = Form(""), hours: float = Form(4.0), reason: str = Form(""),
                   confirm: str = Form("")) -> Response:
    """A silence for this page's host, matching a rule and a subject (exactly, or a pattern
    such as "md*"; empty for any), for a chosen duration."""
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)

    def refused(why: str) -> HTMLResponse:
        # the page again with the form open, the refusal in it and what was typed kept
        # (cut to what the form's fields take: a refused 300 KB pattern is not sent back)
        sent = {"rule": rule[:200], "subject": subject[:200], "duration": duration, "reason": reason[:500]}
        page = _render(s, request, silence_refused=why, silence_sent=sent)
        page.status_code = 400
        return page

    if duration:
        if duration not in DURATIONS:
            return refused(f"a silence lasts one of {', '.join(DURATIONS)}")
        hours = DURATIONS[duration]
    if a is None:
        raise HTTPException(404, "alerts are off for this host ([alerts] enabled = false)")
    if not (0 < hours <= 24 * 90):
        return refused("a silence lasts more than nothing and at most 90 days")
    try:
        a.silence(rule.strip() or None, subject.strip() or None, hours, reason.strip()[:500],
                  everything=confirm.strip().lower() == "all")
    except ValueError as exc:
        return refused(str(exc))
    return RedirectResponse(_back(request), status_code=303)


@router.post("/alerts/silence/{silence_id}/expire", dependencies=[Checked])
def alerts_expire(s: SiteDep, request: Request, silence_id: int) -> Response:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    if a is None or not a.expire(silence_id):
        raise HTTPException(404, "no such silence in force")
    return RedirectResponse(_back(request), status_code=303)


@router.post("/alerts/channels/{name}/test", dependencies=[Checked])
def alerts_try_channel(s: SiteDep, request: Request, name: str) -> Response:
    """Send a test notification on one channel now; the page shows what the service answered."""
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    if a is None or name not in a.channels:
        raise HTTPException(404, "no such channel")
    a.try_channel(name)
    return RedirectResponse(_back(request), status_code=303)


@router.get("/api/alerts")
def api_alerts(s: SiteDep, request: Request) -> AlertsView:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    return a.view() if a else AlertsView()
