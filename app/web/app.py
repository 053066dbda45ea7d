"""FastAPI app factory: pages (whole, or as an htmx fragment), JSON API, /metrics."""

from __future__ import annotations

import contextlib
import gc
import gzip
import ipaddress
import logging
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from fastapi import FastAPI, Form, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlalchemy.exc import SQLAlchemyError

from app import credentials, views
from app.batch import BatchError, decode_body, parse_batch
from app.config import Config
from app.exposition import CONTENT_TYPE, merge
from app.ingest.agents import Agents, agent_conditions, authenticate, bearer_hash, list_agents, revoke
from app.scheduler import Scheduler, Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.store import Store
from app.web.sessions import COOKIE, CSRF_COOKIE, SESSION_SECONDS, Sessions, Throttle
from collectors import build_collectors
from collectors.base import Runner, run_command

log = logging.getLogger("rackpulse.web")
ROOT = Path(__file__).resolve().parents[2]
RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "1y": 365 * 86400}
SLOW_INGEST = 0.5  # seconds: a batch slower than this is logged with where the time went
PUBLIC = ("/login", "/static/", "/healthz", "/metrics", "/api/v1/ingest")  # ingest: agent tokens


def _templates() -> Environment:
    env = Environment(loader=FileSystemLoader(ROOT / "templates"), autoescape=select_autoescape(["html"]))
    env.globals["ICON"] = views.ICON
    env.filters["ago"] = lambda ts: "never" if not ts else f"{int(time.time() - ts)}s ago"
    env.filters["duration"] = _human_duration
    env.filters["bytes"] = _human_bytes
    # One path segment of a link: a serial or a peer name with '/', '?', '#' or '%' stays inside it.
    env.filters["urlpart"] = lambda v: quote(str(v), safe="")
    return env


def _human_duration(s: float | None) -> str:
    if s is None:
        return "–"
    s = int(s)
    if s >= 86400:
        return f"{s // 86400}d {s % 86400 // 3600}h"
    if s >= 3600:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 60}m {s % 60}s"


def _human_bytes(n: float | None) -> str:
    if not n:
        return "–"
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000:
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.1f} EB"


