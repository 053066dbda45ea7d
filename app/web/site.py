"""What every route of the web app shares: the config, this host's snapshot and store, the
agent hosts, sessions and alerting, and how a page is rendered. Routes get it through the
`site` dependency; the host a page shows (this one, or an agent's under /h/<host>/) through
`Site.view`, and a form's CSRF check through the `csrf_checked` dependency."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse

from app import views
from app.config import Config
from app.ingest.tokens import AgentRow
from app.people.api_tokens import Tokens
from app.people.users import Principal, Users
from app.runtime import Runtime
from app.snapshot import Snapshot
from app.storage.store import Store
from app.web.api_models import HostOut, Tile
from app.web.first_steps import Steps
from app.web.proxies import Proxies
from app.web.sessions import COOKIE, CSRF_COOKIE, Sessions, Throttle
from app.web.sparkline import Sparks
from app.web.templating import templates
from collectors.context import BayRules

log = logging.getLogger("rackpulse.web")
EXPOSITION_SECONDS = 10.0
RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "1y": 365 * 86400}


def _card(snap: Snapshot, ov: views.Overview | None = None) -> tuple[list[views.TileView], list[views.TileView]]:
    """A host card: its tiles, and what is wrong there, tiles and collectors both. A card is "all
    clear" only when nothing is: a collector that is down or stale is said on the card, as its
    alert (collector_down) says it. `ov`: the snapshot's overview when the caller has it already."""
    ov = ov or views.overview(snap)
    wrong = [t for t in ov.tiles if t.level not in (views.OK, views.UNKNOWN)]
    wrong += [views.TileView(f"collector {c.name}", f"/collectors#{c.name}", c.level, c.reason)
              for c in ov.collectors if c.level in (views.WARN, views.BAD)]
    return ov.tiles, wrong


def known_worst(tiles: list[views.TileView]) -> str:
    """A host's level: its worst tile, not counting tiles with nothing known yet."""
    return views.worst([t.level for t in tiles if t.level != views.UNKNOWN] or [views.OK])


@dataclass(frozen=True)
class HostCard:
    """This server or an agent host, as /hosts, the overview and /api/hosts show it."""

    host: str
    agent: bool
    href: str
    status: str  # this server, reporting, silent, never reported, token revoked
    level: str
    version: str | None
    last_contact: float | None
    clock_skew: float | None
    batches: int | None
    samples: int | None
    tiles: list[views.TileView]
    wrong: list[views.TileView]  # what its card says is wrong
    remote: str | None = None

    def as_json(self) -> HostOut:
        return HostOut(host=self.host, agent=self.agent, href=self.href, status=self.status, level=self.level,
                       version=self.version, last_contact=self.last_contact, clock_skew=self.clock_skew,
                       batches=self.batches, samples=self.samples, remote=self.remote,
                       wrong=[Tile(title=t.title, href=t.href, level=t.level, reason=t.reason) for t in self.wrong])


