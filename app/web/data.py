"""/data: is the data safe? Each data set with where it lives, the redundancy left under it, every
copy that covers it and what losing the array or the building would cost (app/data/)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse

from app import views
from app.data.copies import Copy
from app.data.verdict import Verdict
from app.runtime import DATA_TICK
from app.views import BAD, OK, WARN, TileView
from app.web.site import Site, SiteDep
from collectors.proxmoxapi import age

router = APIRouter()
LEVEL = {"critical": BAD, "warning": WARN, None: OK}


@dataclass(frozen=True)
class CopyRow:
    label: str
    newest: str  # "2 h ago", "none yet", "not known: wrong password"
    level: str  # ok, or warning when older than the set's max_age
    where: str  # "off site", "on this site", "on the same array"
    check: str  # "sound, 3 days ago", "errors found", ""
    note: str


def copy_row(c: Copy, max_age: float, now: float) -> CopyRow:
    if c.error:
        newest, level = f"not known: {c.error}", WARN
    elif c.newest is None:
        newest, level = "none yet", WARN
    else:
        newest, level = f"{age(now - c.newest)} ago", OK if now - c.newest <= max_age else WARN
    where = "on the same array (lost with it)" if c.same_array else "off site" if c.offsite else "on site"
    check = "" if c.check_ok is None else "sound" if c.check_ok else "errors found"
    if check and c.checked is not None:
        check += f", {age(now - c.checked)} ago"
    kept = f"{c.count} kept" if c.count else ""
    return CopyRow(c.label, newest, level, where, check, ", ".join(x for x in (c.note, kept) if x))


async def verdicts(s: Site) -> list[Verdict]:
    """The runtime's verdicts, judged again here when older than its own tick (a server without
    a scheduler, a page asked for before the first tick)."""
    rt = s.runtime
    if time.time() - rt.data.judged_at > DATA_TICK:
        await run_in_threadpool(rt.data_tick)
    return rt.data.verdicts


def data_tile(s: Site) -> TileView | None:
    """The overview's Data tile: the worst set, in the words of its alert."""
    vs = s.runtime.data.verdicts
    if not vs:
        return None
    levels = {v.set.name: LEVEL[s.runtime.data.level_of(v.set.name)] for v in vs}
    bad = [v for v in vs if levels[v.set.name] != OK]
    bad.sort(key=lambda v: levels[v.set.name] != BAD)
    if bad:
        v = bad[0]
        state = "at risk" if levels[v.set.name] == BAD else "not protected"
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        return TileView("Data", "/data", levels[v.set.name], f"{v.set.name} is {state}{more}: {'; '.join(v.reasons)}",
                        tuple(f"data:{x.set.name}" for x in bad))
    n = len(vs)
    return TileView("Data", "/data", OK, f"{n} data set{'s' if n != 1 else ''}, each with a fresh copy off its array")


@router.get("/data", response_class=HTMLResponse, name="data")
async def data_page(s: SiteDep, request: Request) -> HTMLResponse:
    snap, _ = s.view(request)
    if snap.host != s.cfg.host:  # an agent host's sets are judged on the agent's own server
        return s.render(request, "data.html", sets=[], agent=True, discovered=False)
    now = time.time()
    out = []
    for v in await verdicts(s):
        level = LEVEL[s.runtime.data.level_of(v.set.name)]
        out.append({"v": v, "level": level, "rows": [copy_row(c, v.set.max_age, now) for c in v.copies],
                    "limit": age(v.set.max_age)})
    return s.render(request, "data.html", sets=out, agent=False, discovered=s.runtime.data.discovered)


def with_data(s: Site, ov: views.Overview, host: str) -> views.Overview:
    """This server's overview with its Data tile (an agent host's sets are not judged here)."""
    tile = data_tile(s) if host == s.cfg.host else None
    if tile is None:
        return ov
    return replace(ov, tiles=[*ov.tiles, tile], overall=views.worst([ov.overall, tile.level]))
