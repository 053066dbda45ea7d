"""/monitors: the probes and heartbeats, with the ones made here added, changed and removed in
the browser (a heartbeat made here gets its secret URL shown once, and a new one on request).

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
from pydantic import BaseModel, BeforeValidator, ValidationError

from app.storage.monitors import MonitorError, SavedMonitor, delete_monitor, list_monitors, save_monitor
from app.web.error_pages import in_words
from app.web.site import Checked, SiteDep
from collectors.probes.checks.collector import KINDS as PROBE_KINDS
from collectors.probes.heartbeats.config import Heartbeat

router = APIRouter()
SECTION = "probes"
# Each kind of monitor: the config section it is an entry of, and the model that checks it.
KINDS: dict[str, type[BaseModel]] = {**PROBE_KINDS, "heartbeat": Heartbeat}
SECTIONS = {**{k: SECTION for k in PROBE_KINDS}, "heartbeat": "heartbeats"}
KIND_WORDS = {"ping": "Ping (fping)", "http": "HTTP(S) check", "tcp": "TCP port (and TLS certificate)",
              "heartbeat": "Heartbeat (a cron job calls a URL)"}


# What a form's fields are called, in words (a field not named here reads as its key with spaces).
FIELD_WORDS = {
    "target": "host or address", "interface": "from interface", "count": "pings each round",
    "interval_ms": "between pings (ms)", "loss_warning": "warn from packet loss (%)",
    "rtt_warning_ms": "warn from round trip (ms)", "url": "URL", "expect_status": "expected HTTP status",
    "expect_text": "text the page must contain", "timeout": "timeout (seconds)",
    "verify_tls": "check the TLS certificate", "tls": "TLS handshake (and the certificate's expiry)",
    "every": "the job runs every", "grace": "late after (grace)", "public": "shown on a public /status",
}


@dataclass(frozen=True)
class Field:
    """One input of a monitor's form, from the model's field."""

    name: str
    label: str
    input: str  # text, number, checkbox, url
    value: Any
    required: bool
    step: str = "any"
    error: str | None = None  # what is wrong with the value sent, shown beside the field


def form_fields(model: type[BaseModel], values: dict[str, object] | None = None,
                errors: dict[str, str] | None = None) -> list[Field]:
    values, errors = values or {}, errors or {}
    out = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        kind = "checkbox" if ann is bool else "number" if ann in (int, float) else "text"
        if any(isinstance(m, BeforeValidator) for m in info.metadata):
            kind = "text"  # a span: "24h" as well as 86400
        if name == "url":
            kind = "url"
        default = None if info.is_required() else info.default
        out.append(Field(name, FIELD_WORDS.get(name, name.replace("_", " ")), kind, values.get(name, default), info.is_required(),
                         "1" if ann is int else "any", errors.get(name)))
    return out


def parse_form(model: type[BaseModel], form: dict[str, str]) -> dict[str, object]:
    """The posted form as the model's entry: an empty field is its default, a checkbox absent is
    false; ValidationError (which names the field) when the model refuses it."""
    raw: dict[str, object] = {}
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


def errors_by_field(exc: ValidationError) -> dict[str, str]:
    """Each refused field's first complaint, in words (error_pages.in_words)."""
    out: dict[str, str] = {}
    for e in exc.errors():
        name = str(e["loc"][0]) if e["loc"] else "form"
        out.setdefault(name, in_words(str(e["msg"])))
    return out


def _config_probes(s: Any) -> list[tuple[str, dict[str, object]]]:
    """The config file's probes and heartbeats: (kind, entry)."""
    out = []
    cfg = getattr(s.cfg.collectors, SECTION, None)
    if cfg is not None:
        out += [(kind, p.model_dump()) for kind in PROBE_KINDS for p in getattr(cfg, kind)]
    beats = getattr(s.cfg.collectors, "heartbeats", None)
    if beats is not None:
        out += [("heartbeat", h.model_dump()) for h in beats.checks]
    return out


def _saved(s: Any) -> list[SavedMonitor]:
    return [m for m in list_monitors(s.engine, s.cfg.host) if m.section in (SECTION, "heartbeats")]


def _reload(s: Any) -> None:
    s.runtime.load_monitors()


async def _collect_now(s: Any, section: str = SECTION) -> None:
    """The probes run at once after a change, so the page shows the new one's first answer."""
    if s.scheduler is not None and section in s.scheduler.collectors:
        await s.scheduler.run_once(section)


@router.get("/monitors", response_class=HTMLResponse, name="monitors")
def monitors_page(s: SiteDep, request: Request, edit: int | None = None, kind: str = "http") -> HTMLResponse:
    snap, _ = s.view(request)
    if snap.host != s.cfg.host:
        raise HTTPException(404, "monitors are made on the host that runs them")
    return _render(s, request, edit, kind)


