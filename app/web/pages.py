"""The pages a person reads: overview, disks, network, power, heat pump, entities, events,
collectors and hosts. Each renders whole, or as its content block for htmx, for this host or
an agent host under /h/<host>/."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app import bay_labels, events, views
from app.ingest.agents import revoke
from app.web.site import RANGES, Checked, Page, Site
from collectors import plugins
from collectors.disks.smart import failure_stats
from collectors.plugin import DOMAINS

router = APIRouter()


def _range(value: str) -> str:
    return value if value in RANGES else "24h"


@router.get("/", response_class=HTMLResponse, name="overview")
def overview(request: Request, s: Site = Page) -> HTMLResponse:
    snap, _ = s.view(request)
    a = s.alerting_for(snap.host)
    # From memory, not the database: the overview is the page people leave open.
    firing: list[dict[str, Any]] = [{**x.__dict__, "href": None} for x in a.states.values()
                                    if x.state == "firing"] if a else []
    hosts = []
    if snap.host == s.cfg.host:  # the server's overview: every agent host, and what fires there
        for host, ha in list(s.host_alerting.items()):
            firing += [{**x.__dict__, "href": f"/h/{quote(host, safe='')}/alerts"} for x in ha.states.values()
                       if x.state == "firing"]
        hosts = [h for h in s.hosts() if h["agent"]]
    unlabelled = [d for d in views.disks(snap) if not d.get("bay")] if snap.host == s.cfg.host else []
    return s.render(request, "overview.html", ov=views.overview(snap), arrays=views.arrays(snap), firing=firing,
                    unlabelled=unlabelled, silenced_until=a.silenced_all_until() if a else None,
                    hosts=hosts)


@router.get("/disks", response_class=HTMLResponse, name="disks")
async def disks_page(request: Request, s: Site = Page) -> HTMLResponse:
    snap, _ = s.view(request)
    pulls = views.storage_pulls(snap)  # every plug-in's devices to pull (md members, ZFS, RAID ...)
    bays = [b.label for b in s.cfg.disks.bays] if snap.host == s.cfg.host else views.bays_seen(snap)
    return s.render(request, "disks.html", pulls=pulls, shelves=views.bay_map(snap, bays),
                    sections=views.sections(snap, "disks"))


@router.get("/disks/{key:path}", response_class=HTMLResponse, name="disk")
def disk_page(request: Request, key: str, range: str = "24h", s: Site = Page) -> Response:  # noqa: A002
    snap, store = s.view(request)
    disk = next((d for d in views.disks(snap) if d["key"] == key), None)
    stored = next((e for e in store.entities("disk") if e["key"] == key), None)
    if disk is None and stored is None:
        # A disk SMART does not see (behind a RAID controller, or on another Ceph node) but a
        # storage plug-in does: its own page.
        other = next((e for e in views.storage_bays(snap, placed=False) if e.get("serial") == key and e.get("entity")),
                     None)
        if other is None:
            raise HTTPException(404, f"no disk {key!r}")
        kind, ekey = other["entity"]
        base = request.scope.get("rackpulse_base", "")
        return RedirectResponse(f"{base}/entity/{quote(kind)}/{quote(ekey, safe='/:')}", status_code=303)
    changes = store.events("disk", key) + (store.events("bay", disk["bay"]) if disk and disk.get("bay") else [])
    changes.sort(key=lambda e: e["ts"], reverse=True)
    base = request.scope.get("rackpulse_base", "")
    lines = [events.describe(e, plugins(), base) for e in changes[:100]]
    # What the Disks tile and the alerts say of this disk: the same findings, judged once.
    said = [f for f in snap.findings_of("smart") if disk and f.subject == disk.get("serial")]
    return s.render(request, "disk.html", disk=disk, stored=stored, key=key, events=lines, said=said,
                    can_label=disk is not None and snap.host == s.cfg.host, csrf=s.csrf_token(request),
                    saved=request.query_params.get("saved") == "1",
                    standing=failure_stats.standing(disk["attributes"]) if disk else [],
                    attr_names={str(a["id"]): a["name"].replace("_", " ")
                                for a in ((disk or {}).get("table") or {}).get("ata", [])},
                    source=failure_stats.SOURCE,
                    range=_range(range), ranges_list=list(RANGES))


@router.post("/disks/{key:path}/bay", dependencies=[Checked])
def disk_bay_label(request: Request, key: str, label: str = Form(...), s: Site = Page) -> Response:
    """Save a label for the bay this disk sits in (this host's disks; an agent labels its own)."""
    snap, _ = s.view(request)
    disk = next((d for d in views.disks(snap) if d["key"] == key), None) if snap.host == s.cfg.host else None
    if disk is None:
        raise HTTPException(404, f"no disk {key!r} on this host")
    try:
        bay_labels.save(bay_labels.labels_file(s.cfg), disk, label, s.saved_bays)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    base = request.scope.get("rackpulse_base", "")
    return RedirectResponse(f"{base}/disks/{quote(key, safe='')}?saved=1", status_code=303)


@router.get("/entity/{kind}/{key:path}", response_class=HTMLResponse, name="entity")
def entity_page(request: Request, kind: str, key: str, range: str = "24h",  # noqa: A002
                s: Site = Page) -> HTMLResponse:
    _, store = s.view(request)
    stored = next((e for e in store.entities(kind) if e["key"] == key), None)
    if stored is None:
        raise HTTPException(404, f"no {kind} {key!r}")
    return s.render(request, "entity.html", kind=kind, key=key, stored=stored, events=store.events(kind, key),
                    charts=views.entity_charts(kind, key, stored["attrs"]), range=_range(range), ranges_list=list(RANGES))


@router.get("/collectors", response_class=HTMLResponse, name="collectors")
def collectors_page(request: Request, s: Site = Page) -> HTMLResponse:
    snap, _ = s.view(request)
    return s.render(request, "collectors.html", ov=views.overview(snap), csrf=s.csrf_token(request),
                    can_run=s.scheduler is not None and snap.host == s.cfg.host)


@router.post("/collectors/{name}/run", dependencies=[Checked])
async def collector_run_now(request: Request, name: str, s: Site = Page) -> Response:
    s.view(request)
    if s.scheduler is None or name not in s.scheduler.collectors:
        raise HTTPException(404, f"no collector {name!r}")
    await s.scheduler.run_once(name)
    return RedirectResponse(f"/collectors#{name}", status_code=303)


@router.get("/events", response_class=HTMLResponse, name="events")
def events_page(request: Request, domain: str = "", level: str = "", s: Site = Page) -> HTMLResponse:
    """Inventory changes in words, start-up bursts collapsed, filtered by domain and level."""
    _, store = s.view(request)
    base = request.scope.get("rackpulse_base", "")
    lines = events.collapse(store.events(limit=500), plugins(), base)
    domains = sorted({ln.domain for ln in lines}, key=lambda d: (DOMAINS + (d,)).index(d))
    level = level if level in events.LEVELS else ""
    return s.render(request, "events.html", lines=events.select_lines(lines, domain, level)[:200], domain=domain,
                    level=level, domains=domains, levels=events.LEVELS,
                    hosts=s.host_pages("events"))


@router.get("/hosts", response_class=HTMLResponse, name="hosts")
def hosts_page(request: Request, s: Site = Page) -> HTMLResponse:
    return s.render(request, "hosts.html", hosts=s.hosts(), csrf=s.csrf_token(request))


@router.post("/hosts/{host}/revoke", dependencies=[Checked])
def hosts_revoke(host: str, s: Site = Page) -> Response:
    if not revoke(s.engine, host):
        raise HTTPException(404, f"no live token for {host!r}")
    return RedirectResponse("/hosts", status_code=303)


def section_page(page: str, title: str) -> Any:
    """A page made of its collectors' sections (network, power, heat pump, and whatever page a
    plug-in names): served at /<page>, for this host or an agent host."""

    async def handler(request: Request, range: str = "24h", s: Site = Page) -> HTMLResponse:  # noqa: A002
        snap, _ = s.view(request)
        return s.render(request, "section_page.html", title=title, sections=views.sections(snap, page),
                        range=_range(range), ranges_list=list(RANGES))

    return handler


def section_pages() -> APIRouter:
    """A route for every page the installed plug-ins' sections name. The plug-ins are read once
    per process (collectors.plugins() is cached): one installed later is served after a restart."""
    out = APIRouter()
    for page, title in views.pages().items():
        if page != "disks":  # the disks page also draws the bay map, above its sections
            out.add_api_route(f"/{page}", section_page(page, title), methods=["GET"], response_class=HTMLResponse,
                              name=page)
    return out
