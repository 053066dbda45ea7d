"""Errors as a person meets them. A browser's page or form (an HTML request) gets a page in the
site's layout saying what happened and what to do next; scripts (/api, /metrics, /ingest, /ping)
keep their JSON or text. Nothing of an exception's class or traceback is ever shown: the message
is the one the route wrote for a person, escaped like every other word on a page."""

from __future__ import annotations

import html
import logging

from starlette.requests import Request
from starlette.responses import HTMLResponse

from app.people.users import Principal

log = logging.getLogger("rackpulse.web")

# Paths scripts and tools read: their errors stay machine-readable whatever they accept.
MACHINE = ("/api/", "/metrics", "/ingest", "/ping/", "/healthz", "/static/", "/openapi.json")

TITLES = {
    400: "That could not be done",
    401: "Sign in first",
    403: "Not allowed",
    404: "Not found",
    405: "Not a page to open",
    409: "Changed meanwhile",
    413: "Too large",
    422: "Some fields need another look",
    429: "Too many tries",
}


def wants_html(request: Request) -> bool:
    """A browser opening a page or sending a form: it accepts text/html, and the path is no script's."""
    path = request.url.path
    base = request.scope.get("rackpulse_base", "")
    if base and path.startswith(base):
        path = path[len(base):] or "/"
    if any(path.startswith(p) for p in MACHINE):
        return False
    return "text/html" in request.headers.get("accept", "")


def advice(status: int, who: Principal | None) -> str:
    """What to do next, in a sentence."""
    if status == 403 and who is not None and not who.may_change:
        return ("You are signed in as a viewer: you can read every page, and an admin makes the changes. "
                "Ask an admin, or sign in as one.")
    if status == 403:
        return "The form was older than your session: reload the page and send it again."
    if status == 401:
        return "Sign in, then open the page again."
    if status == 404:
        return ("What was here may have moved on (a disk replaced, an alert resolved, a host renamed). "
                "The overview shows what there is now.")
    if status in (400, 409, 413, 422):
        return "Go back: what you typed is still in the form. Change what is named above and send it again."
    if status == 429:
        return "Wait a moment before trying again."
    if status >= 500:
        return "The server's log says what went wrong; the rest of rackpulse goes on. Try again in a moment."
    return "Go back, or open the overview."


def page(site: object, request: Request, status: int, message: str, fields: list[tuple[str, str]] | None = None,
         headers: dict[str, str] | None = None, links: list[tuple[str, str]] | None = None) -> HTMLResponse:
    """The error in the site's layout; if even that cannot be drawn (the page's own host is
    unknown, the database is away), the same words on a bare page."""
    title = TITLES.get(status, "Something went wrong here" if status >= 500 else "That could not be done")
    who = getattr(request.state, "principal", None) if "state" in request.scope else None
    tip = advice(status, who)
    try:
        resp = site.render(request, "error.html", status=status, title=title,  # type: ignore[attr-defined]
                           message=message, fields=fields or [], advice=tip, links=links or [])
    except Exception as exc:  # noqa: BLE001 - an error page must never become a second error
        log.warning("error page for %s drawn bare: %s", request.url.path, exc.__class__.__name__)
        esc = html.escape
        items = "".join(f"<li><strong>{esc(f)}</strong>: {esc(m)}</li>" for f, m in fields or [])
        resp = HTMLResponse(f"<!doctype html><html lang=en><meta charset=utf-8><title>{esc(title)} · rackpulse"
                            f"</title><main><h1>{esc(title)}</h1><p>{esc(message)}</p>"
                            f"{f'<ul>{items}</ul>' if items else ''}<p>{esc(tip)}</p>"
                            f"<p><a href=\"/\">Overview</a></p></main></html>")
    resp.status_code = status
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def field_errors(errors: list[dict[str, object]]) -> list[tuple[str, str]]:
    """pydantic's validation errors as (field, what is wrong): "port", "must be at most 65535"."""
    out = []
    for e in errors:
        loc = [str(x) for x in e.get("loc", ()) if x not in ("body", "query", "path", "form")]  # type: ignore[attr-defined]
        out.append((".".join(loc) or "request", in_words(str(e.get("msg", "not understood")))))
    return out


def in_words(msg: str) -> str:
    """pydantic's "Input should be less than or equal to 65535" as "must be at most 65535": shorter,
    about the field beside which it is shown."""
    return (msg.replace("Value error, ", "").replace("Input should be ", "must be ")
            .replace("less than or equal to", "at most").replace("greater than or equal to", "at least")
            .replace("Field required", "needed"))
