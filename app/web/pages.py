"""The pages a person reads: overview, disks, network, power, heat pump, entities, events,
collectors and hosts. Each renders whole, or as its content block for htmx, for this host or
an agent host under /h/<host>/."""

from __future__ import annotations

import logging
import time
import weakref
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app import events, views, words
from app.alerting.engine import AlertState
from app.disks import bay_labels, disk_notes
from app.disks import bays as disk_bays
from app.ingest.agents import revoke
from app.web import story_range
from app.web.data import with_data
from app.web.permissions import Admins
from app.web.site import RANGES, Checked, SiteDep
from app.words import FAILING, WARNING
from collectors import plugins
from collectors.findings import natural
from collectors.plugin import DOMAINS, CollectorPlugin, Detail
from collectors.state import Record, StateError

log = logging.getLogger("rackpulse.web")

router = APIRouter()


@router.get("/", response_class=HTMLResponse, name="overview")
async def overview(s: SiteDep, request: Request) -> HTMLResponse:
    # In the event loop: everything it reads is in memory (the agents table once read in a thread),
    # and a trip to the thread pool and back was a sixth of the page's CPU.
    snap, _ = s.view(request)
    ready = s.runtime.alerting_ready(snap.host)
    a = s.alerting_for(snap.host) if ready else await run_in_threadpool(s.alerting_for, snap.host)
    # From memory, not the database: the overview is the page people leave open.
    # (the alert, the page it links to: this host's alerts, or an agent host's)
    firing: list[tuple[AlertState, str | None]] = [(x, None) for x in a.states.values()
                                                   if x.state == "firing"] if a else []
    hosts = []
    ov = with_data(s, views.overview(snap), snap.host)
    if snap.host == s.cfg.host:  # the server's overview: every agent host, and what fires there
        for host, ha in list(s.host_alerting.items()):
            firing += [(x, f"/h/{quote(host, safe='')}/alerts") for x in ha.states.values() if x.state == "firing"]
        rows = await s.agent_rows()
        hosts = [h for h in s.hosts(own=ov, rows=rows) if h.agent]  # this host's card is not drawn: its overview once
    unlabelled = disk_bays.unlabelled(snap) if snap.host == s.cfg.host else []
    # this server's own overview only: an agent host's channels and login are the server's
    steps = await run_in_threadpool(s.steps.todo, s, snap, unlabelled) if snap.host == s.cfg.host else []
    return s.render(request, "overview.html", ov=ov, tiles=views.worst_first(ov.tiles),
                    troubled=views.worst_first([c for c in ov.collectors if c.level != views.OK]),
                    verdict=views.verdict(ov), summaries=views.summaries(snap),
                    callouts=views.callouts(firing, snap.host), steps=steps, silenced_until=a.silenced_all_until() if a else None,
                    hosts=hosts, trimmed=_recent_trim(s.runtime.size_note))


def _recent_trim(note: dict[str, object] | None) -> dict[str, object] | None:
    """What storage.max_size gave up, when it did so within the last week (kept in memory)."""
    at = note.get("at") if note else None
    return note if isinstance(at, int | float) and time.time() - at < 7 * 86400 else None


@router.get("/disks", response_class=HTMLResponse, name="disks")
async def disks_page(s: SiteDep, request: Request) -> HTMLResponse:
    snap, _ = s.view(request)
    pulls = disk_bays.storage_pulls(snap)  # every plug-in's devices to pull (md members, ZFS, RAID ...)
    bays = [b.label for b in s.cfg.disks.bays] if snap.host == s.cfg.host else disk_bays.bays_seen(snap)
    chassis = [disk_bays.Enclosure(**e.model_dump()) for e in s.cfg.disks.enclosures] if snap.host == s.cfg.host else []
    # The heat view: each bay by its disk's temperature (a hot bay is a cooling problem).
    heat = request.query_params.get("view") == "heat"
    return s.render(request, "disks.html", pulls=pulls, shelves=disk_bays.bay_map(snap, bays, chassis),
                    sections=views.sections(snap, "disks"), heat=heat, hot=s.cfg.disk_hot_celsius())


