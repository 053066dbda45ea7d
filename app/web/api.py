"""The JSON API, /metrics for Prometheus and /healthz. Read-only; per host like the pages."""

from __future__ import annotations

import time

from fastapi import APIRouter, Query, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, create_model

from app import views
from app.exposition import CONTENT_TYPE
from app.storage.base import RES_1H, RES_5M
from app.storage.inventory import StoredEntity, StoredEvent
from app.storage.samples import per_second, resolution, thin
from app.web.api_models import HostOut, Series
from app.web.site import RANGES, SiteDep
from collectors import plugins
from collectors.state import StateError

router = APIRouter()
MAX_POINTS = 1500  # a chart's points: about two per pixel of the widest chart a page draws


def accepts_gzip(header: str) -> bool:
    """Whether Accept-Encoding allows gzip (RFC 9110 12.5.3): named, or by "*", with a q above 0."""
    weights: dict[str, float] = {}
    for item in header.lower().split(","):
        name, _, params = item.strip().partition(";")
        q = 1.0
        for p in params.split(";"):
            key, _, value = p.strip().partition("=")
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if name:
            weights[name.strip()] = q
    q = weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0)))
    return q > 0


@router.get("/api/entities/{kind}")
def api_entities(s: SiteDep, request: Request, kind: str) -> list[StoredEntity]:
    """The inventory of one kind (disk, bay, md_array, md_member, bgp_peer, bond_slave, ...)."""
    _, store = s.view(request)
    return store.entities(kind)


@router.get("/api/events")
def api_events(s: SiteDep, request: Request, kind: str | None = None, key: str | None = None,
               limit: int = 200) -> list[StoredEvent]:
    """Inventory changes, newest first, optionally for one entity."""
    _, store = s.view(request)
    return store.events(kind, key, limit=max(1, min(limit, 1000)))


class CollectorOut(BaseModel):
    name: str
    up: bool | None
    no_data: bool
    last_error: str | None
    duration: float | None
    last_success: float | None
    last_run: float | None
    runs: int
    warnings: list[str]


class FindingOut(BaseModel):
    level: str  # ok, warning, failing
    text: str  # the words its tile, alert and webhook say
    rule: str | None  # the alert it raises, if any
    subject: str


# Every installed plug-in's state, each of its own declared type: the schema /api/docs shows.
PluginStates = create_model("PluginStates", **{  # type: ignore[call-overload]
    name: (p.state | None, None) for name, p in plugins().items()})


class ApiState(BaseModel):
    """This host's state: every plug-in's, the findings judged on it, its collectors' last runs.
    (The keys each plug-in kept from before, arrays, disks, bgp_peers ..., follow.)"""

    model_config = ConfigDict(extra="allow")
    host: str
    version: int
    collectors: list[CollectorOut]
    states: PluginStates
    findings: dict[str, list[FindingOut]]


@router.get("/api/state", response_model=ApiState)
async def api_state(s: SiteDep, request: Request) -> dict[str, object]:
    snap, _ = s.view(request)
    legacy: dict[str, object] = {}
    for name, p in plugins().items():
        for key, pick in p.legacy.api.items():
            try:
                legacy[key] = pick(p.typed(snap.states.get(name)))
            except StateError:
                legacy[key] = None
    return {"host": snap.host, "version": snap.version, **legacy,
            "collectors": [CollectorOut(name=st.name, up=st.up, no_data=st.no_data, last_error=st.last_error,
                                        duration=st.duration, last_success=st.last_success, last_run=st.last_run,
                                        runs=st.runs, warnings=st.warnings) for st in snap.statuses.values()],
            # Every plug-in's state and what was found in it (the words its tile and alerts say).
            "states": {name: state for name, state in snap.states.items() if name in plugins()},
            "findings": {name: [FindingOut(level=f.level, text=f.text, rule=f.rule, subject=f.subject)
                                for f in found] for name, found in views.findings(snap).items()}}


def _scaled(v: float | None, scale: float) -> float | None:
    return v if v is None or scale == 1.0 else v * scale


