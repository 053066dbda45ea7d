"""/monitors: the probes, with the ones made here added, changed and removed in the browser.

The config file's probes are listed read-only (the TOML stays the user's: rackpulse never writes
it); the ones made here live in the database (app/storage/monitors.py) and reach the probes
collector at once, without a restart (collectors.context.SavedEntries). A form is built from the
plug-in's own pydantic model, so the browser can say exactly what the TOML can, and is checked
by the same rules: a bad value is a 400 naming the field, and nothing is stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ValidationError

from app.storage.monitors import MonitorError, SavedMonitor, delete_monitor, list_monitors, save_monitor
from app.web.site import Checked, SiteDep
from collectors.probes.checks.collector import KINDS

router = APIRouter()
SECTION = "probes"
# What each kind's form asks first (the rest in the model's order).
KIND_WORDS = {"ping": "Ping (fping)", "http": "HTTP(S) check", "tcp": "TCP port (and TLS certificate)"}


@dataclass(frozen=True)
class Field:
    """One input of a monitor's form, from the model's field."""

    name: str
    label: str
    input: str  # text, number, checkbox, url
    value: Any
    required: bool
    step: str = "any"


def form_fields(model: type[BaseModel], values: dict[str, Any] | None = None) -> list[Field]:
    values = values or {}
    out = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        kind = "checkbox" if ann is bool else "number" if ann in (int, float) else "text"
        if name == "url":
            kind = "url"
        default = None if info.is_required() else info.default
        out.append(Field(name, name.replace("_", " "), kind, values.get(name, default), info.is_required(),
                         "1" if ann is int else "any"))
    return out


def parse_form(model: type[BaseModel], form: dict[str, str]) -> dict[str, Any]:
    """The posted form as the model's entry: an empty field is its default, a checkbox absent is
    false; ValidationError (which names the field) when the model refuses it."""
    raw: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if info.annotation is bool:
            raw[name] = form.get(name) in ("on", "true", "1")
        elif (form.get(name) or "").strip():
            raw[name] = form[name].strip()
    entry = model.model_validate(raw)
    # What differs from the defaults, as a TOML entry would say it.
    return {k: v for k, v in entry.model_dump().items()
            if model.model_fields[k].is_required() or v != model.model_fields[k].default}


def errors_in_words(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'form'}: {e['msg']}" for e in exc.errors())


def _config_probes(s: Any) -> list[tuple[str, dict[str, Any]]]:
    cfg = getattr(s.cfg.collectors, SECTION, None)
    if cfg is None:
        return []
    return [(kind, p.model_dump()) for kind in KINDS for p in getattr(cfg, kind)]


def _reload(s: Any) -> None:
    s.runtime.load_monitors()


async def _collect_now(s: Any) -> None:
    """The probes run at once after a change, so the page shows the new one's first answer."""
    if s.scheduler is not None and SECTION in s.scheduler.collectors:
        await s.scheduler.run_once(SECTION)


@router.get("/monitors", response_class=HTMLResponse, name="monitors")
def monitors_page(s: SiteDep, request: Request, edit: int | None = None, kind: str = "http") -> HTMLResponse:
    snap, _ = s.view(request)
    if snap.host != s.cfg.host:
        raise HTTPException(404, "monitors are made on the host that runs them")
    saved = list_monitors(s.engine, s.cfg.host, SECTION)
    state = snap.states.get(SECTION)
    now = {p.name: p for p in getattr(state, "probes", [])}
    editing: SavedMonitor | None = next((m for m in saved if m.id == edit), None)
    kind = editing.kind if editing else kind if kind in KINDS else "http"
    return s.render(request, "monitors.html", configured=_config_probes(s), saved=saved, now=now,
                    kinds=KIND_WORDS, kind=kind, editing=editing,
                    fields=form_fields(KINDS[kind], editing.spec if editing else None),
                    csrf=s.csrf_token(request), notice=request.query_params.get("saved"),
                    can_collect=s.scheduler is not None and SECTION in s.scheduler.collectors)


async def _save(s: Any, request: Request, kind: str, monitor_id: int | None) -> Response:
    if kind not in KINDS:
        raise HTTPException(400, f"no monitor kind {kind!r}: one of {', '.join(KINDS)}")
    form = {k: str(v) for k, v in (await request.form()).items()}
    try:
        spec = parse_form(KINDS[kind], form)
    except ValidationError as exc:
        raise HTTPException(400, f"{KIND_WORDS[kind]} not saved: {errors_in_words(exc)}") from None
    if spec["name"] in {p["name"] for _, p in _config_probes(s)}:
        raise HTTPException(400, f"the config file has a probe named {spec['name']!r}: choose another name")
    try:
        await run_in_threadpool(save_monitor, s.engine, s.cfg.host, SECTION, kind, spec, monitor_id)
    except MonitorError as exc:
        raise HTTPException(400, str(exc)) from None
    await run_in_threadpool(_reload, s)
    await _collect_now(s)
    base = request.scope.get("rackpulse_base", "")
    return RedirectResponse(f"{base}/monitors?saved={quote(spec['name'])}", status_code=303)


@router.post("/monitors/add", dependencies=[Checked])
async def monitor_add(s: SiteDep, request: Request, kind: str = "http") -> Response:
    return await _save(s, request, kind, None)


@router.post("/monitors/{monitor_id}/edit", dependencies=[Checked])
async def monitor_edit(s: SiteDep, request: Request, monitor_id: int) -> Response:
    found = next((m for m in list_monitors(s.engine, s.cfg.host, SECTION) if m.id == monitor_id), None)
    if found is None:
        raise HTTPException(404, f"no monitor {monitor_id} made in the browser")
    return await _save(s, request, found.kind, monitor_id)


@router.post("/monitors/{monitor_id}/delete", dependencies=[Checked])
async def monitor_delete(s: SiteDep, request: Request, monitor_id: int) -> Response:
    if not await run_in_threadpool(delete_monitor, s.engine, s.cfg.host, monitor_id):
        raise HTTPException(404, f"no monitor {monitor_id} made in the browser")
    await run_in_threadpool(_reload, s)
    await _collect_now(s)
    base = request.scope.get("rackpulse_base", "")
    return RedirectResponse(f"{base}/monitors", status_code=303)