def create_app(
    cfg: Config,
    *,
    collect: bool = True,
    runner: Runner = run_command,
    snapshot: Snapshot | None = None,
    scheduler: Scheduler | None = None,
    migrate: bool = True,
) -> FastAPI:
    """Build the app. ``collect=False`` serves pages from a given snapshot (tests, demo parts)."""
    engine = make_engine(cfg.storage.url)
    store = Store(engine, cfg.host)
    snap = snapshot or Snapshot(host=cfg.host)
    agents = Agents(engine, cfg.host, cfg.agents.max_series_per_host)
    if scheduler is None and collect:
        colls = build_collectors(cfg, runner)
        settings = {n: (getattr(cfg.collectors, n).interval, getattr(cfg.collectors, n).timeout) for n in colls}
        scheduler = Scheduler(colls, settings, snap, store)
    password_hash = cfg.password_hash()
    api_token_hash = cfg.web.api_token_hash.get_secret_value() if cfg.web.api_token_hash else None
    env = _templates()
    sessions = Sessions(engine, password_hash)
    throttle = Throttle()
    alerting_box: dict[str, Any] = {}
    host_alerting: dict[str, Any] = {}  # agent host -> its Alerting
    failed_hosts: set[str] = set()

    def get_alerting():
        """Built on first use: its tables exist only after the migrations ran."""
        if "a" not in alerting_box:
            from app.alerting.service import from_config

            alerting_box["a"] = from_config(cfg, engine) if cfg.alerts.enabled else None
        return alerting_box["a"]

    def alerting_for(host: str):
        """One Alerting per agent host (its own states, flaps and silences); None when disabled."""
        if host == cfg.host or get_alerting() is None:
            return get_alerting()
        if host not in host_alerting:
            from app.alerting.service import from_config

            host_alerting[host] = from_config(cfg, engine, host=host)
        return host_alerting[host]

    def alert_tick() -> None:
        """Agent hosts first, then this host; all only queue, and this host's courier delivers for all."""
        now = time.time()
        for host, hsnap in list(agents.snapshots.items()):
            try:  # one agent host's odd state must not stop alerts for the others
                alerting_for(host).tick(hsnap, now, deliver=False)
            except Exception:  # noqa: BLE001
                if host not in failed_hosts:
                    log.exception("alerts for agent host %s failed", host)
                    failed_hosts.add(host)
        local = get_alerting()
        local.tick(snap, now, extra=agent_conditions(agents, cfg, now), deliver=False)
        local.courier.wake()  # delivery runs in the courier's threads: a hanging endpoint never delays this

    def view(request: Request) -> tuple[Snapshot, Store]:
        """The host a page shows: this one, or an agent's under /h/<host>/..."""
        host = request.scope.get("rackpulse_host")
        if host is None or host == cfg.host:
            return snap, store
        if host not in agents.snapshots:
            raise HTTPException(404, f"no host {host!r} (hosts: see /hosts)")
        return agents.snapshots[host], agents.store(host)

    def csrf_identity(request: Request) -> str | None:
        """Whom a CSRF token is bound to: the login session, or (no password) this browser's cookie."""
        if password_hash:
            return sessions.check(request.cookies.get(COOKIE))
        return request.cookies.get(CSRF_COOKIE) or getattr(request.state, "csrf_id", None)

    def csrf_token(request: Request) -> str:
        ident = csrf_identity(request)
        return sessions.csrf(ident) if ident else ""

    def check_csrf(request: Request, token: str) -> None:
        if not sessions.csrf_ok(csrf_identity(request), token):
            raise HTTPException(403, "bad or missing CSRF token (reload the page and try again)")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if migrate:
            upgrade(cfg.storage.url)
        await run_in_threadpool(sessions.load)  # the stored session secret, before the first request needs it
        agents.restore()
        if scheduler is not None:
            scheduler.restore()
        # Move start-up objects (imports, templates, restored state) out of the GC's view:
        # later collections then scan only what requests and collections allocate.
        gc.collect()
        gc.freeze()
        if scheduler is not None:
            scheduler.start()
            st = cfg.storage
            scheduler.add_task(lambda: (store.make_rollups(), store.prune(st.raw_days, st.rollup_5m_days,
                                                                          st.rollup_1h_days)),
                               st.maintenance_interval, "maintenance")
            if get_alerting() is not None:
                get_alerting().courier.start()
                scheduler.add_task(alert_tick, cfg.alerts.interval, "alerts")
        yield
        if alerting_box.get("a") is not None:
            await run_in_threadpool(alerting_box["a"].courier.stop)
        if scheduler is not None:
            await scheduler.stop()
        engine.dispose()

    app = FastAPI(title="rackpulse", lifespan=lifespan, docs_url="/api/docs", redoc_url=None)
    app.state.snapshot, app.state.store, app.state.scheduler, app.state.config = snap, store, scheduler, cfg
    app.state.get_alerting = get_alerting
    app.state.alert_tick = alert_tick
    app.state.agents = agents
    static = ROOT / "static"
    app.mount("/static", StaticFiles(directory=static), name="static")

    if password_hash:
        @app.middleware("http")
        async def require_login(request: Request, call_next):
            path = request.url.path
            if not any(path == p or path.startswith(p) for p in PUBLIC):
                read_only_api = (request.method == "GET" and path.startswith("/api/")
                                 and credentials.check_token(request.headers.get("authorization"), api_token_hash))
                if not read_only_api and not sessions.check(request.cookies.get(COOKIE)):
                    if path.startswith("/api/"):
                        return JSONResponse({"detail": "login required"}, status_code=401)
                    back = quote(f"{request.scope.get('rackpulse_base', '')}{path}", safe="/")
                    return RedirectResponse(f"/login?next={back}", status_code=303)
            return await call_next(request)
    else:
        @app.middleware("http")
        async def csrf_cookie(request: Request, call_next):
            """Without a login, a random cookie per browser is what CSRF tokens are bound to."""
            if request.cookies.get(CSRF_COOKIE):
                return await call_next(request)
            request.state.csrf_id = os.urandom(16).hex()
            response = await call_next(request)
            response.set_cookie(CSRF_COOKIE, request.state.csrf_id, httponly=True, samesite="strict",
                                max_age=365 * 86400, secure=request.url.scheme == "https")
            return response

    def render(request: Request, name: str, **ctx: Any) -> HTMLResponse:
        """One template per page: the whole page, or only its content block for htmx."""
        tmpl = env.get_template(name)
        hsnap, _ = view(request)
        ctx = {"request": request, "snap": hsnap, "refresh": cfg.web.refresh_seconds, "host": hsnap.host,
               "auth": bool(password_hash), "path": request.url.path, "base": request.scope.get("rackpulse_base", ""),
               "csrf": csrf_token(request), **ctx}
        if request.headers.get("HX-Request") and "content" in tmpl.blocks:
            body = "".join(tmpl.blocks["content"](tmpl.new_context(ctx)))
        else:
            body = tmpl.render(ctx)
        return HTMLResponse(body, headers={"Vary": "HX-Request"})

    @app.get("/", response_class=HTMLResponse, name="overview")
    def overview(request: Request) -> HTMLResponse:
        snap, store = view(request)
        a = alerting_for(snap.host)
        # From memory, not the database: the overview is the page people leave open.
        firing = [{**x.__dict__, "href": None} for x in a.states.values() if x.state == "firing"] if a else []
        hosts = []
        if snap.host == cfg.host:  # the server's overview: every agent host, and what fires there
            for host, ha in list(host_alerting.items()):
                firing += [{**x.__dict__, "href": f"/h/{quote(host, safe='')}/alerts"} for x in ha.states.values()
                           if x.state == "firing"]
            hosts = [h for h in hosts_view() if h["agent"]]
        return render(request, "overview.html", ov=views.overview(snap), arrays=views.arrays(snap), firing=firing,
                      hosts=hosts)

    @app.get("/disks", response_class=HTMLResponse, name="disks")
    async def disks_page(request: Request) -> HTMLResponse:
        snap, store = view(request)
        arrs = views.arrays(snap)
        pulls = [(a, m) for a in arrs for m in views.pull_list(a)]
        bays = [b.label for b in cfg.disks.bays] if snap.host == cfg.host else views.bays_seen(snap)
        shelves = views.bay_map(snap, bays)
        return render(request, "disks.html", arrays=arrs, disks=views.disks(snap), pulls=pulls,
                      array_level=views.array_level, shelves=shelves)

    @app.get("/disks/{key:path}", response_class=HTMLResponse, name="disk")
    def disk_page(request: Request, key: str, range: str = "24h") -> HTMLResponse:  # noqa: A002
        snap, store = view(request)
        disk = next((d for d in views.disks(snap) if d["key"] == key), None)
        stored = next((e for e in store.entities("disk") if e["key"] == key), None)
        if disk is None and stored is None:
            raise HTTPException(404, f"no disk {key!r}")
        events = store.events("disk", key) + (store.events("bay", disk["bay"]) if disk and disk.get("bay") else [])
        events.sort(key=lambda e: e["ts"], reverse=True)
        return render(request, "disk.html", disk=disk, stored=stored, key=key, events=events[:100],
                      range=range if range in RANGES else "24h", ranges=list(RANGES))

    @app.get("/network", response_class=HTMLResponse, name="network")
    async def network_page(request: Request) -> HTMLResponse:
        snap, store = view(request)
        return render(request, "network.html", peers=views.bgp_peers(snap), vpns=views.vpn_instances(snap),
                      bonds=views.bonds(snap), switches=views.switches(snap), peer_level=views.peer_level)

    @app.get("/power", response_class=HTMLResponse, name="power")
    async def power_page(request: Request) -> HTMLResponse:
        snap, store = view(request)
        return render(request, "power.html", ups=views.ups_list(snap), hw=views.power(snap))

    @app.get("/heatpump", response_class=HTMLResponse, name="heatpump")
    async def heatpump_page(request: Request, range: str = "24h") -> HTMLResponse:  # noqa: A002
        snap, store = view(request)
        return render(request, "heatpump.html", hp=views.heatpump(snap), status=snap.statuses.get("heatpump"),
                      range=range if range in RANGES else "24h", ranges=list(RANGES))

    @app.get("/alerts", response_class=HTMLResponse, name="alerts")
    def alerts_page(request: Request) -> HTMLResponse:
        snap, store = view(request)
        a = alerting_for(snap.host)
        return render(request, "alerts.html", al=a.view() if a else None, csrf=csrf_token(request))

    @app.post("/alerts/ack")
    def alerts_ack(request: Request, rule: str = Form(...), subject: str = Form(...),
                         csrf: str = Form(...)) -> Response:
        snap, store = view(request)
        check_csrf(request, csrf)
        a = alerting_for(snap.host)
        if a is None or not a.ack(rule, subject):
            raise HTTPException(404, "no such firing alert")
        return RedirectResponse("/alerts", status_code=303)

    @app.post("/alerts/silence")
    def alerts_silence(request: Request, csrf: str = Form(...), rule: str = Form(""), subject: str = Form(""),
                             hours: float = Form(4.0), reason: str = Form("")) -> Response:
        snap, store = view(request)
        check_csrf(request, csrf)
        a = alerting_for(snap.host)
        if a is None or not (0 < hours <= 24 * 90):
            raise HTTPException(400, "alerts disabled, or hours out of range")
        a.silence(rule or None, subject or None, hours, reason)
        return RedirectResponse("/alerts", status_code=303)

    @app.get("/api/entities/{kind}")
    def api_entities(request: Request, kind: str) -> list[dict[str, Any]]:
        """The inventory of one kind (disk, bay, md_array, md_member, bgp_peer, bond_slave, ...)."""
        snap, store = view(request)
        return store.entities(kind)

    @app.get("/api/events")
    def api_events(request: Request, kind: str | None = None, key: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Inventory changes, newest first, optionally for one entity."""
        snap, store = view(request)
        return store.events(kind, key, limit=max(1, min(limit, 1000)))

    @app.get("/api/alerts")
    def api_alerts(request: Request) -> dict[str, Any]:
        snap, store = view(request)
        a = alerting_for(snap.host)
        return a.view() if a else {"active": [], "history": [], "outbox": [], "silences": []}

    @app.get("/entity/{kind}/{key:path}", response_class=HTMLResponse, name="entity")
    def entity_page(request: Request, kind: str, key: str, range: str = "24h") -> HTMLResponse:  # noqa: A002
        snap, store = view(request)
        stored = next((e for e in store.entities(kind) if e["key"] == key), None)
        if stored is None:
            raise HTTPException(404, f"no {kind} {key!r}")
        return render(request, "entity.html", kind=kind, key=key, stored=stored, events=store.events(kind, key),
                      charts=views.entity_charts(kind, key, stored["attrs"]), range=range if range in RANGES else "24h",
                      ranges=list(RANGES))

    @app.get("/collectors", response_class=HTMLResponse, name="collectors")
    def collectors_page(request: Request) -> HTMLResponse:
        snap, store = view(request)
        return render(request, "collectors.html", ov=views.overview(snap), csrf=csrf_token(request),
                      can_run=scheduler is not None and snap.host == cfg.host)

    @app.post("/collectors/{name}/run")
    async def collector_run_now(request: Request, name: str, csrf: str = Form(...)) -> Response:
        snap, store = view(request)
        check_csrf(request, csrf)
        if scheduler is None or name not in scheduler.collectors:
            raise HTTPException(404, f"no collector {name!r}")
        await scheduler.run_once(name)
        return RedirectResponse(f"/collectors#{name}", status_code=303)

    @app.get("/events", response_class=HTMLResponse, name="events")
    def events_page(request: Request) -> HTMLResponse:
        snap, store = view(request)
        return render(request, "events.html", events=store.events(limit=200))

    @app.get("/api/state")
    async def api_state(request: Request) -> dict[str, Any]:
        snap, store = view(request)
        return {"host": snap.host, "version": snap.version, "arrays": views.arrays(snap), "disks": views.disks(snap),
                "bgp_peers": views.bgp_peers(snap), "vpn_instances": views.vpn_instances(snap),
                "bonds": views.bonds(snap), "switches": views.switches(snap), "ups": views.ups_list(snap),
                "power": views.power(snap), "heatpump": views.heatpump(snap),
                "collectors": [{"name": s.name, "up": s.up, "no_data": s.no_data, "last_error": s.last_error,
                                "duration": s.duration, "last_success": s.last_success, "warnings": s.warnings}
                               for s in snap.statuses.values()]}

    @app.get("/api/series")
    def api_series(request: Request, metric: str, range: str = "24h",  # noqa: A002
                         label: list[str] = Query(default=[]),  # noqa: B008
                         scale: float = 1.0) -> dict[str, Any]:
        """History of one series; ``scale`` multiplies every value (joules -> kWh for a chart)."""
        snap, store = view(request)
        labels = dict(item.split("=", 1) for item in label if "=" in item)
        sid = store.find_series(metric, **labels)
        if sid is None:
            raise HTTPException(404, f"no series {metric} {labels}")
        end = int(time.time())
        pts = store.history(sid, end - RANGES.get(range, 86400), end + 1)
        return {"metric": metric, "labels": labels, "range": range, "ts": [p.ts for p in pts],
                "min": [_scaled(p.vmin, scale) for p in pts], "avg": [_scaled(p.vavg, scale) for p in pts],
                "max": [_scaled(p.vmax, scale) for p in pts]}

    @app.get("/metrics")
    async def metrics(request: Request) -> Response:
        # Served from the snapshot rendered after the last collection: a scrape never touches a device.
        gz = "gzip" in request.headers.get("accept-encoding", "")
        if agents.snapshots:  # agents (all of them since start-up), and their hosts' samples, one family each
            parts = snap.parts + await run_in_threadpool(agents.metrics_parts)
            body = await run_in_threadpool(merge, parts)
            if gz:
                body = await run_in_threadpool(gzip.compress, body, 5)
        else:
            body = snap.metrics_gzip if gz else snap.metrics
        return Response(body, media_type=CONTENT_TYPE, headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
                        if gz else {"Vary": "Accept-Encoding"})

    @app.post("/api/v1/ingest")
    async def ingest(request: Request) -> JSONResponse:
        """Batches from `rackpulse agent` (format in app/batch.py), authenticated by the agent's token."""
        limit = cfg.agents.max_batch_bytes
        marks = [time.perf_counter()]
        try:
            hashed = bearer_hash(request.headers.get("authorization"))
            who = agents.caller(hashed)  # known callers skip the database trip; accept checks again
            if who is None:
                who = await run_in_threadpool(authenticate, engine, hashed)
                agents.remember(who)
            host = who.host
            marks.append(time.perf_counter())
            declared = request.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > limit:
                raise BatchError(413, f"batch of {declared} bytes is larger than the server's limit of {limit}")
            body = bytearray()
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise BatchError(413, f"batch is larger than the server's limit of {limit} bytes")
            remote = request.client.host if request.client else ""

            marks.append(time.perf_counter())

            def work() -> dict[str, Any]:
                marks.append(time.perf_counter())
                batch = parse_batch(decode_body(bytes(body), request.headers.get("content-encoding"), limit))
                marks.append(time.perf_counter())
                return agents.accept(who, batch, remote).as_dict()

            result = await run_in_threadpool(work)
            marks.append(time.perf_counter())
            if marks[-1] - marks[0] > SLOW_INGEST:
                steps = ("auth", "body", "queue", "parse", "store")
                log.info("slow ingest from %s: %.0f ms (%s)", host, (marks[-1] - marks[0]) * 1000,
                         ", ".join(f"{n} {(b - a) * 1000:.0f}" for n, a, b in zip(steps, marks, marks[1:],
                                                                                   strict=False)))
        except BatchError as exc:
            if exc.status >= 500 or exc.status in (401, 403):
                log.warning("ingest from %s refused: %s", request.client.host if request.client else "?", exc)
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        except SQLAlchemyError as exc:
            log.error("ingest: storage failed: %s", exc.__class__.__name__)
            return JSONResponse({"error": "storage unavailable; keep the batch and retry"}, status_code=503)
        return JSONResponse({"status": "ok", **result})

    @app.get("/hosts", response_class=HTMLResponse, name="hosts")
    def hosts_page(request: Request) -> HTMLResponse:
        return render(request, "hosts.html", hosts=hosts_view(), csrf=csrf_token(request))

    @app.get("/api/hosts")
    def api_hosts() -> list[dict[str, Any]]:
        """This host and every agent: version, last contact, clock skew, worst state."""
        return [{k: v for k, v in h.items() if k != "tiles"} for h in hosts_view()]

    @app.post("/hosts/{host}/revoke")
    def hosts_revoke(request: Request, host: str, csrf: str = Form(...)) -> Response:
        check_csrf(request, csrf)
        if not revoke(engine, host):
            raise HTTPException(404, f"no live token for {host!r}")
        return RedirectResponse("/hosts", status_code=303)

    def hosts_view() -> list[dict[str, Any]]:
        now = time.time()
        tiles = views.overview(snap)["tiles"]
        out = [{"host": cfg.host, "agent": False, "href": "/", "status": "this server", "level": known_worst(tiles),
                "version": None, "last_contact": now, "clock_skew": 0.0, "batches": None, "samples": None,
                "tiles": tiles}]
        for row in list_agents(engine):
            hsnap = agents.snapshots.get(row["host"])
            last = row["last_contact"]
            if row["revoked_at"]:
                status, level = "token revoked", views.UNKNOWN
            elif last is None:
                status, level = "never reported", views.UNKNOWN
            elif now - last > cfg.agents.silent_after:
                status, level = "silent", views.BAD
            else:
                status, level = "reporting", views.OK
            tiles = views.overview(hsnap)["tiles"] if hsnap else []
            if level == views.OK:
                level = known_worst(tiles)
            out.append({"host": row["host"], "agent": True, "href": f"/h/{quote(row['host'], safe='')}/",
                        "status": status, "level": level, "version": row["version"], "last_contact": last,
                        "clock_skew": row["clock_skew"], "batches": row["batches"], "samples": row["samples"],
                        "remote": row["remote"], "tiles": tiles})
        return out

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/login", response_class=HTMLResponse)
    async def login_form(request: Request, next: str = "/") -> HTMLResponse:  # noqa: A002
        return render(request, "login.html", next=next if next.startswith("/") else "/", error=None)

    @app.post("/login")
    async def login(request: Request, password: str = Form(...), next: str = Form("/")) -> Response:  # noqa: A002
        addr = request.client.host if request.client else "?"
        wait = throttle.retry_after(addr)
        if wait:
            return Response(f"Too many wrong passwords from {addr}; try again in {wait} s.\n", status_code=429,
                            headers={"Retry-After": str(wait)}, media_type="text/plain")
        # scrypt takes tens of milliseconds of CPU on purpose: never on the event loop.
        if not password_hash or not await run_in_threadpool(credentials.verify_password, password, password_hash):
            throttle.failed(addr)
            log.warning("login: wrong password from %s", addr)
            return render(request, "login.html", next=next, error="Wrong password")
        throttle.succeeded(addr)
        token = await run_in_threadpool(sessions.make)
        resp = RedirectResponse(next if next.startswith("/") and not next.startswith("//") else "/", status_code=303)
        resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", max_age=SESSION_SECONDS,
                        secure=request.url.scheme == "https")
        return resp

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form(""), everywhere: str = Form("")) -> Response:
        """Log this browser out; with ``everywhere``, every session of every browser."""
        check_csrf(request, csrf)
        if everywhere:
            sessions.logout_everywhere()
        else:
            sessions.logout(request.cookies.get(COOKIE))
        resp = RedirectResponse("/login" if password_hash else "/", status_code=303)
        resp.delete_cookie(COOKIE)
        return resp

    return HostPrefix(app, HostCheck(cfg.web.allowed_hosts))  # type: ignore[return-value]


