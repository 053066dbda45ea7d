"""/disks/all (every disk of every host, sortable, filterable, as CSV) and a disk's self-test
started from its page (this host's disks; an agent's are started on the agent with
`rackpulse smart-test`)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from app.disks import disk_notes
from app.disks.disks_table import SORTS, DiskRow, as_csv, rows_of, table
from app.disks.replacement import plan
from app.storage.store import Store
from app.web import error_pages
from app.web.site import Checked, Site, SiteDep
from collectors import plugins
from collectors.base import CollectorError
from collectors.disks.mdraid.state import MdraidState
from collectors.disks.smart.collector import SmartCollector
from collectors.disks.smart.state import SmartState
from collectors.state import State

router = APIRouter()


def all_rows(s: SiteDep) -> list[DiskRow]:
    plugin = plugins().get("smart")
    if plugin is None:
        return []
    hosts = [(s.cfg.host, s.snap, "")]
    hosts += [(h, snap, f"/h/{quote(h, safe='')}") for h, snap in sorted(s.agents.snapshots.items())]
    rows: list[DiskRow] = []
    for host, snap, base in hosts:
        state = plugin.typed(snap.states.get("smart"))
        rows += rows_of(host, state if isinstance(state, SmartState) else None, base)
    return rows


def _picked(s: SiteDep, sort: str, order: str, attention: str, q: str) -> list[DiskRow]:
    desc = None if order not in ("asc", "desc") else order == "desc"
    return table(all_rows(s), sort if sort in SORTS else "health", desc, attention == "1", q[:100])


@router.get("/disks/all", response_class=HTMLResponse)
def disks_all(s: SiteDep, request: Request, sort: str = "health", order: str = "", attention: str = "",
              q: str = "") -> Response:
    everything = all_rows(s)
    desc = None if order not in ("asc", "desc") else order == "desc"
    rows = table(everything, sort if sort in SORTS else "health", desc, attention == "1", q[:100])
    return s.render(request, "disks_all.html", rows=rows, total=len(everything),
                    hosts=len({r.host for r in everything}), needing=sum(r.attention for r in everything),
                    sort=sort if sort in SORTS else "health", order=order, attention=attention == "1", q=q[:100],
                    sorts=list(SORTS))


@router.get("/disks/all.csv")
def disks_all_csv(s: SiteDep, sort: str = "health", order: str = "", attention: str = "", q: str = "") -> Response:
    body = as_csv(_picked(s, sort, order, attention, q))
    return PlainTextResponse(body, media_type="text/csv; charset=utf-8",
                             headers={"Content-Disposition": 'attachment; filename="disks.csv"'})


@router.post("/disks/{key:path}/selftest", dependencies=[Checked])
async def start_selftest(s: SiteDep, request: Request, key: str, kind: str = Form(...)) -> Response:
    """The disk page's button: the same checks as the schedule's (busy array, sleeping disk, a test
    already running), the reason shown on the page when it refuses."""
    if request.scope.get("rackpulse_host") not in (None, s.cfg.host):
        raise HTTPException(404, "an agent's disk is tested on the agent: rackpulse smart-test SERIAL")
    sched = s.runtime.scheduler
    coll = sched.collectors.get("smart") if sched else None
    if not isinstance(coll, SmartCollector):
        raise HTTPException(404, "the smart collector does not run on this host")
    try:
        said = await run_in_threadpool(coll.start_test, key, kind)
    except CollectorError as exc:
        said = str(exc)
    return RedirectResponse(f"/disks/{quote(key, safe='')}?selftest={quote(said)}", status_code=303)


@router.get("/disks/{key:path}/replace", response_class=HTMLResponse)
def replace_page(s: SiteDep, request: Request, key: str) -> Response:
    """What to order, which bay, each array's state and rebuild estimate, the commands to type."""
    snap, store = s.view(request)
    states: dict[str, State | None] = {
        name: plugins()[name].typed(snap.states.get(name)) for name in ("smart", "mdraid", "zfs", "megaraid")
        if name in plugins() and snap.states.get(name) is not None}
    found = plan(key, states)
    if found is None:
        rebuilding = _rebuilding_onto_successor(states.get("mdraid"), store, key)
        if rebuilding is not None:
            return s.render(request, "replaced.html", key=key, **rebuilding)
        return _moved_on(s, request, store, key)
    return s.render(request, "replace.html", r=found, key=key)


def _rebuilding_onto_successor(md: State | None, store: Store, key: str) -> dict[str, object] | None:
    """The last step of a replacement: the disk is out, the one in its bay now is what its array
    rebuilds onto. The replacement page stays while it runs (the old disk is kept until then), not a 404."""
    bay, successor = _bay_and_successor(store, key)
    if not bay or not successor or successor == key or not isinstance(md, MdraidState):
        return None
    for a in md.arrays:
        member = next((m for m in a.members if m.bay == bay and m.state in ("rebuilding", "spare", "replacement")), None)
        if member is not None and (a.sync_action in ("recovery", "resync") or a.degraded):
            return {"bay": bay, "successor": successor, "array": a, "member": member}
    return None


def _bay_and_successor(store: Store, key: str) -> tuple[str, str]:
    """The bay a disk was last seen in, and the serial of the disk that bay holds now ("" for none)."""
    gone = store.entity("disk", key)
    bay = str(gone["attrs"].get("bay") or "") if gone else ""
    now = store.entity("bay", bay) if bay else None
    return bay, str(now["attrs"].get("serial") or "") if now else ""


def _moved_on(s: Site, request: Request, store: Store, key: str) -> Response:
    """A disk no longer reported (pulled, or replaced and its array whole again): the bay it was
    last seen in and what that bay holds now, not a bare 404."""
    bay, successor = _bay_and_successor(store, key)
    base = request.scope.get("rackpulse_base", "")
    said = f"no disk {key!r} in a disk, array, pool or controller this host reports"
    links: list[tuple[str, str]] = []
    if bay:
        said += f"; it was last seen in {bay}"
        if successor and successor != key:
            said += f", which holds {successor} now"
            links.append((f"Disk {successor}, in {bay} now", f"{base}/disks/{quote(successor, safe='')}"))
        links.append((f"Disk {key}: its history", f"{base}/disks/{quote(key, safe='')}"))
    if not error_pages.wants_html(request):
        raise HTTPException(404, said)
    return error_pages.page(s, request, 404, said, links=links)


@router.post("/disks/{key:path}/notes", dependencies=[Checked])
async def save_notes(s: SiteDep, request: Request, key: str) -> Response:
    """The disk page's notes: purchase date, warranty end, RMA number, free text."""
    if request.scope.get("rackpulse_host") not in (None, s.cfg.host):
        raise HTTPException(404, "an agent's disks keep their notes on the agent's own server page")
    form = await request.form()
    sent = {f: str(form.get(f) or "") for f in disk_notes.FIELDS}
    try:
        await run_in_threadpool(disk_notes.save, disk_notes.notes_file(s.cfg), key, sent)
    except ValueError as exc:
        from app.web.pages import render_detail  # the disk's page, drawn as its own route draws it

        detail = plugins()["smart"].pages.detail
        if detail is None:  # a smart plug-in without its disk page: the refusal alone
            raise HTTPException(400, str(exc)) from None
        return render_detail("smart", detail, s, request, key, status=400, notes_refused=str(exc), notes=sent)
    return RedirectResponse(f"/disks/{quote(key, safe='')}?saved=1#notes", status_code=303)
