"""/channels: where notifications go, with channels added, changed, tried and removed in the
browser (an email through Apprise, an ntfy topic, a webhook) for a user who never opens the TOML.

The config file's channels are listed read-only; the ones made here are kept in the database
(app/alerting/saved_channels.py) and used from the next evaluation, without a restart. A form is
checked by the config's own model (ChannelConfig): a bad URL or quiet-hours shape is a 400 that
names the field and never repeats the URL, and nothing is stored. A saved URL is never shown
again: the edit form keeps it unless a new one is typed."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from app.alerting.saved_channels import SECTION, saved_configs
from app.storage.monitors import MonitorError, delete_monitor, save_monitor
from app.web.monitors import errors_by_field
from app.web.site import Checked, SiteDep

router = APIRouter()

FORMATS = {"apprise": "Apprise URL (email, Telegram, Matrix, Pushover, Signal, ntfy ...)",
           "ntfy": "ntfy topic (https://ntfy.sh/...)", "gotify": "Gotify", "discord": "Discord webhook",
           "slack": "Slack webhook", "rackpulse": "rackpulse JSON webhook", "alertmanager": "Alertmanager webhook"}
SEVERITIES = ("critical", "warning", "info")


def kind_of(c: Any) -> str:
    """What a person may see of a channel: its format, or an Apprise URL's scheme; never the URL."""
    url = c.url.get_secret_value()
    return url.split("://", 1)[0] + "://" if c.format == "apprise" and "://" in url else c.format


def _page(s: Any, request: Request, edit: int | None) -> dict[str, object]:
    saved = saved_configs(s.engine, s.cfg.host)
    editing = next(((m, c) for m, c in saved if m.id == edit), None)
    alerting = s.alerting_for(s.cfg.host)
    return {"configured": list(s.cfg.alerts.channels), "saved": saved, "editing": editing, "formats": FORMATS,
            "severities": SEVERITIES, "kind_of": kind_of, "csrf": s.csrf_token(request),
            "trials": alerting.trials if alerting else {}, "notice": request.query_params.get("saved"),
            "enabled": alerting is not None}


@router.get("/channels", response_class=HTMLResponse, name="channels")
def channels_page(s: SiteDep, request: Request, edit: int | None = None) -> HTMLResponse:
    snap, _ = s.view(request)
    if snap.host != s.cfg.host:
        raise HTTPException(404, "channels are made on the server")
    return s.render(request, "channels.html", **_page(s, request, edit))


class Refused(ValueError):
    """A form refused: each field's complaint in words (never the URL itself)."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


def entry_of(form: dict[str, str], keep_url: str | None) -> dict[str, object]:
    """The posted form as a [[alerts.channels]] entry, checked by ChannelConfig (Refused, with
    words that name each field, never the URL)."""
    from app.alerting.config import ChannelConfig

    url = (form.get("url") or "").strip() or keep_url
    entry: dict[str, object] = {"name": (form.get("name") or "").strip(), "format": form.get("format") or "apprise",
                             "url": url or "", "group": form.get("group") in ("on", "true", "1"),
                             "severities": [v for v in SEVERITIES if form.get(f"severity_{v}")],
                             "rules": [r.strip() for r in (form.get("rules") or "").split(",") if r.strip()]}
    for key in ("timeout", "escalate_after_minutes", "quiet_hours", "max_age_hours"):
        if (form.get(key) or "").strip():
            entry[key] = form[key].strip()
    if entry["format"] not in FORMATS:
        raise Refused({"format": f"one of {', '.join(FORMATS)}"})
    try:
        checked = ChannelConfig.model_validate(entry)
    except ValidationError as exc:
        raise Refused(errors_by_field(exc)) from None
    return {**checked.model_dump(mode="json", exclude={"url", "headers", "template"}),
            "url": checked.url.get_secret_value()}


async def _save(s: Any, request: Request, channel_id: int | None, keep_url: str | None) -> Response:
    form = {k: str(v) for k, v in (await request.form()).items()}

    def refused(errors: dict[str, str]) -> HTMLResponse:
        # The form again as it was sent, each refusal beside its field: nothing typed is lost but
        # the URL, a secret that is never written into a page (it is typed again).
        if "url" not in errors and form.get("url"):
            errors = {**errors, "url": "type it again: a URL is never sent back to the browser"}
        page = s.render(request, "channels.html", **_page(s, request, channel_id), sent=form, errors=errors)
        page.status_code = 400
        return page

    try:
        entry = entry_of(form, keep_url)
    except Refused as exc:
        return refused(exc.errors)
    if entry["name"] in {c.name for c in s.cfg.alerts.channels}:
        return refused({"name": f"the config file has a channel named {entry['name']!r}: choose another name"})
    try:
        await run_in_threadpool(save_monitor, s.engine, s.cfg.host, SECTION, str(entry["format"]), entry, channel_id)
    except MonitorError as exc:
        return refused({"form": str(exc).replace("monitor", "channel")})
    await run_in_threadpool(s.runtime.load_channels)
    base = request.scope.get("rackpulse_base", "")
    return RedirectResponse(f"{base}/channels?saved={quote(str(entry['name']))}", status_code=303)


def _found(s: Any, channel_id: int) -> tuple[Any, Any]:
    found = next(((m, c) for m, c in saved_configs(s.engine, s.cfg.host) if m.id == channel_id), None)
    if found is None:
        raise HTTPException(404, f"no channel {channel_id} made in the browser")
    return found


@router.post("/channels/add", dependencies=[Checked])
async def channel_add(s: SiteDep, request: Request) -> Response:
    return await _save(s, request, None, None)


@router.post("/channels/{channel_id}/edit", dependencies=[Checked])
async def channel_edit(s: SiteDep, request: Request, channel_id: int) -> Response:
    saved, _ = _found(s, channel_id)
    return await _save(s, request, channel_id, str(saved.spec.get("url") or "") or None)


@router.post("/channels/{channel_id}/delete", dependencies=[Checked])
async def channel_delete(s: SiteDep, request: Request, channel_id: int) -> Response:
    if not await run_in_threadpool(delete_monitor, s.engine, s.cfg.host, channel_id):
        raise HTTPException(404, f"no channel {channel_id} made in the browser")
    await run_in_threadpool(s.runtime.load_channels)
    return RedirectResponse(f"{request.scope.get('rackpulse_base', '')}/channels", status_code=303)


@router.post("/channels/{name}/test", dependencies=[Checked])
def channel_try(s: SiteDep, request: Request, name: str) -> Response:
    """A test notification now; the page shows what the service answered."""
    a = s.alerting_for(s.cfg.host)
    if a is None or name not in a.channels:
        raise HTTPException(404, "no such channel")
    a.try_channel(name)
    return RedirectResponse(f"{request.scope.get('rackpulse_base', '')}/channels", status_code=303)