class Site:
    """What the routes share: the Runtime's parts they read, and the web's own (templates,
    sessions, throttles, the turns of password checks and agent batches)."""

    def __init__(self, cfg: Config, runtime: Runtime) -> None:
        self.cfg, self.runtime = cfg, runtime
        self.engine, self.store, self.snap, self.agents = runtime.engine, runtime.store, runtime.snap, runtime.agents
        self.scheduler = runtime.scheduler
        self.saved_bays: BayRules = runtime.saved_bays  # the bay labels saved from disk pages
        self.get_alerting, self.built_alerting = runtime.get_alerting, runtime.built_alerting
        self.alerting_for, self.alert_tick = runtime.alerting_for, runtime.alert_tick
        self.host_alerting = runtime.host_alerting
        self.password_hash = cfg.password_hash()
        self.api_token_hash = cfg.web.api_token_hash.get_secret_value() if cfg.web.api_token_hash else None
        self.env = templates()
        self.steps = Steps()  # the overview's first steps, until each is done
        self.sessions = Sessions(self.engine, self.password_hash)
        self.users = Users(self.engine)
        self.tokens = Tokens(self.engine, cfg.web.token_rate, cfg.web.token_burst)
        self.proxies = Proxies(cfg.web.trusted_proxies, cfg.web.proxy_user_header)
        self.throttle = Throttle()
        self.password_checks: asyncio.Semaphore | None = None  # see app/web/login.py
        self._ingest_slots: asyncio.Semaphore | None = None
        self._exposition_lock: asyncio.Lock | None = None
        self._exposition: tuple[tuple[int, int], float, bytes, bytes] | None = None

    async def exposition(self) -> tuple[bytes, bytes]:
        """/metrics with agents: this host's and every agent host's families merged, plain and
        gzipped, made again only when a collection or an agent's batch changed something (or,
        for what another process changes, such as an agent issued from the command line, after
        EXPOSITION_SECONDS). Fifty hosts' merge and gzip took 35 ms of CPU on every scrape."""
        from fastapi.concurrency import run_in_threadpool

        from app.exposition import gzipped, merge_hosts

        key = (self.snap.version, self.agents.generation)
        if self._exposition_lock is None:
            self._exposition_lock = asyncio.Lock()
        async with self._exposition_lock:  # scrapes that arrive together wait for one merge
            made = self._exposition
            if made is not None and made[0] == key and time.monotonic() - made[1] < EXPOSITION_SECONDS:
                return made[2], made[3]
            own, *hosts = await run_in_threadpool(self.agents.metrics_groups)
            # the server's own parts and what it says of its agents share its host label: one group
            plain = await run_in_threadpool(merge_hosts, [[*self.snap.parts, *own], *hosts])
            packed = await run_in_threadpool(gzipped, plain)
            self._exposition = (key, time.monotonic(), plain, packed)
            return plain, packed

    def ingest_slots(self) -> asyncio.Semaphore:
        """Agent batches parsed at once (agents.max_concurrent_ingests); made in the running loop."""
        if self._ingest_slots is None:
            self._ingest_slots = asyncio.Semaphore(self.cfg.agents.max_concurrent_ingests)
        return self._ingest_slots

    # -- hosts ------------------------------------------------------------------------------

    def view(self, request: Request) -> tuple[Snapshot, Store]:
        """The host a page shows: this one, or an agent's under /h/<host>/..."""
        host = request.scope.get("rackpulse_host")
        if host is None or host == self.cfg.host:
            return self.snap, self.store
        if host not in self.agents.snapshots:
            raise HTTPException(404, f"no host {host!r} (hosts: see /hosts)")
        return self.agents.snapshots[host], self.agents.store(host)

    async def agent_rows(self) -> list[AgentRow]:
        """The agents table for a page served in the event loop: from memory while current, else
        read in a thread (a slow or unreachable database must not hold every other request)."""
        from fastapi.concurrency import run_in_threadpool

        rows = self.agents.cached_rows()
        return rows if rows is not None else await run_in_threadpool(self.agents.rows)

    def hosts(self, own: views.Overview | None = None, rows: list[AgentRow] | None = None) -> list[HostCard]:
        """This host and every agent: status, level, version, last contact, clock skew, tiles.
        `own`: this host's overview when the caller has worked it out (the overview page has);
        `rows`: the agents table when the caller has read it (`agent_rows`)."""
        now = time.time()
        cfg = self.cfg
        tiles, wrong = _card(self.snap, own)
        out = [HostCard(cfg.host, False, "/", "this server", known_worst(wrong), None, now, 0.0, None, None,
                        tiles, wrong)]
        for row in rows if rows is not None else self.agents.rows():
            hsnap = self.agents.snapshots.get(row["host"])
            last = row["last_contact"]
            if row["revoked_at"]:
                status, level = "token revoked", views.UNKNOWN
            elif last is None:
                status, level = "never reported", views.UNKNOWN
            elif now - last > cfg.agents.silent_after:
                status, level = "silent", views.BAD
            else:
                status, level = "reporting", views.OK
            tiles, wrong = _card(hsnap) if hsnap else ([], [])
            if level == views.OK:
                level = known_worst(wrong)
            out.append(HostCard(row["host"], True, f"/h/{quote(row['host'], safe='')}/", status, level,
                                row["version"], last, row["clock_skew"], row["batches"], row["samples"], tiles,
                                wrong, row["remote"]))
        return out

    def host_pages(self, page: str) -> list[tuple[str, str]]:
        """(host, its `page` URL) for this host and every agent: the host switch of the alerts
        and events pages, without judging every host as hosts() does."""
        out = [(self.cfg.host, f"/{page}")]
        out += [(r["host"], f"/h/{quote(r['host'], safe='')}/{page}") for r in self.agents.rows()]
        return out

    # -- CSRF and pages ---------------------------------------------------------------------

    def login_required(self) -> bool:
        """A password, a user or a login proxy is configured: nobody is let in unnamed."""
        return bool(self.password_hash or self.cfg.web.proxy_user_header or self.users.any())

    def csrf_identity(self, request: Request) -> str | None:
        """Whom a CSRF token is bound to: the login session, the proxy's user, or (no login
        configured) this browser's random cookie."""
        who = principal(request)
        if who is None or who.via in ("token", "link"):
            return None
        if who.via == "session":
            return self.sessions.check(request.cookies.get(COOKIE))
        if who.via == "proxy":
            return "proxy:" + who.name
        return request.cookies.get(CSRF_COOKIE) or getattr(request.state, "csrf_id", None)

    def csrf_token(self, request: Request) -> str:
        ident = self.csrf_identity(request)
        return self.sessions.csrf(ident) if ident else ""

    def render(self, request: Request, name: str, **ctx: Any) -> HTMLResponse:
        """One template per page: the whole page, or only its content block for htmx."""
        tmpl = self.env.get_template(name)
        hsnap, hstore = self.view(request)
        who = principal(request)
        ctx = {"request": request, "snap": hsnap, "refresh": self.cfg.web.refresh_seconds, "host": hsnap.host,
               "auth": self.login_required(), "who": who, "path": request.url.path,
               # a control is shown only to whom it would answer (a viewer saw Acknowledge and got a 403)
               "may_change": bool(who and who.may_change),
               "is_admin": bool(who and who.role == "admin"),
               # the wall screen: no navigation, big tiles, dark at night (a viewer's or a link token's)
               "kiosk": request.query_params.get("kiosk") == "1",
               # the live update asks for the page as it is shown (?range=7d, ?view=heat), not its default
               "live": request.url.path + (f"?{request.url.query}" if request.url.query else ""),
               "base": request.scope.get("rackpulse_base", ""), "csrf": self.csrf_token(request),
               # a row's last 24 hours as a small line: spark(metric, labels, title) (app/web/sparkline.py)
               "spark": Sparks(hstore), **ctx}
        ctx.setdefault("notice_line", self.runtime.notice)
        if request.headers.get("HX-Request") and "content" in tmpl.blocks:
            # the live update replaces <main>'s content: the notice line goes with it, and away
            notice = self.env.get_template("notice.html").render(ctx)
            body = notice + "".join(tmpl.blocks["content"](tmpl.new_context(ctx)))
        else:
            body = tmpl.render(ctx)
        return HTMLResponse(body, headers={"Vary": "HX-Request"})


