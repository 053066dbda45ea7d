"""Who may call each route, worked out from what the routes declare and what the guard does
(app/web/guard.py): the table in docs/permissions.md, written by `make docs`, and what
tests/security/test_permissions.py walks every route against as each kind of caller."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, HTTPException, Request
from fastapi.routing import APIRoute
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from app.web.guard import OWN, OWN_TOKENS, PUBLIC, SAFE, _starts
from app.web.site import principal


def admin_only(request: Request) -> None:
    """People, tokens, agents' tokens and the audit log: an admin's (a person, or an admin token)."""
    who = principal(request)
    if who is None or who.role != "admin":
        raise HTTPException(403, "for admins only")


Admins = Depends(admin_only)  # a route's `dependencies=[Admins]`: the table below reads it

# The kinds of caller, least first. A read token reads like a viewer; a write token changes what a
# write may change; an admin token is an admin. A page is never opened with a Bearer token.
NEEDS = ("anyone", "own token", "signed in", "own account", "write", "admin")
WORDS = {
    "anyone": "anyone, no login (public)",
    "own token": "its own secret in the URL or header (an agent's or a heartbeat's token), no login",
    "signed in": "anyone signed in: a viewer, any API token",
    "own account": "anyone signed in, for their own account",
    "write": "an admin, or a write or admin token (acknowledge, silence, maintenance, labels, notes)",
    "admin": "an admin, or an admin token (people, tokens, agents' tokens, the audit log)",
}


def flat(found: list[Any]) -> list[APIRoute]:
    """The app's routes, through the routers it includes (FastAPI keeps each as a wrapper)."""
    out: list[APIRoute] = []
    for r in found:
        if isinstance(r, APIRoute):
            out.append(r)
        elif hasattr(r, "original_router"):
            out += flat(r.original_router.routes)
    return out


def _declares_admin(route: APIRoute) -> bool:
    return any(d.call is admin_only for d in route.dependant.dependencies)


def needs(method: str, path: str, route: APIRoute) -> str:
    """The least kind of caller this route lets through (one of NEEDS)."""
    if _starts(path, OWN_TOKENS):
        return "own token"
    if _declares_admin(route):
        return "admin"
    if _starts(path, PUBLIC):
        return "anyone"
    if method in SAFE:
        return "signed in"
    if _starts(path, OWN):
        return "own account"
    return "write"


def table(app: Any) -> list[tuple[str, str, str]]:
    """(method, path, needs) of every route, sorted by path."""
    rows = []
    for r in flat(app.routes):
        for m in sorted(r.methods or ()):
            rows.append((m, r.path, needs(m, r.path, r)))
    rows += [("GET", path, "anyone" if _starts(path, PUBLIC) else "signed in") for path in folders(app)]
    return sorted(set(rows), key=lambda x: (x[1], x[0]))


def folders(app: Starlette) -> list[str]:
    """The paths that serve a folder of files (/static, and /help once the manual is built: before,
    a route that says how to build it), read with GET: in the table either way."""
    return [r.path for r in app.routes if isinstance(r, Mount) and isinstance(r.app, StaticFiles)]


def permissions_md(app: Any) -> str:
    out = ["# Who may call each route", "",
           "Written by `make docs` from the routes and the guard (app/web/permissions.py); "
           "tests/security/test_permissions.py calls every route as every kind of caller and holds it to this table.",
           "", "| needs | who that is |", "|---|---|"]
    out += [f"| {n} | {WORDS[n]} |" for n in NEEDS]
    out += ["", "| method | path | needs |", "|---|---|---|"]
    out += [f"| {m} | `{p}` | {n} |" for m, p, n in table(app)]
    return "\n".join(out) + "\n"
