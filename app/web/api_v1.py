"""The API, version 1: everything the pages do, for scripts (Ansible, Home Assistant, cron).

This host's under /api/v1/...; an agent host's under /h/<host>/api/v1/... (as its pages are).
Reads need a session or a read token; changes an admin's session (with its X-CSRF-Token
header) or a write token (no CSRF: a script's header is not something a forged page can
send). Errors always have one shape: {"error": {"status": 404, "message": "..."}}.
"""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Body, Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from app import views
from app.alerting.records import ActiveAlert, Silence
from app.alerting.service import Alerting
from app.alerting.silences import matches_all
from app.disks import disk_notes
from app.people import audit
from app.people.users import UserError
from app.storage.inventory import StoredEvent
from app.web import api
from app.web.alert_pages import DURATIONS
from app.web.api_models import (
    Acked,
    BayLabelSaved,
    DiskNotes,
    ErrorBody,
    Expired,
    HostOut,
    Removed,
    Revoked,
    Series,
    SilenceMade,
    Tile,
    TokenOut,
    UserMade,
    UserOut,
    WhoAmI,
)
from app.web.data import with_data
from app.web.permissions import Admins
from app.web.site import Site, SiteDep, csrf_ok, principal

# Every error has one shape (app/web/app.py: install_api_errors); /openapi.json says so on every route.
ERRORS: dict[int | str, dict[str, object]] = {
    code: {"model": ErrorBody, "description": why} for code, why in (
        (400, "the request cannot be done as asked"), (401, "no session, token or proxy user"),
        (403, "not allowed for this role or scope, or a browser's change without its CSRF token"),
        (404, "no such thing on this host"), (422, "a parameter or the body is not understood"),
        (429, "too many requests: wait the Retry-After seconds"))}
router = APIRouter(prefix="/api/v1", tags=["v1"], responses=ERRORS)


def api_checked(s: SiteDep, request: Request) -> None:
    """A change through the API: a token needs nothing more; a browser's session must send
    its page's CSRF token in X-CSRF-Token."""
    if not csrf_ok(s, request, request.headers.get("x-csrf-token")):
        raise HTTPException(403, "a change from a browser session needs its CSRF token in X-CSRF-Token")


Changes = Depends(api_checked)


def _alerting(s: Site, request: Request) -> Alerting:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    if a is None:
        raise HTTPException(404, "alerts are off for this host ([alerts] enabled = false)")
    return a


# -- reading ------------------------------------------------------------------------------------

@router.get("/whoami")
def whoami(request: Request) -> WhoAmI:
    """Who this request is, by what, and whether it may change things."""
    who = principal(request)
    assert who is not None
    return WhoAmI(name=who.name, role=who.role, via=who.via, may_change=who.may_change)


@router.get("/hosts")
def hosts(s: SiteDep) -> list[HostOut]:
    """This host and every agent: version, last contact, clock skew, worst state."""
    return [h.as_json() for h in s.hosts()]


@router.get("/state", response_model=api.ApiState)
async def state(s: SiteDep, request: Request) -> dict[str, object]:
    """Every plug-in's state, each of its own type (the schema below)."""
    return await api.api_state(s, request)


@router.get("/findings")
def findings(s: SiteDep, request: Request) -> list[Tile]:
    """The overview's tiles: each domain's level and, when it is not all clear, why (the same
    judgement the alerts use)."""
    snap, _ = s.view(request)
    ov = with_data(s, views.overview(snap), snap.host)
    return [Tile(title=t.title, level=t.level, reason=t.reason, href=t.href) for t in ov.tiles] + [
        Tile(title=f"collector {c.name}", level=c.level, reason=c.reason, href="/collectors")
        for c in ov.collectors if c.level != views.OK]


@router.get("/series")
def series(s: SiteDep, request: Request, metric: str, range: str = "24h",  # noqa: A002
           label: Annotated[list[str] | None, api.Query()] = None, scale: float = 1.0,
           rate: bool = False, points: Annotated[int, api.Query(ge=50, le=api.MAX_POINTS)] = api.MAX_POINTS
           ) -> Series:
    """One series over a range (1h, 6h, 24h, 7d, 30d, 1y) at the resolution that fits it, in at
    most `points` points (each the min, average and max of the buckets it stands for)."""
    return api.api_series(s, request, metric, range, label or [], scale, rate, points)


@router.get("/events")
def events(s: SiteDep, request: Request, kind: str | None = None, key: str | None = None,
           limit: int = 200) -> list[StoredEvent]:
    """Inventory changes (a disk pulled, a peer gone), newest first."""
    return list(api.api_events(s, request, kind, key, limit))


