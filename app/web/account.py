"""A person's own account (/account): their password, two-factor (a QR code to scan, then
recovery codes shown once) and their API tokens; and, for admins, the users and the audit log
(/audit). Anyone signed in may change their own account: the guard lets /account/... through
for viewers too, and every route here acts on the signed-in user only."""

from __future__ import annotations

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

from app.people import audit
from app.people.api_tokens import parse_duration
from app.people.users import Principal, UserError
from app.web.permissions import Admins
from app.web.site import Checked, Site, SiteDep, principal

router = APIRouter()
ISSUER = "rackpulse"


def _me(request: Request) -> Principal:
    who = principal(request)
    if who is None:
        raise HTTPException(401, "login required")
    return who


def _page(s: Site, request: Request, **ctx: object) -> HTMLResponse:
    who = _me(request)
    user = s.users.get(who.name) if who.via == "session" else None
    own = [t for t in s.tokens.list(owner=who.name)] if who.via in ("session", "proxy") else []
    return s.render(request, "account.html", me=who, user=user, tokens=own,
                    users=s.users.all() if who.role == "admin" else [], **ctx)


@router.get("/account", response_class=HTMLResponse, name="account")
def account(s: SiteDep, request: Request) -> HTMLResponse:
    return _page(s, request)


def _qr(uri: str) -> Markup:
    """The otpauth:// URI as an inline SVG QR code (segno: no image library, nothing fetched)."""
    import io

    import segno

    out = io.BytesIO()
    segno.make(uri, error="m").save(out, kind="svg", scale=4, border=2, xmldecl=False, svgns=True,
                                    title="Scan with an authenticator app", dark="#000", light="#fff")
    return Markup(out.getvalue().decode())  # noqa: S704 - segno's own SVG of our own URI


def _user_only(s: Site, request: Request) -> str:
    who = _me(request)
    if who.via != "session" or s.users.get(who.name) is None:
        raise HTTPException(400, "two-factor and passwords belong to users of this server (`rackpulse users add`); "
                                 "the config's single password and a proxy's login have their own")
    return who.name


@router.post("/account/totp/start", response_class=HTMLResponse, dependencies=[Checked])
def totp_start(s: SiteDep, request: Request) -> HTMLResponse:
    import pyotp

    name = _user_only(s, request)
    secret = s.users.start_totp(name)
    uri = pyotp.TOTP(secret).provisioning_uri(name=f"{name}@{s.cfg.host}", issuer_name=ISSUER)
    return _page(s, request, enrol={"secret": secret, "qr": _qr(uri)})


@router.post("/account/totp/confirm", response_class=HTMLResponse, dependencies=[Checked])
def totp_confirm(s: SiteDep, request: Request, code: str = Form(...)) -> Response:
    name = _user_only(s, request)
    refused = _limited(s, request, name)
    if refused is not None:
        return refused
    codes = s.users.confirm_totp(name, code.strip())
    if codes is None:
        return _page(s, request, error="That code is not right: scan the code again or wait for the next one.")
    s.throttle.succeeded(request.client.host if request.client else "?", name)
    audit.note(request, "two-factor on")
    # The session ends with the change (every session of theirs does): a new one, same browser.
    response = _page(s, request, recovery=codes)
    _renew(s, request, response, name)
    return response


def _limited(s: Site, request: Request, name: str) -> Response | None:
    """Every check of a secret here counts against the address and the account before it is made
    (app/web/sessions.py: Throttle), as at sign-in: a 429 past the limit, nothing checked."""
    addr = request.client.host if request.client else "?"
    wait = s.throttle.attempt(addr, name)
    if wait:
        return Response(f"Too many wrong passwords or codes from {addr}; try again in {wait} s.\n", status_code=429,
                        headers={"Retry-After": str(wait)}, media_type="text/plain")
    return None


@router.post("/account/totp/off", response_class=HTMLResponse, dependencies=[Checked])
def totp_off(s: SiteDep, request: Request, code: str = Form(...)) -> Response:
    name = _user_only(s, request)
    refused = _limited(s, request, name)
    if refused is not None:
        return refused
    if not s.users.second_factor(name, code):
        return _page(s, request, error="Two-factor stays on: that code is wrong or was used already.")
    s.throttle.succeeded(request.client.host if request.client else "?", name)
    s.users.disable_totp(name)
    audit.note(request, "two-factor off")
    response = _page(s, request, said="Two-factor is off.")
    _renew(s, request, response, name)
    return response


def _renew(s: Site, request: Request, response: Response, name: str) -> None:
    from app.web.sessions import COOKIE, SESSION_SECONDS

    u = s.users.get(name)
    if u is not None:
        response.set_cookie(COOKIE, s.sessions.make(None, name, u.epoch), httponly=True, samesite="strict",
                            max_age=SESSION_SECONDS, secure=request.url.scheme == "https")


@router.post("/account/password", response_class=HTMLResponse, dependencies=[Checked])
async def password(s: SiteDep, request: Request, current: str = Form(...), new: str = Form(...)) -> Response:
    name = _user_only(s, request)
    refused = _limited(s, request, name)
    if refused is not None:
        return refused
    if await run_in_threadpool(s.users.verify, name, current) is None:
        return _page(s, request, error="The current password is not right.")
    s.throttle.succeeded(request.client.host if request.client else "?", name)
    try:
        await run_in_threadpool(s.users.set_password, name, new)
    except UserError as exc:
        return _page(s, request, error=str(exc))
    audit.note(request, "password changed")
    response = _page(s, request, said="Password changed; your other sessions have ended.")
    _renew(s, request, response, name)
    return response


@router.post("/account/tokens", response_class=HTMLResponse, dependencies=[Checked])
def token_create(s: SiteDep, request: Request, name: str = Form(...), scope: str = Form("read"),
                 expires: str = Form("")) -> HTMLResponse:
    who = _me(request)
    if who.via not in ("session", "proxy"):
        raise HTTPException(403, "tokens are made by people, signed in")
    if scope != "read" and who.role != "admin":
        return _page(s, request, error="A viewer may make read tokens only.")
    if scope != "read" and s.users.get(who.name) is None:
        return _page(s, request, error="A write or admin token is made by a user stored in rackpulse "
                                       "(`rackpulse users add`): a proxy's user cannot be checked later.")
    try:
        token = s.tokens.create(name.strip(), scope, parse_duration(expires) if expires.strip() else None,
                                owner=who.name)
    except UserError as exc:
        return _page(s, request, error=str(exc))
    audit.note(request, f"token {name.strip()} ({scope})")
    return _page(s, request, new_token={"name": name.strip(), "token": token, "scope": scope})


@router.post("/account/tokens/{name}/revoke", response_class=HTMLResponse, dependencies=[Checked])
def token_revoke(s: SiteDep, request: Request, name: str) -> HTMLResponse:
    who = _me(request)
    if not s.tokens.revoke(name, owner=who.name):
        raise HTTPException(404, f"no live token {name!r} of yours")
    audit.note(request, f"token {name} revoked")
    return _page(s, request, said=f"Token {name} revoked.")


@router.get("/audit", response_class=HTMLResponse, name="audit", dependencies=[Admins])
def audit_page(s: SiteDep, request: Request, actor: str = "") -> HTMLResponse:
    return s.render(request, "audit.html", rows=audit.entries(s.engine, 500, actor), actor=actor)