def _scaled(v: float | None, scale: float) -> float | None:
    return v if v is None or scale == 1.0 else v * scale


def known_worst(tiles: list[dict[str, Any]]) -> str:
    """A host's level: its worst tile, not counting tiles with nothing known yet."""
    return views.worst([t["level"] for t in tiles if t["level"] != views.UNKNOWN] or [views.OK])


class HostCheck:
    """The Host header allow-list, against DNS rebinding: a page on evil.example whose name
    is re-pointed at 127.0.0.1 reaches this server from the victim's browser with Host
    evil.example. Allowed: IP literals (no name, nothing to re-point), loopback names and
    web.allowed_hosts (the names people and agents use for this server)."""

    LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})

    def __init__(self, allowed: list[str]) -> None:
        self.allowed = {h.lower().rstrip(".") for h in allowed}

    def allows(self, header: str | None) -> bool:
        if header is None:
            return True  # HTTP/1.0 without Host: not a browser's request
        name = header.strip().lower()
        if name.startswith("["):  # [::1]:9842
            name = name[1:].split("]", 1)[0]
        elif name.count(":") == 1:
            name = name.split(":", 1)[0]
        name = name.rstrip(".")
        if name in self.LOOPBACK_NAMES or name.endswith(".localhost") or name in self.allowed:
            return True
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return False


class HostPrefix:
    """``/h/<host>/disks`` shows agent host <host>'s disks page: the prefix is taken off the
    path (so every route serves every host) and kept in the scope for the handlers and links.
    Requests whose Host header is not allowed are refused first (400)."""

    def __init__(self, app: FastAPI, hosts: HostCheck | None = None) -> None:
        self.app = app
        self.state = app.state
        self.hosts = hosts or HostCheck([])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
            if not self.hosts.allows(host):
                body = (f"Host {host!r} is not allowed here: add it to web.allowed_hosts in the config "
                        "(a guard against DNS rebinding).\n").encode("utf-8", "replace")
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        if scope["type"] == "http" and scope["path"].startswith("/h/"):
            host, _, rest = scope["path"][3:].partition("/")
            scope = {**scope, "rackpulse_host": unquote(host), "rackpulse_base": f"/h/{quote(unquote(host), safe='')}",
                     "path": "/" + rest, "raw_path": ("/" + rest).encode()}
        await self.app(scope, receive, send)