@router.get("/alerts")
def alerts(s: SiteDep, request: Request, firing: bool = True) -> list[ActiveAlert]:
    """The alerts in force (firing=false: pending and firing), each with its ack and silence."""
    active = _alerting(s, request).active()
    return [a for a in active if a.state == "firing"] if firing else active


@router.get("/silences")
def silences(s: SiteDep, request: Request) -> list[Silence]:
    """Silences in force on this host (maintenance windows among them)."""
    return _alerting(s, request).silences_in_force()


@router.get("/maintenance")
def maintenance(s: SiteDep, request: Request) -> list[Silence]:
    """One-off maintenance windows: silences of every alert of the host, in force."""
    return [x for x in _alerting(s, request).silences_in_force()
            if matches_all(x.rule, "rule") and matches_all(x.subject)]


@router.get("/audit", dependencies=[Admins])
def audit_log(s: SiteDep, limit: int = 200, actor: str = "") -> list[audit.AuditEntry]:
    """Who changed what, when, from where (admins only)."""
    return audit.entries(s.engine, min(max(limit, 1), 5000), actor)


@router.get("/users", dependencies=[Admins])
def users(s: SiteDep) -> list[UserOut]:
    """The people who log in (admins only): name, role, two-factor; never a hash."""
    return [UserOut(name=u.name, role=u.role, two_factor=u.two_factor, created=u.created) for u in s.users.all()]


@router.get("/tokens", dependencies=[Admins])
def tokens(s: SiteDep) -> list[TokenOut]:
    """API tokens (admins only): name, scope, state, last use; never the token."""
    return [TokenOut(name=t.name, owner=t.owner, scope=t.scope, state=t.state(), created=t.created,
                     expires=t.expires, last_used=t.last_used, last_address=t.last_address)
            for t in s.tokens.list()]


# -- changing -----------------------------------------------------------------------------------

class Ack(BaseModel):
    rule: str = Field(examples=["md_degraded"])
    subject: str = Field(examples=["md0"])
    note: str = Field("", max_length=500, examples=["replacing sdh, disk ordered"])


@router.post("/alerts/ack", dependencies=[Changes])
def ack(s: SiteDep, request: Request, body: Ack) -> Acked:
    """Acknowledge a firing alert, with a note: no more reminders until it resolves."""
    if not _alerting(s, request).ack(body.rule, body.subject, note=body.note.strip()):
        raise HTTPException(404, f"no firing alert {body.rule} on {body.subject!r}")
    audit.note(request, f"ack {body.rule} {body.subject}: {body.note.strip()}")
    return Acked(acked=True, rule=body.rule, subject=body.subject)


class NewSilence(BaseModel):
    rule: str = Field("", examples=["bgp_*"], description="rule name or pattern; empty: any")
    subject: str = Field("", examples=["10.0.0.2"], description="subject or pattern; empty: any")
    duration: str = Field("", examples=["4h"], description=f"one of {', '.join(DURATIONS)}; or give hours")
    hours: float = Field(4.0, gt=0, le=24 * 90)
    reason: str = Field("", max_length=500, examples=["planned reboot"])
    all: bool = Field(False, description="true to silence every alert, critical ones included")


def _hours(body: NewSilence) -> float:
    if body.duration:
        if body.duration not in DURATIONS:
            raise HTTPException(400, f"duration must be one of {', '.join(DURATIONS)}")
        return DURATIONS[body.duration]
    return body.hours


@router.post("/silences", status_code=201, dependencies=[Changes])
def silence(s: SiteDep, request: Request, body: NewSilence) -> SilenceMade:
    """Hold back this host's notifications that match, for a while."""
    hours = _hours(body)
    try:
        sid = _alerting(s, request).silence(body.rule.strip() or None, body.subject.strip() or None, hours,
                                            body.reason.strip(), everything=body.all)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    audit.note(request, f"silence {body.rule or '*'} {body.subject or '*'} for {hours:g} h: {body.reason}")
    return SilenceMade(id=sid, until=time.time() + hours * 3600)


@router.delete("/silences/{silence_id}", dependencies=[Changes])
def expire(s: SiteDep, request: Request, silence_id: int) -> Expired:
    """End a silence (or a maintenance window) now."""
    if not _alerting(s, request).expire(silence_id):
        raise HTTPException(404, f"no silence {silence_id} in force on this host")
    return Expired(expired=silence_id)


class NewWindow(BaseModel):
    hours: float = Field(1.0, gt=0, le=24 * 7, examples=[0.5])
    reason: str = Field("", max_length=500, examples=["kernel update and reboot"])


@router.post("/maintenance", status_code=201, dependencies=[Changes])
def maintenance_window(s: SiteDep, request: Request, body: NewWindow) -> SilenceMade:
    """A one-off maintenance window from now: every alert of the host is held back (they keep
    their state and are told after, if still firing). End it early with DELETE /silences/{id}."""
    try:
        sid = _alerting(s, request).silence(None, None, body.hours, body.reason.strip() or "maintenance",
                                            everything=True)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    audit.note(request, f"maintenance for {body.hours:g} h: {body.reason}")
    return SilenceMade(id=sid, until=time.time() + body.hours * 3600)


