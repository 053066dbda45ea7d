"""The guard every request passes: who is asking (a `Principal`), whether they may, and the
audit row of what they changed.

Who, in this order: an API token (``Authorization: Bearer``), a read token in the URL
(``?token=``, GET only: a wall screen), the reverse proxy's user header (only from
web.trusted_proxies), the session cookie. With no login configured at all (no password, no
users, no proxy) every request is the open local install, an admin, as before users existed.

May they: reading needs someone (outside PUBLIC) once a login is configured; every change (any
method but GET, HEAD, OPTIONS) needs an admin or a write token, except a person's own account
(/account/...), logging in and out, and the paths with their own tokens (agents, heartbeats).
Checking here, in one place, is what makes "a viewer gets 403 on every change" true of routes
added later too.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import credentials
from app.people import audit
from app.people.users import OPEN, Principal
from app.web import error_pages
from app.web.sessions import COOKIE, CSRF_COOKIE

if TYPE_CHECKING:
    from app.people.api_tokens import Token
    from app.web.site import Site

log = logging.getLogger("rackpulse.web")

# ingest: agent tokens; /ping/: heartbeat tokens (a cron job has no login)
PUBLIC = ("/login", "/static/", "/favicon.ico", "/healthz", "/metrics", "/api/v1/ingest", "/ping/")
SAFE = ("GET", "HEAD", "OPTIONS")
# Public and asked for all the time (a scrape, a page's files): no one to identify.
BARE = ("/static/", "/favicon.ico", "/healthz", "/metrics")
# Changes anyone signed in may make (their own account), and those guarded by their own tokens.
OWN = ("/login", "/logout", "/account/", "/api/v1/account/")
OWN_TOKENS = ("/api/v1/ingest", "/ping/")


class Refused(Exception):
    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.retry_after = status, message, retry_after


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The API's one shape of error: {"error": {"status": 403, "message": "..."}}."""
    return JSONResponse({"error": {"status": status, "message": message}}, status_code=status, headers=headers)


def _starts(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p.rstrip("/") or path.startswith(p) for p in prefixes)


def identify(s: Site, request: Request, addr: str, peer: str | None = None) -> Principal | None:
    """Who sent this request, or None (nobody). Raises Refused for a credential that is wrong.

    `addr` is the client's address (for throttles and the audit), `peer` the socket's (the proxy, whose
    header naming a user is trusted only when the proxy itself is)."""
    peer = addr if peer is None else peer
    web = s.cfg.web
    auth = request.headers.get("authorization")
    # a token is for the API: on a page it opens nothing (a wall screen's link uses ?token=)
    if auth and auth.startswith("Bearer ") and request.url.path.startswith("/api/"):
        if s.api_token_hash and credentials.check_token(auth, s.api_token_hash):
            return Principal("api", "viewer", "token")  # web.api_token_hash: the read-only token of old configs
        t = s.tokens.check(auth[7:].strip(), addr)
        if t is None:
            raise Refused(401, "API token unknown, revoked or expired")
        wait = s.tokens.allow(t.id)
        if wait:
            raise Refused(429, f"token {t.name}: more than {web.token_rate:g} requests a second", wait)
        return Principal(t.name, _token_role(s, t), "token", t.id)
    link = request.query_params.get("token")
    if link is not None:
        t = s.tokens.check(link, addr)
        if t is None:
            raise Refused(401, "token unknown, revoked or expired")
        if t.scope != "read" or request.method not in SAFE:
            # a URL is written down, logged and shared: one that could change things must not exist
            raise Refused(401, "only a read token may be given in a URL (?token=); a write token goes in "
                               "the Authorization header")
        return Principal(t.name, "viewer", "link", t.id)
    if web.proxy_user_header:
        user = request.headers.get(web.proxy_user_header, "").strip()
        if user:
            if s.proxies.trusted(peer):
                known = s.users.get(user)
                if known is not None:
                    return Principal(user, known.role, "proxy")
                groups = {g.strip() for g in request.headers.get(web.proxy_groups_header, "").split(",")}
                admin = bool(web.proxy_admin_group) and web.proxy_admin_group in groups
                return Principal(user, "admin" if admin else "viewer", "proxy")
            s.proxies.ignored(addr, user)
    found = s.sessions.who(request.cookies.get(COOKIE))
    if found is None:
        return None
    _, name, epoch = found
    if name == "":
        return Principal("admin", "admin", "session") if s.password_hash else None
    u = s.users.get(name)
    if u is None or u.epoch != epoch:
        return None  # removed, or their password, role or two-factor changed since
    return Principal(name, u.role, "session")


