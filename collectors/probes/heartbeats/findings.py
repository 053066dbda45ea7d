"""What is wrong with the jobs that ping, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

import time
from collections.abc import Sequence

from collectors.findings import BAD, ChartSpec, Finding, Judging, Monitor, RuleSpec, Tile, about, level_of
from collectors.plugin import View
from collectors.probes.heartbeats.state import Beat, HeartbeatsState

# A missed backup is told at once: `grace` already is its patience.
RULES = (
    RuleSpec("heartbeat_missed", "critical", 0, 24, title="Job heartbeat missed"),
    RuleSpec("heartbeat_failed", "critical", 0, 24, title="Job reported failure"),
)


def span(seconds: float) -> str:
    """"26 h", "3 h 10 min", "45 min", "30 s"."""
    s = int(max(seconds, 0))
    if s >= 2 * 86400:
        return f"{s // 86400} d {s % 86400 // 3600} h" if s % 86400 >= 3600 else f"{s // 86400} d"
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60} min" if s % 3600 >= 60 else f"{s // 3600} h"
    return f"{s // 60} min" if s >= 60 else f"{s} s"


def beat_findings(b: Beat, now: float) -> list[Finding]:
    labels = {"heartbeat": b.name}
    if b.status == "failed":
        line = b.log.strip().splitlines()[-1] if b.log.strip() else "no log sent"
        return [Finding(BAD, f"job {b.name} failed {span(now - (b.last_fail or now))} ago: {line}",
                        "heartbeat_failed", b.name, {**labels, "log": b.log or None})]
    if b.status == "late":
        if b.last_success is None and b.last_fail is None:
            said = f"never pinged in the {span(now - (b.since or now))} since it was set up"
        else:
            last = max(t for t in (b.last_success, b.last_fail) if t is not None)
            said = f"last ping {span(now - last)} ago ({time.strftime('%Y-%m-%d %H:%M', time.localtime(last))})"
        every = "?" if b.every is None else span(b.every)
        return [Finding(BAD, f"job {b.name} missed: {said}; it runs every {every}",
                        "heartbeat_missed", b.name, labels)]
    return []


def findings(state: HeartbeatsState, judging: Judging) -> list[Finding]:
    return [f for b in state.beats for f in beat_findings(b, judging.now)]


def all_clear(state: HeartbeatsState, judging: Judging) -> str | None:
    if not state.beats:
        return None
    return f"{len(state.beats)} job{'s' if len(state.beats) != 1 else ''} on time"


def view(state: HeartbeatsState, found: Sequence[Finding]) -> View:
    return {"beats": [(b, level_of(about(found, heartbeat=b.name))) for b in state.beats]}


TILE = Tile("Heartbeats", "/probes", all_clear)
CHARTS: dict[str, ChartSpec] = {}


def monitors(state: HeartbeatsState) -> list[Monitor]:
    """Each heartbeat for /status: up while its job pings on time; shown to a reader who is not
    signed in only when it is `public` (a job's name can say what a home runs)."""
    return [Monitor(b.name, "heartbeat", b.status not in ("late", "failed"), f"every {b.every:g} s" if b.every else "",
                    b.log.splitlines()[-1] if b.status == "failed" and b.log else None, "rackpulse_heartbeat_up",
                    {"heartbeat": b.name}, public=b.public) for b in state.beats]