@router.delete("/maintenance/{silence_id}", dependencies=[Changes])
def end_window(s: SiteDep, request: Request, silence_id: int) -> Expired:
    """End a maintenance window now."""
    return expire(s, request, silence_id)


@router.put("/disks/{serial}/notes", dependencies=[Changes], response_model_exclude_none=True)
async def put_notes(s: SiteDep, request: Request, serial: str,
                    body: Annotated[dict[str, str], Body(examples=[{"purchased": "2024-03-01",
                                                                    "warranty_end": "2029-03-01"}])]
                    ) -> DiskNotes:
    """A disk's notes: purchase date, warranty end, RMA number, free text (the fields of the
    disk page; an empty body clears them). This server's disks; an agent's on its own server."""
    if request.scope.get("rackpulse_host") not in (None, s.cfg.host):
        raise HTTPException(404, "an agent's disks keep their notes on the agent's own server")
    try:
        saved = await run_in_threadpool(disk_notes.save, disk_notes.notes_file(s.cfg), serial,
                                        {f: str(body.get(f) or "") for f in disk_notes.FIELDS})
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    audit.note(request, f"notes of {serial}")
    return DiskNotes(**saved)


class BayLabel(BaseModel):
    label: str = Field(max_length=100, examples=["shelf 1, bay 7"])


@router.put("/disks/{serial}/bay", dependencies=[Changes], response_model_exclude_none=True)
def put_bay(s: SiteDep, request: Request, serial: str, body: BayLabel) -> BayLabelSaved:
    """Label the bay this disk sits in (by its port, slot, serial or WWN: a replacement in the
    same port gets the same label). This server's disks; an agent's on its own server."""
    from app.disks import bay_labels
    from app.web.pages import _thing
    from collectors import plugins

    snap, _ = s.view(request)
    p = plugins().get("smart")
    thing = _thing(p, p.pages.detail, snap.states.get("smart"), serial) if (
        p and p.pages.detail and snap.host == s.cfg.host) else None
    if thing is None:
        raise HTTPException(404, f"no disk {serial!r} on this host")
    try:
        saved = bay_labels.save(bay_labels.labels_file(s.cfg), thing, body.label, s.saved_bays)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    audit.note(request, f"bay of {serial}: {body.label}")
    return BayLabelSaved(**saved)


class NewUser(BaseModel):
    name: str = Field(examples=["kiosk-hallway"])
    role: str = Field("viewer", examples=["viewer"])
    password: str = Field(min_length=8)


@router.post("/users", status_code=201, dependencies=[Admins, Changes])
def add_user(s: SiteDep, request: Request, body: NewUser) -> UserMade:
    """Add a person (admins only)."""
    try:
        s.users.add(body.name, body.role, body.password)
    except UserError as exc:
        raise HTTPException(400, str(exc)) from None
    audit.note(request, f"user {body.name} ({body.role})")
    return UserMade(name=body.name, role=body.role)


class Role(BaseModel):
    role: str = Field(examples=["admin"])


@router.put("/users/{name}/role", dependencies=[Admins, Changes])
def set_role(s: SiteDep, request: Request, name: str, body: Role) -> UserMade:
    """Change a person's role; their sessions end (admins only; never the last admin)."""
    try:
        s.users.set_role(name, body.role)
    except UserError as exc:
        raise HTTPException(404 if "no user" in str(exc) else 400, str(exc)) from None
    audit.note(request, f"user {name} is {body.role}")
    return UserMade(name=name, role=body.role)


@router.delete("/users/{name}", dependencies=[Admins, Changes])
def remove_user(s: SiteDep, request: Request, name: str) -> Removed:
    """Remove a person; their sessions end (admins only; never the last admin)."""
    try:
        s.users.remove(name, other_login=bool(s.password_hash))
    except UserError as exc:
        raise HTTPException(404 if "no user" in str(exc) else 400, str(exc)) from None
    audit.note(request, f"user {name} removed")
    return Removed(removed=name)


@router.delete("/agents/{host}/token", dependencies=[Admins, Changes])
def revoke_agent(s: SiteDep, request: Request, host: str) -> Revoked:
    """Revoke an agent's token: its batches are refused from now on (re-issue on the server
    with `rackpulse agents issue HOST`)."""
    from app.ingest.agents import revoke

    if not revoke(s.engine, host):
        raise HTTPException(404, f"no live token for agent {host!r}")
    s.agents.changed()
    audit.note(request, f"agent {host} revoked")
    return Revoked(revoked=host)
