"""Login, logout, and the guards every request passes: with a password set, a session (or a
read-only API token for GET /api/...) is required outside PUBLIC; without one, each browser
gets a random cookie that its CSRF tokens are bound to."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from urllib.parse import quote

from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from app import credentials
from app.web.sessions import COOKIE, CSRF_COOKIE, SESSION_SECONDS
from app.web.site import Checked, Site, SiteDep

log = logging.getLogger("rackpulse.web")
router = APIRouter()
# ingest: agent tokens; /ping/: heartbeat tokens (a cron job has no login)
PUBLIC = ("/login", "/static/", "/favicon.ico", "/healthz", "/metrics", "/api/v1/ingest", "/ping/")
Next = Callable[[Request], Awaitable[Response]]


def install_guards(app: FastAPI, s: Site) -> None:
    if s.password_hash:
        @app.middleware("http")
        async def require_login(request: Request, call_next: Next) -> Response:
            path = request.url.path
            # This server's /status only: /h/<agent>/status would show every agent's probes, and its
            # 404 for a name that is not an agent would tell which names are.
            public = path == "/status" and s.cfg.web.status_public and "rackpulse_host" not in request.scope
            if not public and not any(path == p or path.startswith(p) for p in PUBLIC):
                read_only_api = (request.method == "GET" and path.startswith("/api/")
                                 and credentials.check_token(request.headers.get("authorization"), s.api_token_hash))
                if not read_only_api and not s.sessions.check(request.cookies.get(COOKIE)):
                    if path.startswith("/api/"):
                        return JSONResponse({"detail": "login required"}, status_code=401)
                    back = quote(f"{request.scope.get('rackpulse_base', '')}{path}", safe="/")
                    return RedirectResponse(f"/login?next={back}", status_code=303)
            return await call_next(request)
    else:
        @app.middleware("http")
        async def csrf_cookie(request: Request, call_next: Next) -> Response:
            """Without a login, a random cookie per browser is what CSRF tokens are bound to."""
            if request.cookies.get(CSRF_COOKIE):
                return await call_next(request)
            request.state.csrf_id = os.urandom(16).hex()
            response = await call_next(request)
            response.set_cookie(CSRF_COOKIE, request.state.csrf_id, httponly=True, samesite="strict",
                                max_age=365 * 86400, secure=request.url.scheme == "https")
            return response


def _local(target: str) -> str:
    return target if target.startswith("/") and not target.startswith("//") else "/"


@router.get("/login", response_class=HTMLResponse)
async def login_form(s: SiteDep, request: Request, next: str = "/") -> HTMLResponse:  # noqa: A002
    return s.render(request, "login.html", next=next if next.startswith("/") else "/", error=None)


# scrypt takes tens of milliseconds of CPU on purpose: never on the event loop, and one at a time
# for the whole server. Eight guessers from eight addresses (the throttle is per address) once
# held both cores and pushed /healthz p99 to 355 ms; queued here, they slow only each other.
PASSWORD_CHECKS_AT_ONCE = 1


async def checked_password(s: Site, password: str) -> bool:
    if s.password_checks is None:  # made in the running loop (a semaphore belongs to one)
        s.password_checks = asyncio.Semaphore(PASSWORD_CHECKS_AT_ONCE)
    async with s.password_checks:
        assert s.password_hash is not None
        return await run_in_threadpool(credentials.verify_password, password, s.password_hash)


@router.post("/login")
async def login(s: SiteDep, request: Request, password: str = Form(...),
                next: str = Form("/")) -> Response:  # noqa: A002
    addr = request.client.host if request.client else "?"
    wait = s.throttle.retry_after(addr)
    if wait:
        return Response(f"Too many wrong passwords from {addr}; try again in {wait} s.\n", status_code=429,
                        headers={"Retry-After": str(wait)}, media_type="text/plain")
    if not s.password_hash or not await checked_password(s, password):
        s.throttle.failed(addr)
        log.warning("login: wrong password from %s", addr)
        return s.render(request, "login.html", next=next, error="Wrong password")
    s.throttle.succeeded(addr)
    token = await run_in_threadpool(s.sessions.make)
    resp = RedirectResponse(_local(next), status_code=303)
    resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", max_age=SESSION_SECONDS,
                    secure=request.url.scheme == "https")
    return resp


@router.post("/logout", dependencies=[Checked])
def logout(s: SiteDep, request: Request, everywhere: str = Form("")) -> Response:
    """Log this browser out; with ``everywhere``, every session of every browser."""
    if everywhere:
        s.sessions.logout_everywhere()
    else:
        s.sessions.logout(request.cookies.get(COOKIE))
    resp = RedirectResponse("/login" if s.password_hash else "/", status_code=303)
    resp.delete_cookie(COOKIE)
    return resp