@router.get("/entity/{kind}/{key:path}", response_class=HTMLResponse, name="entity")
def entity_page(s: SiteDep, request: Request, kind: str, key: str,
                range: str = "") -> HTMLResponse:  # noqa: A002
    _, store = s.view(request)
    stored = store.entity(kind, key)
    if stored is None:
        raise HTTPException(404, f"no {kind} {key!r}")
    plugin = words.owner(kind, plugins())
    base = request.scope.get("rackpulse_base", "")
    snap, _ = s.view(request)
    range, pinned = story_range.chosen(s, request, range, subject=key)  # noqa: A001
    return s.render(request, "entity.html", kind=kind, key=key, shown_key=events.key_words(key, plugin), stored=stored,
                    noun=events.noun(kind, plugins()),
                    timeline=_array_timeline(snap, key) if kind == "md_array" else [],
                    head=words.judged(words.headline(kind, stored["attrs"], stored["present"], plugin),
                                      judged_of(s, snap, plugin, key)),
                    facts=words.facts(kind, stored["attrs"], plugin),
                    lines=[events.describe(e, plugins(), base) for e in store.events(kind, key)],
                    charts=views.entity_charts(kind, key, stored["attrs"]), range=range, ranges_list=list(RANGES),
                    **pinned)


def judged_of(s: Any, snap: Any, plugin: Any, key: str) -> list[tuple[str, str]]:
    """(level, words) of what is judged about the thing `key` now: its plug-in's findings whose
    subject it is, and the firing alerts about it (a held one too, whose source is away)."""
    if plugin is None:
        return []
    out = [(f.level, f.text) for f in snap.findings_of(plugin.name) if f.subject == key]
    alerting = s.alerting_for(snap.host)
    if alerting is not None:
        rules = {r.name for r in plugin.rules}
        out += [(FAILING if a.severity == "critical" else WARNING, a.summary) for a in list(alerting.states.values())
                if a.state == "firing" and a.subject == key and a.rule in rules]
    return out


@router.get("/collectors", response_class=HTMLResponse, name="collectors")
def collectors_page(s: SiteDep, request: Request) -> HTMLResponse:
    snap, _ = s.view(request)
    return s.render(request, "collectors.html", ov=views.overview(snap), csrf=s.csrf_token(request),
                    can_run=s.scheduler is not None and snap.host == s.cfg.host)


@router.post("/collectors/{name}/run", dependencies=[Checked])
async def collector_run_now(s: SiteDep, request: Request, name: str) -> Response:
    s.view(request)
    if s.scheduler is None or name not in s.scheduler.collectors:
        raise HTTPException(404, f"no collector {name!r}")
    await s.scheduler.run_once(name)
    return RedirectResponse(f"/collectors#{name}", status_code=303)


EVENTS_PAGE = 200  # stored events a page of /events reads: the page costs the same after a year


@router.get("/events", response_class=HTMLResponse, name="events")
def events_page(s: SiteDep, request: Request, domain: str = "", level: str = "",
                page: int = 0) -> HTMLResponse:
    """Inventory changes in words, start-up bursts collapsed, filtered by domain and level, a page
    of stored events at a time (newest first; "Older" goes back)."""
    _, store = s.view(request)
    base = request.scope.get("rackpulse_base", "")
    page = max(0, min(page, 100_000))
    read, lines = _event_page(store, page, base)
    domains = sorted({ln.domain for ln in lines}, key=lambda d: (DOMAINS + (d,)).index(d))
    level = level if level in events.LEVELS else ""
    return s.render(request, "events.html", lines=events.select_lines(lines, domain, level), domain=domain,
                    level=level, domains=domains, levels=events.LEVELS, hosts=s.host_pages("events"),
                    page=page, older=len(read) == EVENTS_PAGE)


# Per store, its pages of events in words, with the newest event id they were read at: events are
# only ever added, so a page refreshed every few seconds is read and put in words again only
# after a new one (200 events and their words were two thirds of /events).
_event_pages: weakref.WeakKeyDictionary[Any, dict[tuple[int, str], tuple[int, list[Any], list[events.EventLine]]]] = (
    weakref.WeakKeyDictionary())


