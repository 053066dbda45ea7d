"""HAProxy: each instance's frontends, backends and servers from `show stat` (and its version and
uptime from `show info`) on its stats socket, or the stats page's CSV. Read-only: only those two
`show` commands are ever sent. An instance that cannot be read is said on its own line and holds
its alerts; the other instances are read as usual. No instance configured is "no data"."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    ParseError,
    Runner,
    Sample,
    host_path,
)
from collectors.context import HostContext
from collectors.network.haproxy.config import HaproxyConfig, HaproxyInstance
from collectors.network.haproxy.parse import StatRow, parse_info, parse_stat
from collectors.network.haproxy.state import (
    HaproxyInstanceView,
    HaproxyProxyView,
    HaproxyServerView,
    HaproxyState,
)

# A server in maintenance or draining was taken out on purpose: not counted as a server that
# should be up (and never an alert).
ON_PURPOSE = ("MAINT", "DRAIN")
METRICS: dict[str, MetricSpec] = {
    "rackpulse_haproxy_up": MetricSpec("1 while the instance's stats can be read.", states=("unreadable", "read")),
    "rackpulse_haproxy_backend_servers_up": MetricSpec("A backend's servers up (not counting those in maintenance)."),
    "rackpulse_haproxy_backend_servers": MetricSpec("A backend's servers, not counting those in maintenance."),
    "rackpulse_haproxy_server_up": MetricSpec("1 while the server is up (UP, or going down but still up).",
                                              states=("down", "up")),
    "rackpulse_haproxy_sessions": MetricSpec("A frontend's or backend's current sessions."),
    "rackpulse_haproxy_sessions_limit": MetricSpec("A frontend's or backend's session limit (maxconn)."),
    "rackpulse_haproxy_queue": MetricSpec("Requests queued for a backend or server."),
    "rackpulse_haproxy_responses_5xx_total": MetricSpec("HTTP responses with a 5xx status a frontend or backend "
                                                        "sent.", "counter"),
}


def server_up(status: str) -> bool:
    """UP, "UP 1/3" (going down, still up), NOLB, "no check" (never checked: taken as up)."""
    return status.startswith(("UP", "NOLB", "no check"))


def on_purpose(status: str) -> bool:
    return status.startswith(ON_PURPOSE)


class HaproxyCollector(Collector):
    name: ClassVar[str] = "haproxy"
    metrics: ClassVar[dict[str, MetricSpec]] = METRICS

    def __init__(self, cfg: HaproxyConfig, host_root: Path = Path("/")) -> None:
        self.cfg, self.host_root = cfg, host_root
        # What answers a command: the socket or the page; the demo's scene in `rackpulse demo`.
        self.ask: Callable[[HaproxyInstance, str], str] = self._ask

    def collect(self) -> CollectResult:
        if not self.cfg.instances:
            raise NoData("no HAProxy instance configured in [[collectors.haproxy.instances]]")
        result = CollectResult()
        views = [self._read(inst) for inst in self.cfg.instances]
        if len(views) == 1 and views[0].error:
            # the only instance: the collector cannot read its source (collector_down says so)
            raise CollectorError(f"haproxy {views[0].name}: {views[0].error}")
        for v in views:
            samples(v, result)
        result.state = HaproxyState(instances=views, sessions_near=self.cfg.sessions_near)
        return result

    def _read(self, inst: HaproxyInstance) -> HaproxyInstanceView:
        where = str(inst.socket) if inst.socket else inst.url
        try:
            rows = parse_stat(self.ask(inst, "show stat"))
            info = parse_info(self.ask(inst, "show info")) if inst.socket else {}
        except (OSError, CollectorError) as exc:
            return HaproxyInstanceView(name=inst.name, where=where, error=_words(exc, inst))
        uptime = info.get("Uptime_sec")
        return HaproxyInstanceView(name=inst.name, where=where, version=info.get("Version"),
                                   uptime_seconds=float(uptime) if uptime and uptime.isdigit() else None,
                                   proxies=proxies(rows), servers=servers(rows))

    def _ask(self, inst: HaproxyInstance, command: str) -> str:
        limit = self.cfg.max_bytes
        if inst.url:
            with urllib.request.urlopen(inst.url, timeout=inst.timeout) as r:  # noqa: S310 - http(s) only (config)
                body = r.read(limit + 1)
        else:
            assert inst.socket is not None
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(inst.timeout)
                s.connect(str(host_path(self.host_root, str(inst.socket))))
                s.sendall(command.encode() + b"\n")
                chunks, size = [], 0
                while size <= limit:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                body = b"".join(chunks)
        if len(body) > limit:
            raise ParseError(f"{command}: the answer is larger than max_bytes ({limit} bytes); not read")
        return body.decode("utf-8", "replace")


def _words(exc: Exception, inst: HaproxyInstance) -> str:
    where = f"the stats socket {inst.socket}" if inst.socket else inst.url
    if isinstance(exc, FileNotFoundError):
        return f"no socket at {inst.socket} (is HAProxy running, with `stats socket` in its global section?)"
    if isinstance(exc, PermissionError):
        return f"permission denied on {where}: rackpulse's user needs the socket's group (its `mode` and `group`)"
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused on {where}"
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"{where} did not answer within {inst.timeout:g} s"
    if isinstance(exc, urllib.error.HTTPError):
        return f"{inst.url} answered {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"{inst.url}: {exc.reason}"
    return str(exc)


def proxies(rows: list[StatRow]) -> list[HaproxyProxyView]:
    out = []
    for r in rows:
        if r.kind not in ("frontend", "backend"):
            continue
        mine = [s for s in rows if s.kind == "server" and s.proxy == r.proxy and not on_purpose(s.status)]
        out.append(HaproxyProxyView(name=r.proxy, kind=r.kind, status=r.status, sessions=r.sessions, limit=r.limit,
                                    queue=r.queue, servers=len(mine), servers_up=sum(server_up(s.status) for s in mine),
                                    responses_5xx=r.responses_5xx))
    return out


def servers(rows: list[StatRow]) -> list[HaproxyServerView]:
    return [HaproxyServerView(backend=r.proxy, name=r.name, status=r.status, sessions=r.sessions, queue=r.queue,
                              backup=bool(r.backup), check=": ".join(x for x in (r.check_desc, r.last_check) if x))
            for r in rows if r.kind == "server"]


def samples(v: HaproxyInstanceView, result: CollectResult) -> None:
    s, inst = result.samples, {"instance": v.name}
    s.append(Sample.of("rackpulse_haproxy_up", v.error is None, **inst))
    for p in v.proxies:
        lab = {**inst, "proxy": p.name, "kind": p.kind}
        if p.sessions is not None:
            s.append(Sample.of("rackpulse_haproxy_sessions", p.sessions, **lab))
        if p.limit:
            s.append(Sample.of("rackpulse_haproxy_sessions_limit", p.limit, **lab))
        if p.queue is not None and p.kind == "backend":
            s.append(Sample.of("rackpulse_haproxy_queue", p.queue, **lab))
        if p.responses_5xx is not None:
            s.append(Sample.of("rackpulse_haproxy_responses_5xx_total", p.responses_5xx, **lab))
        if p.kind == "backend" and p.servers is not None and p.servers_up is not None:
            s.append(Sample.of("rackpulse_haproxy_backend_servers", p.servers, **lab))
            s.append(Sample.of("rackpulse_haproxy_backend_servers_up", p.servers_up, **lab))
    for srv in v.servers:
        lab = {**inst, "proxy": srv.backend, "server": srv.name}
        if not on_purpose(srv.status):
            s.append(Sample.of("rackpulse_haproxy_server_up", server_up(srv.status), **lab))
        result.entities.append(Entity("haproxy_server", f"{v.name}/{srv.backend}/{srv.name}", {"status": srv.status}))


def build(c: HaproxyConfig, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.haproxy]; it runs no command (the socket or URL)."""
    return HaproxyCollector(c, host.root)