def _render(s: Any, request: Request, edit: int | None = None, kind: str = "http", new_url: str | None = None,
            notice: str | None = None, sent: dict[str, object] | None = None,
            errors: dict[str, str] | None = None) -> HTMLResponse:
    snap, _ = s.view(request)
    saved = _saved(s)
    now: dict[str, object] = {p.name: p for p in getattr(snap.states.get(SECTION), "probes", [])}
    beats = {b.name: b for b in getattr(snap.states.get("heartbeats"), "beats", [])}
    editing: SavedMonitor | None = next((m for m in saved if m.id == edit), None)
    kind = editing.kind if editing else kind if kind in KINDS else "http"
    return s.render(request, "monitors.html", configured=_config_probes(s), saved=saved, now=now, beats=beats,
                    kinds=KIND_WORDS, kind=kind, editing=editing,
                    fields=form_fields(KINDS[kind], sent if sent is not None else editing.spec if editing else None,
                                       errors),
                    problem=(errors or {}).get("form"),
                    csrf=s.csrf_token(request), notice=notice or request.query_params.get("saved"),
                    new_url=new_url, can_collect=s.scheduler is not None and SECTION in s.scheduler.collectors)


async def _save(s: Any, request: Request, kind: str, monitor_id: int | None) -> Response:
    if kind not in KINDS:
        raise HTTPException(400, f"no monitor kind {kind!r}: one of {', '.join(KINDS)}")
    form = {k: str(v) for k, v in (await request.form()).items()}
    def refused(errors: dict[str, str]) -> HTMLResponse:
        # The form again, as it was sent, each refusal beside its field: nothing typed is lost.
        sent: dict[str, object] = {k: (v == "on") if KINDS[kind].model_fields[k].annotation is bool else v
                                   for k, v in form.items() if k in KINDS[kind].model_fields}
        page = _render(s, request, monitor_id, kind, sent=sent, errors=errors)
        page.status_code = 400
        return page

    try:
        spec = parse_form(KINDS[kind], form)
    except ValidationError as exc:
        return refused(errors_by_field(exc))
    if spec["name"] in {p["name"] for k, p in _config_probes(s) if SECTIONS[k] == SECTIONS[kind]}:
        return refused({"name": f"the config file has a {kind if kind == 'heartbeat' else 'probe'} named "
                                f"{spec['name']!r}: choose another name"})
    try:
        await run_in_threadpool(save_monitor, s.engine, s.cfg.host, SECTIONS[kind], kind, spec, monitor_id)
    except MonitorError as exc:
        return refused({"form": str(exc)})
    await run_in_threadpool(_reload, s)
    await _collect_now(s, SECTIONS[kind])
    if kind == "heartbeat" and monitor_id is None:
        return await _new_url(s, request, str(spec["name"]))  # shown once, in this answer: never in a URL or a log
    base = request.scope.get("rackpulse_base", "")
    return RedirectResponse(f"{base}/monitors?saved={quote(str(spec['name']))}", status_code=303)


async def _new_url(s: Any, request: Request, name: str) -> HTMLResponse:
    from app.storage.heartbeats import issue

    token = await run_in_threadpool(issue, s.engine, s.cfg.host, name)
    base = (s.cfg.alerts.base_url or str(request.base_url)).rstrip("/")
    return _render(s, request, new_url=f"{base}/ping/{token}", notice=name)


@router.post("/monitors/heartbeat/{name}/url", dependencies=[Checked])
async def heartbeat_url(s: SiteDep, request: Request, name: str) -> Response:
    """A new secret URL for a heartbeat (the config file's or one made here); the old one stops working."""
    if name not in {p["name"] for k, p in _config_probes(s) if k == "heartbeat"} | {
            m.name for m in _saved(s) if m.kind == "heartbeat"}:
        raise HTTPException(404, f"no heartbeat {name!r}")
    return await _new_url(s, request, name)


@router.post("/monitors/add", dependencies=[Checked])
async def monitor_add(s: SiteDep, request: Request, kind: str = "http") -> Response:
    return await _save(s, request, kind, None)


@router.post("/monitors/{monitor_id}/edit", dependencies=[Checked])
async def monitor_edit(s: SiteDep, request: Request, monitor_id: int) -> Response:
    found = next((m for m in _saved(s) if m.id == monitor_id), None)
    if found is None:
        raise HTTPException(404, f"no monitor {monitor_id} made in the browser")
    return await _save(s, request, found.kind, monitor_id)


@router.post("/monitors/{monitor_id}/delete", dependencies=[Checked])
async def monitor_delete(s: SiteDep, request: Request, monitor_id: int) -> Response:
    found = next((m for m in _saved(s) if m.id == monitor_id), None)
    if found is None or not await run_in_threadpool(delete_monitor, s.engine, s.cfg.host, monitor_id):
        raise HTTPException(404, f"no monitor {monitor_id} made in the browser")
    if found.kind == "heartbeat":
        from app.storage.heartbeats import forget

        await run_in_threadpool(forget, s.engine, s.cfg.host, found.name)  # its URL stops working
    await run_in_threadpool(_reload, s)
    await _collect_now(s, found.section)
    base = request.scope.get("rackpulse_base", "")
    return RedirectResponse(f"{base}/monitors", status_code=303)
