"""/users: the people who sign in, managed in the browser by an admin (what `rackpulse users`
does on the command line): add someone, change a role, set a password, end their sessions, turn
off a second factor they lost, remove them. Every form answers with this page again: a refusal
beside the field or the row it is about, with what was typed kept (never a password).

An admin's own row has no controls here: their password and second factor are on /account, and
demoting or removing oneself from a form is how a house loses its last key."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response

from app.people import audit
from app.people.users import ROLES, UserError, check_name, check_password, check_role
from app.web.permissions import Admins
from app.web.site import Checked, Site, SiteDep, principal

router = APIRouter()
ROLE_WORDS = {"admin": "admin: changes anything, manages people",
              "viewer": "viewer: reads every page, changes nothing"}


def _page(s: Site, request: Request, status: int = 200, **ctx: object) -> HTMLResponse:
    who = principal(request)
    page = s.render(request, "users.html", users=s.users.all(), me=who.name if who and who.via == "session" else None,
                    roles=ROLES, role_words=ROLE_WORDS, open_install=bool(who and who.via == "open"), **ctx)
    page.status_code = status
    return page


@router.get("/users", response_class=HTMLResponse, name="users", dependencies=[Admins])
def users_page(s: SiteDep, request: Request) -> HTMLResponse:
    return _page(s, request)


@router.post("/users", response_class=HTMLResponse, dependencies=[Admins, Checked])
async def add_user(s: SiteDep, request: Request, name: str = Form(""), role: str = Form("viewer"),
                   password: str = Form(""), again: str = Form("")) -> HTMLResponse:
    name = name.strip()
    errors: dict[str, str] = {}
    for field, check in (("name", lambda: check_name(name)), ("role", lambda: check_role(role)),
                         ("password", lambda: check_password(password))):
        try:
            check()
        except UserError as exc:
            errors[field] = str(exc)
    if "password" not in errors and password != again:
        errors["again"] = "the two passwords differ"
    if not errors and s.users.get(name) is not None:
        errors["name"] = f"{name} exists already: set their password in their row below"
    if not errors:
        try:
            await run_in_threadpool(s.users.add, name, role, password)
        except UserError as exc:  # a race with another admin adding the same name
            errors["name"] = str(exc)
    if errors:
        return _page(s, request, 400, errors=errors, sent={"name": name, "role": role})
    audit.note(request, f"user {name} ({role})")
    first = principal(request)
    if first is not None and first.via == "open":
        # The first user turns the login on: from the next request this browser signs in too.
        return _page(s, request, said=f"{name} added as {role}. Login is now on: sign in as {name} at /login.")
    return _page(s, request, said=f"{name} added as {role}.")


def _on_someone_else(s: Site, request: Request, name: str, act: Callable[[], object], said: str,
                     audited: str) -> HTMLResponse:
    """One change to another person's row; a refusal comes back in that row."""
    who = principal(request)
    if who is not None and who.via == "session" and who.name == name:
        return _page(s, request, 400, error="Your own password and second factor are changed on your account "
                                             "page; your role and your removal, by another admin.")
    if s.users.get(name) is None:
        return _page(s, request, 404, error=f"There is no user {name}: they may have been removed meanwhile.")
    try:
        act()
    except UserError as exc:
        return _page(s, request, 400, row_errors={name: str(exc)})
    audit.note(request, audited)
    return _page(s, request, said=said)


@router.post("/users/{name}/role", response_class=HTMLResponse, dependencies=[Admins, Checked])
def set_role(s: SiteDep, request: Request, name: str, role: str = Form("")) -> HTMLResponse:
    return _on_someone_else(s, request, name, lambda: s.users.set_role(name, role),
                            f"{name} is now {role}; their sessions have ended.", f"user {name} is {role}")


@router.post("/users/{name}/password", response_class=HTMLResponse, dependencies=[Admins, Checked])
async def set_password(s: SiteDep, request: Request, name: str, password: str = Form("")) -> Response:
    # scrypt takes a moment: off the event loop, as /account's password change does
    return await run_in_threadpool(
        _on_someone_else, s, request, name, lambda: s.users.set_password(name, password),
        f"{name} has a new password; their sessions have ended and their API tokens are revoked.",
        f"user {name}: password set")


@router.post("/users/{name}/sessions", response_class=HTMLResponse, dependencies=[Admins, Checked])
def end_sessions(s: SiteDep, request: Request, name: str) -> HTMLResponse:
    return _on_someone_else(s, request, name, lambda: s.users.end_sessions(name),
                            f"{name} is signed out everywhere.", f"user {name}: sessions ended")


@router.post("/users/{name}/two-factor", response_class=HTMLResponse, dependencies=[Admins, Checked])
def two_factor_off(s: SiteDep, request: Request, name: str) -> HTMLResponse:
    return _on_someone_else(s, request, name, lambda: s.users.disable_totp(name),
                            f"{name}'s second factor is off: they sign in with their password alone and may "
                            "turn it on again on their account page.", f"user {name}: two-factor off")


@router.post("/users/{name}/remove", response_class=HTMLResponse, dependencies=[Admins, Checked])
def remove_user(s: SiteDep, request: Request, name: str) -> HTMLResponse:
    return _on_someone_else(s, request, name, lambda: s.users.remove(name, other_login=bool(s.password_hash)),
                            f"{name} removed; their sessions have ended and their API tokens are revoked.",
                            f"user {name} removed")