async def site(request: Request) -> Site:
    """The dependency every route takes. A coroutine: FastAPI runs a plain function dependency in
    its thread pool, a hop out of the event loop and back on every request, for a dict lookup."""
    return request.app.state.site


SiteDep = Annotated[Site, Depends(site)]


def principal(request: Request) -> Principal | None:
    """Who is asking (set by the guard, app/web/guard.py)."""
    return getattr(request.state, "principal", None)


def csrf_checked(s: SiteDep, request: Request, csrf: str = Form("")) -> None:
    """The dependency of every form that changes something: its token must be this browser's."""
    if not csrf_ok(s, request, csrf or request.headers.get("x-csrf-token")):
        raise HTTPException(403, "bad or missing CSRF token (reload the page and try again)")


def csrf_ok(s: Site, request: Request, token: str | None) -> bool:
    """A change may go ahead: a script's API token (no cookie a forged page could ride on), or
    this browser's own CSRF token (a form field, or X-CSRF-Token from the API)."""
    who = principal(request)
    return (who is not None and who.via == "token") or s.sessions.csrf_ok(s.csrf_identity(request), token)


# What a route declares: `s: SiteDep` for the shared site (typed: FastAPI's Annotated dependency),
# `dependencies=[Checked]` on a form that changes something, `dependencies=[Admins]`
# (app/web/permissions.py) on what only an admin may see or do.
Checked = Depends(csrf_checked)