def usual_step(ts: list[int], res: int) -> int:
    """The usual distance between points, at least the resolution's bucket: raw samples come at
    the collector's interval (thinned to a chart's points, further apart than that)."""
    gaps = sorted(b - a for a, b in zip(ts, ts[1:], strict=False))
    return max(res, gaps[len(gaps) // 2]) if gaps else (res or 60)


def part_steps(parts: list[tuple[int, int]], ts: list[int]) -> list[tuple[int, int]]:
    """(from, step) of each part of a chart's points read at its own resolution ((resolution,
    first timestamp) of each, oldest first): a chart shows a gap where points are further apart
    than a few of their own steps. One step for all drew an hour of 5-minute rollups before a few
    minutes of raw samples as loose dots, each point "a gap" from the next."""
    out = []
    for i, (res, first) in enumerate(parts):
        until = parts[i + 1][1] if i + 1 < len(parts) else None
        out.append((first, usual_step([t for t in ts if t >= first and (until is None or t < until)], res)))
    return out


@router.get("/api/series")
def api_series(s: SiteDep, request: Request, metric: str, range: str = "24h",  # noqa: A002
               label: list[str] = Query(default=[]),  # noqa: B008
               scale: float = 1.0, rate: bool = False,
               points: int = Query(MAX_POINTS, ge=50, le=MAX_POINTS)) -> Series:
    """History of one series; ``scale`` multiplies every value (joules -> kWh for a chart);
    ``rate`` turns a counter into its rate per second (bytes sent -> bytes per second);
    ``points``: at most this many (a phone's narrow chart asks for fewer)."""
    _, store = s.view(request)
    labels = dict(item.split("=", 1) for item in label if "=" in item)
    sid = store.find_series(metric, **labels)
    end = int(time.time())
    start = end - RANGES.get(range, 86400)
    # A series with no sample yet (the heat pump's efficiency in the demo's first minute) is an
    # empty chart that says "no data yet", not a 404 and an error in the browser's console.
    res = resolution(end - start, points)
    # A rate is drawn between each point and the one before: the first point of the range has
    # none, so one bucket earlier is read too, and the rates are thinned, not the counter. Else a
    # rate's chart began a bucket or two late (a chart "short" of its range, the demo's 1 h
    # charts), where the counter's own did not.
    lead = max(res, RES_5M) if rate else 0
    parts = store.history_parts(sid, start - lead, end + 1, points) if sid is not None else []
    pts = [p for _, part in parts for p in part]
    pts = thin(per_second(pts) if rate else pts, points)
    ts = [p.ts for p in pts]
    steps = part_steps([(r, part[0].ts) for r, part in parts], ts)
    return Series(metric=metric, labels=labels, range=range, start=start, end=end, step=usual_step(ts, res),
                  steps=steps, resolution={0: "raw", RES_5M: "5m", RES_1H: "1h"}[res], ts=ts,
                  min=[_scaled(p.vmin, scale) for p in pts], avg=[_scaled(p.vavg, scale) for p in pts],
                  max=[_scaled(p.vmax, scale) for p in pts])


@router.get("/api/hosts")
def api_hosts(s: SiteDep) -> list[HostOut]:
    """This host and every agent: version, last contact, clock skew, worst state."""
    return [h.as_json() for h in s.hosts()]


@router.get("/metrics")
async def metrics(s: SiteDep, request: Request) -> Response:
    # Served from the snapshot rendered after the last collection: a scrape never touches a device.
    gz = accepts_gzip(request.headers.get("accept-encoding", ""))
    if s.agents.snapshots:  # agents (all of them since start-up), and their hosts' samples, one family each
        plain, packed = await s.exposition()
        body = packed if gz else plain
    else:
        body = s.snap.metrics_gzip if gz else s.snap.metrics
    return Response(body, media_type=CONTENT_TYPE, headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
                    if gz else {"Vary": "Accept-Encoding"})


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> RedirectResponse:
    """Browsers ask for it before reading the page's icon link: send them to it, not a 404."""
    return RedirectResponse("/static/favicon.svg", status_code=301)


@router.get("/healthz")
async def healthz(request: Request) -> dict[str, str]:
    """Up, and (several servers on one PostgreSQL) whether this one evaluates alerts now; while
    it is set, the notice every page shows (the demo's "History loading")."""
    rt = request.app.state.runtime
    role = "off" if not rt.cfg.alerts.enabled else "leader" if rt.leading else "standby"
    return {"status": "ok", "alerts": role, **({"notice": rt.notice} if rt.notice else {})}


@router.get("/api/docs", include_in_schema=False)
def api_docs(s: SiteDep) -> Response:
    """The API's interactive docs, from Swagger UI as built through the npm lockfile into
    static/vendor: no request leaves this server (FastAPI's default loads it, and a favicon,
    from a CDN, and Swagger UI would ask validator.swagger.io about the schema). The schemas
    section starts folded: drawing every plug-in's state model open took Swagger UI about a
    second more of the page's 2-3 s on a two-core machine (and 20 s on a loaded one)."""
    return get_swagger_ui_html(openapi_url="/openapi.json", title="rackpulse API",
                               swagger_js_url="/static/vendor/swagger-ui-bundle.js",
                               swagger_css_url="/static/vendor/swagger-ui.css",
                               swagger_favicon_url="/static/favicon.svg",
                               swagger_ui_parameters={"validatorUrl": None, "defaultModelsExpandDepth": 0})
