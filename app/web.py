"""FastAPI app factory: pages (whole, or as an htmx fragment), JSON API, /metrics."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import hmac
import logging
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

from app import auth, views
from app.config import Config
from app.db import make_engine, upgrade
from app.exposition import CONTENT_TYPE
from app.scheduler import Scheduler, Snapshot
from app.storage import Store
from collectors import build_collectors
from collectors.base import Runner, run_command

log = logging.getLogger("rackpulse.web")
ROOT = Path(__file__).resolve().parent.parent
RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "1y": 365 * 86400}
PUBLIC = ("/login", "/static/", "/healthz", "/metrics")


def _templates() -> Environment:
    env = Environment(loader=FileSystemLoader(ROOT / "templates"), autoescape=select_autoescape(["html"]))
    env.globals["ICON"] = views.ICON
    env.filters["ago"] = lambda ts: "never" if not ts else f"{int(time.time() - ts)}s ago"
    env.filters["duration"] = _human_duration
    env.filters["bytes"] = _human_bytes
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
    if scheduler is None and collect:
        colls = build_collectors(cfg, runner)
        settings = {n: (getattr(cfg.collectors, n).interval, getattr(cfg.collectors, n).timeout) for n in colls}
        scheduler = Scheduler(colls, settings, snap, store)
    password_hash = cfg.password_hash()
    env = _templates()
    csrf_secret = os.urandom(32)
    alerting_box: dict[str, Any] = {}

    def get_alerting():  # type: ignore[no-untyped-def]
        """Built on first use: its tables exist only after the migrations ran."""
        if "a" not in alerting_box:
            from app.alerting import from_config

            alerting_box["a"] = from_config(cfg, engine) if cfg.alerts.enabled else None
        return alerting_box["a"]

    def csrf_token(request: Request) -> str:
        session = request.cookies.get(auth.COOKIE, "anonymous")
        return hmac.new(csrf_secret, session.encode(), hashlib.sha256).hexdigest()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if migrate:
            upgrade(cfg.storage.url)
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
                scheduler.add_task(lambda: get_alerting().tick(snap), cfg.alerts.interval, "alerts")
        yield
        if scheduler is not None:
            await scheduler.stop()
        engine.dispose()

    app = FastAPI(title="rackpulse", lifespan=lifespan, docs_url="/api/docs", redoc_url=None)
    app.state.snapshot, app.state.store, app.state.scheduler, app.state.config = snap, store, scheduler, cfg
    app.state.get_alerting = get_alerting
    static = ROOT / "static"
    app.mount("/static", StaticFiles(directory=static), name="static")

    if password_hash:
        @app.middleware("http")
        async def require_login(request: Request, call_next):  # type: ignore[no-untyped-def]
            path = request.url.path
            if not any(path == p or path.startswith(p) for p in PUBLIC):
                read_only_api = (request.method == "GET" and path.startswith("/api/")
                                 and auth.check_token(request.headers.get("authorization"), cfg.web.api_token_hash))
                if not read_only_api and not auth.check_session(request.cookies.get(auth.COOKIE), password_hash):
                    if path.startswith("/api/"):
                        return JSONResponse({"detail": "login required"}, status_code=401)
                    return RedirectResponse(f"/login?next={path}", status_code=303)
            return await call_next(request)

    def render(request: Request, name: str, **ctx: Any) -> HTMLResponse:
        """One template per page: the whole page, or only its content block for htmx."""
        tmpl = env.get_template(name)
        ctx = {"request": request, "snap": snap, "refresh": cfg.web.refresh_seconds, "host": cfg.host,
               "auth": bool(password_hash), "path": request.url.path, **ctx}
        if request.headers.get("HX-Request") and "content" in tmpl.blocks:
            body = "".join(tmpl.blocks["content"](tmpl.new_context(ctx)))
        else:
            body = tmpl.render(ctx)
        return HTMLResponse(body, headers={"Vary": "HX-Request"})

    @app.get("/", response_class=HTMLResponse, name="overview")
    async def overview(request: Request) -> HTMLResponse:
        a = get_alerting()
        # From memory, not the database: the overview is the page people leave open.
        firing = [x.__dict__ for x in a.states.values() if x.state == "firing"] if a else []
        return render(request, "overview.html", ov=views.overview(snap), arrays=views.arrays(snap), firing=firing)

    @app.get("/disks", response_class=HTMLResponse, name="disks")
    async def disks_page(request: Request) -> HTMLResponse:
        arrs = views.arrays(snap)
        pulls = [(a, m) for a in arrs for m in views.pull_list(a)]
        shelves = views.bay_map(snap, [b.label for b in cfg.disks.bays])
        return render(request, "disks.html", arrays=arrs, disks=views.disks(snap), pulls=pulls,
                      array_level=views.array_level, shelves=shelves)

    @app.get("/disks/{key:path}", response_class=HTMLResponse, name="disk")
    async def disk_page(request: Request, key: str, range: str = "24h") -> HTMLResponse:  # noqa: A002
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
        return render(request, "network.html", peers=views.bgp_peers(snap), vpns=views.vpn_instances(snap),
                      bonds=views.bonds(snap), switches=views.switches(snap), peer_level=views.peer_level)

    @app.get("/power", response_class=HTMLResponse, name="power")
    async def power_page(request: Request) -> HTMLResponse:
        return render(request, "power.html", ups=views.ups_list(snap), hw=views.power(snap))

    @app.get("/heatpump", response_class=HTMLResponse, name="heatpump")
    async def heatpump_page(request: Request, range: str = "24h") -> HTMLResponse:  # noqa: A002
        return render(request, "heatpump.html", hp=views.heatpump(snap), status=snap.statuses.get("heatpump"),
                      range=range if range in RANGES else "24h", ranges=list(RANGES))

    @app.get("/alerts", response_class=HTMLResponse, name="alerts")
    async def alerts_page(request: Request) -> HTMLResponse:
        a = get_alerting()
        return render(request, "alerts.html", al=a.view() if a else None, csrf=csrf_token(request))

    @app.post("/alerts/ack")
    async def alerts_ack(request: Request, rule: str = Form(...), subject: str = Form(...),
                         csrf: str = Form(...)) -> Response:
        if not hmac.compare_digest(csrf, csrf_token(request)):
            raise HTTPException(403, "bad or missing CSRF token")
        a = get_alerting()
        if a is None or not a.ack(rule, subject):
            raise HTTPException(404, "no such firing alert")
        return RedirectResponse("/alerts", status_code=303)

    @app.post("/alerts/silence")
    async def alerts_silence(request: Request, csrf: str = Form(...), rule: str = Form(""), subject: str = Form(""),
                             hours: float = Form(4.0), reason: str = Form("")) -> Response:
        if not hmac.compare_digest(csrf, csrf_token(request)):
            raise HTTPException(403, "bad or missing CSRF token")
        a = get_alerting()
        if a is None or not (0 < hours <= 24 * 90):
            raise HTTPException(400, "alerts disabled, or hours out of range")
        a.silence(rule or None, subject or None, hours, reason)
        return RedirectResponse("/alerts", status_code=303)

    @app.get("/api/entities/{kind}")
    async def api_entities(kind: str) -> list[dict[str, Any]]:
        """The inventory of one kind (disk, bay, md_array, md_member, bgp_peer, bond_slave, ...)."""
        return store.entities(kind)

    @app.get("/api/events")
    async def api_events(kind: str | None = None, key: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Inventory changes, newest first, optionally for one entity."""
        return store.events(kind, key, limit=max(1, min(limit, 1000)))

    @app.get("/api/alerts")
    async def api_alerts() -> dict[str, Any]:
        a = get_alerting()
        return a.view() if a else {"active": [], "history": [], "outbox": [], "silences": []}

    @app.get("/entity/{kind}/{key:path}", response_class=HTMLResponse, name="entity")
    async def entity_page(request: Request, kind: str, key: str, range: str = "24h") -> HTMLResponse:  # noqa: A002
        stored = next((e for e in store.entities(kind) if e["key"] == key), None)
        if stored is None:
            raise HTTPException(404, f"no {kind} {key!r}")
        return render(request, "entity.html", kind=kind, key=key, stored=stored, events=store.events(kind, key),
                      charts=views.entity_charts(kind, key, stored["attrs"]), range=range if range in RANGES else "24h",
                      ranges=list(RANGES))

    @app.get("/collectors", response_class=HTMLResponse, name="collectors")
    async def collectors_page(request: Request) -> HTMLResponse:
        return render(request, "collectors.html", ov=views.overview(snap), csrf=csrf_token(request),
                      can_run=scheduler is not None)

    @app.post("/collectors/{name}/run")
    async def collector_run_now(request: Request, name: str, csrf: str = Form(...)) -> Response:
        if not hmac.compare_digest(csrf, csrf_token(request)):
            raise HTTPException(403, "bad or missing CSRF token")
        if scheduler is None or name not in scheduler.collectors:
            raise HTTPException(404, f"no collector {name!r}")
        await scheduler.run_once(name)
        return RedirectResponse(f"/collectors#{name}", status_code=303)

    @app.get("/events", response_class=HTMLResponse, name="events")
    async def events_page(request: Request) -> HTMLResponse:
        return render(request, "events.html", events=store.events(limit=200))

    @app.get("/api/state")
    async def api_state() -> dict[str, Any]:
        return {"host": cfg.host, "version": snap.version, "arrays": views.arrays(snap), "disks": views.disks(snap),
                "bgp_peers": views.bgp_peers(snap), "vpn_instances": views.vpn_instances(snap),
                "bonds": views.bonds(snap), "switches": views.switches(snap), "ups": views.ups_list(snap),
                "power": views.power(snap), "heatpump": views.heatpump(snap),
                "collectors": [{"name": s.name, "up": s.up, "no_data": s.no_data, "last_error": s.last_error,
                                "duration": s.duration, "last_success": s.last_success, "warnings": s.warnings}
                               for s in snap.statuses.values()]}

    @app.get("/api/series")
    async def api_series(metric: str, range: str = "24h", label: list[str] = Query(default=[])) -> dict[str, Any]:  # noqa: A002, B008
        labels = dict(item.split("=", 1) for item in label if "=" in item)
        sid = store.find_series(metric, **labels)
        if sid is None:
            raise HTTPException(404, f"no series {metric} {labels}")
        end = int(time.time())
        pts = store.history(sid, end - RANGES.get(range, 86400), end + 1)
        return {"metric": metric, "labels": labels, "range": range, "ts": [p.ts for p in pts],
                "min": [p.vmin for p in pts], "avg": [p.vavg for p in pts], "max": [p.vmax for p in pts]}

    @app.get("/metrics")
    async def metrics(request: Request) -> Response:
        # Served from the snapshot rendered after the last collection: a scrape never touches a device.
        if "gzip" in request.headers.get("accept-encoding", ""):
            return Response(snap.metrics_gzip, media_type=CONTENT_TYPE, headers={"Content-Encoding": "gzip"})
        return Response(snap.metrics, media_type=CONTENT_TYPE)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/login", response_class=HTMLResponse)
    async def login_form(request: Request, next: str = "/") -> HTMLResponse:  # noqa: A002
        return render(request, "login.html", next=next if next.startswith("/") else "/", error=None)

    @app.post("/login")
    async def login(request: Request, password: str = Form(...), next: str = Form("/")) -> Response:  # noqa: A002
        if not password_hash or not auth.verify_password(password, password_hash):
            return render(request, "login.html", next=next, error="Wrong password")
        resp = RedirectResponse(next if next.startswith("/") and not next.startswith("//") else "/", status_code=303)
        resp.set_cookie(auth.COOKIE, auth.make_session(password_hash), httponly=True, samesite="strict",
                        max_age=auth.SESSION_SECONDS, secure=request.url.scheme == "https")
        return resp

    return app