def _event_page(store: Any, page: int, base: str) -> tuple[list[Any], list[events.EventLine]]:
    newest = store.newest_event()
    kept = _event_pages.setdefault(store, {})
    hit = kept.get((page, base))
    if hit is not None and hit[0] == newest:
        return hit[1], hit[2]
    read = store.events(limit=EVENTS_PAGE, offset=page * EVENTS_PAGE)
    lines = events.collapse(read, plugins(), base)
    if len(kept) > 16:  # a few pages are looked at; older ones are read again when asked
        kept.clear()
    kept[(page, base)] = (newest, read, lines)
    return read, lines


@router.get("/hosts", response_class=HTMLResponse, name="hosts")
def hosts_page(s: SiteDep, request: Request) -> HTMLResponse:
    return s.render(request, "hosts.html", hosts=s.hosts(), csrf=s.csrf_token(request))


@router.post("/hosts/{host}/revoke", dependencies=[Admins, Checked])
def hosts_revoke(s: SiteDep, host: str) -> Response:
    if not revoke(s.engine, host):
        raise HTTPException(404, f"no live token for {host!r}")
    s.agents.changed()
    return RedirectResponse("/hosts", status_code=303)


def section_page(page: str, title: str) -> Any:
    """A page made of its collectors' sections (network, power, heat pump, and whatever page a
    plug-in names): served at /<page>, for this host or an agent host."""

    async def handler(s: SiteDep, request: Request, range: str = "") -> HTMLResponse:  # noqa: A002
        snap, _ = s.view(request)
        sections = views.sections(snap, page)
        # the alerts the sections' findings raise: their start picks the range the charts open on
        raised = [(f.rule, f.subject) for sec in sections for f in snap.findings_of(sec.name) if f.rule]
        range, pinned = story_range.chosen(s, request, range, raised)  # noqa: A001
        return s.render(request, "section_page.html", title=title, sections=sections,
                        range=range, ranges_list=list(RANGES), **pinned)

    return handler


def _thing(plugin: CollectorPlugin[Any], detail: Detail[Any], state: Any, key: str) -> Record | None:
    try:
        return detail.find(plugin.typed(state), key)
    except StateError:
        return None


def detail_page(name: str, detail: Detail[Any]) -> Any:
    """A thing's own page (a disk's): what its plug-in says of it, the findings about it (the
    same its tile and alerts say), its stored entry once it is gone, its history and events."""

    def handler(s: SiteDep, request: Request, key: str, range: str = "") -> Response:  # noqa: A002
        return render_detail(name, detail, s, request, key, range)

    return handler


def render_detail(name: str, detail: Detail[Any], s: Any, request: Request, key: str, range: str = "",  # noqa: A002
                  status: int = 200, **refused: object) -> Response:
    """The thing's page; with `refused`, a form on it that was not saved (its words and what was
    typed), answered with status 400."""
    snap, store = s.view(request)
    plugin = plugins()[name]
    thing = _thing(plugin, detail, snap.states.get(name), key)
    stored = store.entity(detail.kind, key)
    base = request.scope.get("rackpulse_base", "")
    if thing is None and stored is None:
        # A disk this plug-in does not see (behind a RAID controller, or on another Ceph node)
        # but another plug-in places in a bay: that one's entity page.
        other = next((e for e in disk_bays.storage_bays(snap, placed=False) if e.serial == key and e.entity), None)
        if other is None or other.entity is None:
            raise HTTPException(404, f"no {detail.kind} {key!r}")
        kind, ekey = other.entity
        return RedirectResponse(f"{base}/entity/{quote(kind)}/{quote(ekey, safe='/:')}", status_code=303)
    bay = getattr(thing, "bay", None)
    changes = store.events_of([(detail.kind, key), *([("bay", bay)] if bay else [])], limit=100)
    lines = [events.describe(e, plugins(), base) for e in changes]
    # What the tile and the alerts say of it: the same findings, judged once.
    said = [f for f in snap.findings_of(name) if f.subject == key]
    extra = detail.view(plugin.typed(snap.states.get(name)), thing) if thing is not None else {}
    if detail.kind == "disk":
        extra = {**extra, "temp_max_30d": _max_30d(store, key)}
        if snap.host == s.cfg.host:
            extra = {**extra, **_disk_notes(s.cfg, key)}
    range, pinned = story_range.chosen(s, request, range, [(f.rule, f.subject) for f in said if f.rule],  # noqa: A001
                                       subject=key)
    page = s.render(request, f"{name}/{detail.template}", thing=thing, stored=stored, key=key, events=lines,
                    said=said, can_label=thing is not None and snap.host == s.cfg.host,
                    label_action=f"{base}/{detail.path}/{quote(key, safe='')}/bay", csrf=s.csrf_token(request),
                    saved=request.query_params.get("saved") == "1", range=range,
                    ranges_list=list(RANGES), **{**extra, **pinned, **refused})  # what was typed over what was saved
    page.status_code = status
    return page