def _token_role(s: Site, t: Token) -> str:
    """A person's token is worth what they are worth now (removing, demoting or a new password also
    revokes it). A proxy user who is not a stored user cannot be asked about later: their token only
    reads."""
    if t.owner is None:
        return t.role(None)
    u = s.users.get(t.owner)
    return t.role(u.role if u is not None else "viewer")


def install_guard(app: FastAPI, s: Site) -> None:
    app.add_middleware(Guard, site=s)


class Guard:
    """A plain ASGI middleware: FastAPI's @app.middleware("http") wraps every request and response
    in extra objects and a task, which cost more than the rest of a /healthz."""

    def __init__(self, app: ASGIApp, site: Site) -> None:
        self.app, self.s = app, site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _starts(scope["path"], BARE):
            await self.app(scope, receive, send)
            return
        s = self.s
        request = Request(scope)
        path = scope["path"]
        peer, addr = self._client(scope, request)
        own_tokens = _starts(path, OWN_TOKENS)
        try:
            if own_tokens:
                who = None
            elif "authorization" in request.headers or "token" in request.query_params:
                who = await run_in_threadpool(identify, s, request, addr, peer)  # a token is a query
            else:
                who = identify(s, request, addr, peer)  # a signature and the users cache
        except Refused as exc:
            headers = {"Retry-After": str(max(1, round(exc.retry_after)))} if exc.retry_after else None
            await error(exc.status, exc.message, headers)(scope, receive, send)
            return
        if who is None and not s.login_required():
            who = OPEN
        changing = scope["method"] not in SAFE
        refusal = self._refusal(scope, who, changing)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["principal"] = who
        cookie = None
        if who is OPEN and not request.cookies.get(CSRF_COOKIE):
            # without a login, a random cookie per browser is what its CSRF tokens are bound to
            state["csrf_id"] = credentials.make_token()[0]
            cookie = Response()
            cookie.set_cookie(CSRF_COOKIE, state["csrf_id"], httponly=True, samesite="strict",
                              max_age=365 * 86400, secure=scope.get("scheme") == "https")
        answered: dict[str, int] = {}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                answered["status"] = message["status"]
                if cookie is not None:
                    message = {**message, "headers": [*message.get("headers", []),
                                                      *[(k, v) for k, v in cookie.raw_headers if k == b"set-cookie"]]}
            await send(message)

        await self.app(scope, receive, sending)
        if changing and who is not None and not _starts(path, ("/login", *OWN_TOKENS)):
            await run_in_threadpool(audit.record, s.engine, who.actor,
                                    f"{scope['method']} {scope.get('rackpulse_base', '')}{path}",
                                    state.get("audit_detail"), addr, answered.get("status"))

    def _client(self, scope: Scope, request: Request) -> tuple[str, str]:
        """(the socket's peer, the client): the client is the peer unless the peer is a trusted
        proxy, then what its X-Forwarded-For says. Every later reader of request.client (the
        throttles, the ping limit, the audit log) sees the client."""
        peer = request.client.host if request.client else "?"
        addr = self.s.proxies.client(peer, request.headers.get("x-forwarded-for"))
        if addr != peer:
            scope["client"] = (addr, 0)
            scope["rackpulse_peer"] = peer
            proto = request.headers.get("x-forwarded-proto", "").split(",")[-1].strip().lower()
            if proto in ("http", "https"):  # TLS ended at the trusted proxy: cookies stay Secure
                scope["scheme"] = proto
        return peer, addr

    def _refusal(self, scope: Scope, who: Principal | None, changing: bool) -> Response | None:
        """The answer to a request that may not go on (no login, or a change without the right),
        None when it may."""
        path = scope["path"]
        api = path.startswith("/api/")
        public = _starts(path, PUBLIC) or (
            # this server's /status only: /h/<agent>/status would show every agent's probes
            path == "/status" and self.s.cfg.web.status_public and "rackpulse_host" not in scope)
        if who is None and not public:
            if api:
                return error(401, "login required: a session, or Authorization: Bearer <token>")
            back = quote(f"{scope.get('rackpulse_base', '')}{path}", safe="/")
            return RedirectResponse(f"/login?next={back}", status_code=303)
        if changing and not _starts(path, OWN_TOKENS) and not _starts(path, OWN) and not (who and who.may_change):
            if who and not api and error_pages.wants_html(Request(scope)):  # a viewer's form: a page, not JSON
                scope.setdefault("state", {})["principal"] = who
                return error_pages.page(self.s, Request(scope), 403, "Read-only: a viewer cannot change anything.")
            return (error(403, "read-only: a viewer, or a read token, cannot change anything") if who else
                    error(401, "login required") if api else RedirectResponse("/login", 303))
        return None
