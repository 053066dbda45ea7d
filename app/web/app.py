"""FastAPI app factory: the shared Site, the routers by page family, the start-up and stop
of the scheduler, maintenance and alert delivery, and the guards in front of it all."""

from __future__ import annotations

import contextlib
import gc
import ipaddress
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote, unquote

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from fastapi.staticfiles import StaticFiles

from app import bay_labels, version
from app.config import Config
from app.ingest.agents import Agents
from app.judge import thresholds
from app.scheduler import Scheduler, Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.store import Store
from app.web import alert_pages, api, ingest, login, pages, status
from app.web.site import ROOT, Site
from collectors import build_collectors, host_context
from collectors.base import Runner, run_command

log = logging.getLogger("rackpulse.web")


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
    saved_bays = bay_labels.host_bays(cfg)  # with the labels saved from disk pages: every collector holds it
    engine = make_engine(cfg.storage.url)
    store = Store(engine, cfg.host)
    snap = snapshot or Snapshot(host=cfg.host)
    snap.judge.configure(thresholds(cfg))
    agents = Agents(engine, cfg.host, cfg.agents.max_series_per_host, cfg.agents.max_collectors_per_host,
                    cfg.agents.max_entities_per_host, cfg.agents.max_state_bytes, thresholds(cfg))
    if scheduler is None and collect:
        colls = build_collectors(cfg, runner, host_context(cfg, saved_bays))
        settings = cfg.schedules(colls)
        scheduler = Scheduler(colls, settings, snap, store)
    s = Site(cfg, engine, store, snap, agents, scheduler)
    s.saved_bays = saved_bays

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if migrate:
            upgrade(cfg.storage.url)
        await run_in_threadpool(s.sessions.load)  # the stored session secret, before the first request needs it
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
            if s.get_alerting() is not None:
                s.get_alerting().courier.start()
                scheduler.add_task(s.alert_tick, cfg.alerts.interval, "alerts")
            if cfg.export.mqtt is not None:
                from app.export.mqtt import MqttExport

                try:
                    mqtt = MqttExport(cfg.export.mqtt, version())
                except OSError as exc:  # its password file: said, and the rest of rackpulse runs
                    log.error("export.mqtt not started: cannot read password_file: %s", exc)
                else:
                    mqtt.start(cfg.host)
                    app.state.mqtt = mqtt
                    scheduler.add_task(lambda: mqtt.publish([snap, *agents.snapshots.values()]),
                                       cfg.export.mqtt.interval, "mqtt")
            for rw_cfg in cfg.export.remote_write:
                from app.export.remote_write import RemoteWrite

                rw = RemoteWrite(rw_cfg, engine, f"rackpulse/{version()}")
                app.state.remote_writes = [*getattr(app.state, "remote_writes", []), rw]
                scheduler.add_task(rw.tick, rw_cfg.interval, "remote_write")
        yield
        # Stopping takes about a second whatever is going on: collecting first (its commands
        # killed), then delivery and MQTT, each with a short bound of its own.
        if scheduler is not None:
            await scheduler.stop()
        if s.built_alerting() is not None:
            await run_in_threadpool(s.built_alerting().courier.stop, 1.0)
        if getattr(app.state, "mqtt", None) is not None:
            await run_in_threadpool(app.state.mqtt.stop)
        engine.dispose()

    app = FastAPI(title="rackpulse", lifespan=lifespan, docs_url=None, redoc_url=None)  # docs: app/web/api.py
    app.state.site = s
    app.state.snapshot, app.state.store, app.state.scheduler, app.state.config = snap, store, scheduler, cfg
    app.state.get_alerting = s.get_alerting
    app.state.alert_tick = s.alert_tick
    app.state.agents = agents
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    login.install_guards(app, s)
    for family in (pages, alert_pages, api, ingest, login, status):
        app.include_router(family.router)
    app.include_router(pages.section_pages())
    return HostPrefix(app, HostCheck(cfg.web.allowed_hosts))  # type: ignore[return-value]


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