def _array_timeline(snap: Any, array: str) -> list[Any]:
    """Every disk the bays of an md array's members have held, bay by bay: an array's life."""
    md = plugins()["mdraid"].typed(snap.states.get("mdraid")) if "mdraid" in plugins() else None
    smart = plugins()["smart"].typed(snap.states.get("smart")) if "smart" in plugins() else None
    arr = next((a for a in getattr(md, "arrays", []) if a.name == array), None)
    bays = {m.bay for m in arr.members if m.bay} if arr else set()
    stays = [st for st in getattr(smart, "bays", []) if st.bay in bays]
    # by bay as on the bay map, each bay's newest disk first
    return sorted(stays, key=lambda st: (natural(st.bay), -(st.first_seen or 0)))


def _max_30d(store: Any, key: str) -> float | None:
    """The disk's hottest over 30 days, from the stored rollups (a few dozen points)."""
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial=key)
    if sid is None:
        return None
    now = int(time.time())
    return store.highest(sid, now - 30 * 86400, now + 1)


def _disk_notes(cfg: Any, key: str) -> dict[str, object]:
    """A disk's notes (purchase, warranty, RMA) for its page; a damaged file shows none, and says so."""
    try:
        notes = disk_notes.load(disk_notes.notes_file(cfg)).get(key, {})
    except ValueError as exc:
        log.warning("disk notes not read: %s", exc)
        notes = {}
    return {"notes": notes, "warranty": disk_notes.warranty_words(notes), "can_note": True}


def bay_label(name: str, detail: Detail[Any]) -> Any:
    """Save a label for the bay a thing sits in (this host's; an agent labels its own)."""

    def handler(s: SiteDep, request: Request, key: str, label: str = Form(...)) -> Response:
        snap, _ = s.view(request)
        thing = _thing(plugins()[name], detail, snap.states.get(name), key) if snap.host == s.cfg.host else None
        if thing is None:
            raise HTTPException(404, f"no {detail.kind} {key!r} on this host")
        try:
            bay_labels.save(bay_labels.labels_file(s.cfg), thing, label, s.saved_bays)
        except ValueError as exc:
            return render_detail(name, detail, s, request, key, status=400, label_refused=str(exc),
                                 label_sent=label[:100])
        base = request.scope.get("rackpulse_base", "")
        return RedirectResponse(f"{base}/{detail.path}/{quote(key, safe='')}?saved=1", status_code=303)

    return handler


def detail_pages() -> APIRouter:
    """A route for every kind of thing a plug-in gives a page of its own (/disks/<serial>)."""
    out = APIRouter()
    for name, p in plugins().items():
        if p.pages.detail is not None:
            path = p.pages.detail.path
            out.add_api_route(f"/{path}/{{key:path}}/bay", bay_label(name, p.pages.detail), methods=["POST"],
                              dependencies=[Checked])
            out.add_api_route(f"/{path}/{{key:path}}", detail_page(name, p.pages.detail), methods=["GET"],
                              response_class=HTMLResponse, name=f"{name}_{p.pages.detail.kind}")
    return out


def section_pages() -> APIRouter:
    """A route for every page the installed plug-ins' sections name. The plug-ins are read once
    per process (collectors.plugins() is cached): one installed later is served after a restart."""
    out = APIRouter()
    for page, title in views.pages().items():
        if page != "disks":  # the disks page also draws the bay map, above its sections
            out.add_api_route(f"/{page}", section_page(page, title), methods=["GET"], response_class=HTMLResponse,
                              name=page)
    return out
