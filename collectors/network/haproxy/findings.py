"""What is wrong with HAProxy, in the words the tile, the alert and the webhook share: a backend
with no server up (every site behind it is down), a server whose check fails (with the check's
reason), and a frontend or backend near its session limit (new connections wait or are refused)."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.network.haproxy.collector import on_purpose, server_up
from collectors.network.haproxy.state import HaproxyInstanceView, HaproxyState
from collectors.plugin import View

RULES = (
    RuleSpec("haproxy_backend_down", "critical", 0, title="HAProxy backend down"),
    RuleSpec("haproxy_server_down", "warning", 0, title="HAProxy server down"),
    RuleSpec("haproxy_sessions_near_limit", "warning", 120, title="HAProxy near its session limit"),
)


def instance_findings(i: HaproxyInstanceView, near: float) -> list[Finding]:
    out = []
    down_backends = {p.name for p in i.proxies if p.kind == "backend" and p.servers and p.servers_up == 0}
    for p in i.proxies:
        labels = {"instance": i.name, "proxy": p.name}
        if p.name in down_backends:
            out.append(Finding(BAD, f"HAProxy {i.name}: backend {p.name} has no server up (of {p.servers})",
                               "haproxy_backend_down", f"{i.name}/{p.name}", labels))
        if p.limit and p.sessions is not None and p.sessions >= near * p.limit:
            out.append(Finding(WARN, f"HAProxy {i.name}: {p.kind} {p.name} has {p.sessions} of its {p.limit} "
                                     f"sessions", "haproxy_sessions_near_limit", f"{i.name}/{p.kind}/{p.name}",
                               {**labels, "kind": p.kind}))
    for s in i.servers:
        if server_up(s.status) or on_purpose(s.status):
            continue
        why = f": {s.check}" if s.check else ""
        out.append(Finding(WARN, f"HAProxy {i.name}: server {s.name} of {s.backend} is {status_words(s.status)}{why}",
                           "haproxy_server_down", f"{i.name}/{s.backend}/{s.name}",
                           {"instance": i.name, "proxy": s.backend, "server": s.name, "check": s.check or None}))
    return out


def findings(state: HaproxyState, judging: Judging) -> list[Finding]:
    out = []
    for i in state.instances:
        if i.error:
            out.append(Finding(BAD, f"HAProxy {i.name} cannot be read: {i.error}"))
        else:
            out += instance_findings(i, state.sessions_near or 0.9)
    return out


def all_clear(state: HaproxyState, judging: Judging) -> str | None:
    read = [i for i in state.instances if not i.error]
    if not read:
        return None
    backends = [p for i in read for p in i.proxies if p.kind == "backend" and p.servers]
    up = sum(p.servers_up or 0 for p in backends)
    total = sum(p.servers or 0 for p in backends)
    return f"{len(backends)} backend{'s' if len(backends) != 1 else ''} up, {up} of {total} servers up"


WORDS = {"UP": "up", "DOWN": "down", "OPEN": "open", "FULL": "full (at its maxconn)", "STOP": "stopped",
         "MAINT": "in maintenance", "DRAIN": "draining", "NOLB": "up, taking no new traffic",
         "no check": "up, not checked"}


def status_words(status: str) -> str:
    """HAProxy's state in words, its own beside them: "going down (UP 1/3)", "in maintenance (MAINT)"."""
    head = status.split(" ")[0].split("(")[0]
    if status.startswith("UP ") and "/" in status:
        words = "going down"
    elif status.startswith("DOWN ") and "/" in status:
        words = "coming up"
    else:
        words = WORDS.get(status, WORDS.get(head, status.lower()))
    return words if words == status.lower() else f"{words} ({status})"


def view(state: HaproxyState, found: Sequence[Finding]) -> View:
    return {"instances": [(i, level_of(about(found, instance=i.name)) if not i.error else BAD,
                           [(p, level_of(about(found, instance=i.name, proxy=p.name)), status_words(p.status))
                            for p in i.proxies],
                           [(s, level_of(about(found, instance=i.name, proxy=s.backend, server=s.name)),
                             status_words(s.status)) for s in i.servers])
                          for i in state.instances]}


TILE = Tile("HAProxy", "/network#haproxy", all_clear)
CHARTS: dict[str, ChartSpec] = {}
