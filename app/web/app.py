"""FastAPI app factory: the shared Site over the Runtime (app/runtime/, which it starts and
stops), the routers by page family, and the guards in front of it all."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import signal
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote, unquote

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from app.config import Config
from app.reload import reload as config_reload
from app.runtime import Runtime
from app.shipped import shipped
from app.web import (
    account,
    alert_pages,
    api,
    api_v1,
    channels,
    data,
    disks,
    energy,
    guard,
    heartbeats,
    ingest,
    login,
    monitors,
    pages,
    people,
    status,
)
from app.web.site import Site

log = logging.getLogger("rackpulse.web")


def create_app(cfg: Config, *, runtime: Runtime | None = None, **runtime_options: Any) -> FastAPI:
    """The web app over a Runtime (built here from `runtime_options` when none is given: see
    app/runtime/ for `collect`, `runner`, `snapshot`, `scheduler` and `migrate`). The app starts
    and stops it with itself; everything else it only reads."""
    rt = runtime or Runtime(cfg, **runtime_options)
    s = Site(cfg, rt)

    def applied(new: Config) -> None:
        s.cfg = app.state.config = new

    reloading = asyncio.Lock()

    async def reload() -> None:
        async with reloading:  # two SIGHUPs in a row: one after the other
            await config_reload(rt, applied)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await rt.start(s.sessions.load)
        app.state.mqtt, app.state.remote_writes = rt.mqtt, rt.remote_writes
        app.state.reload = reload
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread (tests)
            loop.add_signal_handler(signal.SIGHUP, lambda: loop.create_task(reload()))
        yield
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGHUP)
        await rt.stop()

    app = FastAPI(title="rackpulse", lifespan=lifespan, docs_url=None, redoc_url=None)  # docs: app/web/api.py
    app.state.site, app.state.runtime, app.state.config = s, rt, cfg
    app.state.snapshot, app.state.store, app.state.scheduler, app.state.agents = rt.snap, rt.store, rt.scheduler, \
        rt.agents
    app.state.get_alerting, app.state.alert_tick = rt.get_alerting, rt.alert_tick
    app.mount("/static", StaticFiles(directory=shipped("static")), name="static")
    mount_manual(app)
    guard.install_guard(app, s)
    install_api_errors(app)
    for family in (pages, account, alert_pages, api, api_v1, ingest, login, status, monitors, channels, heartbeats, disks,
                   energy, data, people):
        app.include_router(family.router)
    app.include_router(pages.detail_pages())
    app.include_router(pages.section_pages())
    return HostPrefix(app, HostCheck(cfg.web.allowed_hosts))  # type: ignore[return-value]


class ManualFiles(StaticFiles):
    """The manual's files; a page it does not have is rackpulse's own "not found", in the site's
    layout. MkDocs' 404.html links its styles relative to the site's top, so at /help/a/b it was
    a page of giant unstyled icons."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 404:
            raise HTTPException(404, "No such page in the manual: its contents are at /help/.")
        return response


def mount_manual(app: FastAPI) -> None:
    """The manual at /help, offline: the site the wheel carries (or a checkout's `make docs-site`).
    Without it, /help says how to build it rather than a bare 404."""
    site = shipped("help")
    if (site / "index.html").is_file():
        app.mount("/help", ManualFiles(directory=site, html=True), name="help")
        return

    @app.get("/help", include_in_schema=False)
    def no_manual() -> HTMLResponse:
        # An error like any other, so a browser gets it in the site's layout, menu and dark mode
        # (a bare page was black on white in dark mode, with no way back)
        raise HTTPException(404, "The manual is not built in this checkout: run make docs-site, "
                                 "or read README.md and docs/.")


def install_api_errors(app: FastAPI) -> None:
    """The API's errors in one shape, {"error": {"status", "message"}} (a script reads one
    field); a browser's page or form gets an error page in the site's layout (app/web/error_pages.py)."""
    from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
    from fastapi.exceptions import RequestValidationError
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse

    from app.web import error_pages

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith("/api/v1/"):
            return guard.error(exc.status_code, str(exc.detail), dict(exc.headers or {}))
        if error_pages.wants_html(request) and exc.status_code >= 400:
            return await run_in_threadpool(error_pages.page, request.app.state.site, request, exc.status_code,
                                           str(exc.detail), None, dict(exc.headers or {}))
        return await http_exception_handler(request, exc)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if request.url.path.startswith("/api/v1/"):
            said = "; ".join(f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors())
            return guard.error(422, said[:1000] or "request not understood")
        if error_pages.wants_html(request):
            fields = error_pages.field_errors(list(exc.errors()))
            return await run_in_threadpool(error_pages.page, request.app.state.site, request, 422,
                                           "The form was not sent: some of its fields are not what they need to be.",
                                           fields)
        return await request_validation_exception_handler(request, exc)

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> Response:
        # Starlette raises it on after this answer: the server's log gets the traceback, the
        # person words.
        if error_pages.wants_html(request):
            return await run_in_threadpool(error_pages.page, request.app.state.site, request, 500,
                                           "This page failed to draw.")
        if request.url.path.startswith("/api/v1/"):
            return guard.error(500, "internal error: the server's log says more")
        return PlainTextResponse("Internal Server Error", status_code=500)


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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
