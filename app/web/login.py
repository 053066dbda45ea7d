"""Login and logout. A person logs in with their name, password and (if they enabled it) a
two-factor code; an empty name with the config's single password is the admin of older
configs. Wrong passwords and wrong codes count alike against the address (the throttle).
Who may do what is the guard's business (app/web/guard.py)."""

from __future__ import annotations

import asyncio
import logging

from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app import credentials
from app.people import audit
from app.web.sessions import COOKIE, SESSION_SECONDS
from app.web.site import Checked, Site, SiteDep

log = logging.getLogger("rackpulse.web")
router = APIRouter()


def _local(target: str) -> str:
    return target if target.startswith("/") and not target.startswith("//") else "/"


@router.get("/login", response_class=HTMLResponse)
async def login_form(s: SiteDep, request: Request, next: str = "/") -> HTMLResponse:  # noqa: A002
    return s.render(request, "login.html", next=next if next.startswith("/") else "/", error=None, user="")


# scrypt takes tens of milliseconds of CPU on purpose: never on the event loop, and one at a time
# for the whole server. Eight guessers from eight addresses (the throttle is per address) once
# held both cores and pushed /healthz p99 to 355 ms; queued here, they slow only each other.
PASSWORD_CHECKS_AT_ONCE = 1


async def checked_password(s: Site, user: str, password: str) -> tuple[str, int] | None:
    """(user name, epoch) when the password is right: a user's own, or ("", 0) for the config's."""
    if s.password_checks is None:  # made in the running loop (a semaphore belongs to one)
        s.password_checks = asyncio.Semaphore(PASSWORD_CHECKS_AT_ONCE)
    async with s.password_checks:
        if not user:
            legacy = s.password_hash
            ok = legacy is not None and await run_in_threadpool(credentials.verify_password, password, legacy)
            return ("", 0) if ok else None
        u = await run_in_threadpool(s.users.verify, user, password)
        return (u.name, u.epoch) if u else None


@router.post("/login")
async def login(s: SiteDep, request: Request, password: str = Form(...), user: str = Form(""),
                code: str = Form(""), next: str = Form("/")) -> Response:  # noqa: A002
    addr = request.client.host if request.client else "?"
    user = user.strip()
    wait = s.throttle.attempt(addr, user or "admin")  # counted before the check: concurrent guesses too
    if wait:
        return Response(f"Too many wrong passwords from {addr}; try again in {wait} s.\n", status_code=429,
                        headers={"Retry-After": str(wait)}, media_type="text/plain")
    found = await checked_password(s, user, password)
    problem = None if found else "Wrong user or password"
    u = s.users.get(user) if found and user else None
    if u is not None and u.two_factor and not await run_in_threadpool(s.users.second_factor, user, code):
        problem = "Two-factor code missing, wrong or already used"  # counted by the throttle like a password
    if problem or found is None:
        log.warning("login: %s for %r from %s", (problem or "refused").lower(), user[:60] or "admin", addr)
        await run_in_threadpool(audit.record, s.engine, user[:60] or "admin", "login refused", problem, addr, 200)
        return s.render(request, "login.html", next=next, error=problem or "Wrong user or password", user=user)
    s.throttle.succeeded(addr, user or "admin")
    name, epoch = found
    token = await run_in_threadpool(s.sessions.make, None, name, epoch)
    await run_in_threadpool(audit.record, s.engine, name or "admin", "login", None, addr, 303)
    resp = RedirectResponse(_local(next), status_code=303)
    resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", max_age=SESSION_SECONDS,
                    secure=request.url.scheme == "https")
    return resp


@router.post("/logout", dependencies=[Checked])
def logout(s: SiteDep, request: Request, everywhere: str = Form("")) -> Response:
    """Log this browser out; with ``everywhere``, every session of the caller's, on every browser
    (never anyone else's: a viewer's button must not sign the admin out)."""
    cookie = request.cookies.get(COOKIE)
    found = s.sessions.who(cookie)
    s.sessions.logout(cookie)
    if everywhere and found is not None:
        name = found[1]
        if name == "":  # the single password of older configs: its own sessions
            s.sessions.logout_everywhere()
        elif s.users.get(name) is not None:
            s.users.end_sessions(name)
    resp = RedirectResponse("/login" if s.login_required() else "/", status_code=303)
    resp.delete_cookie(COOKIE)
    return resp
