"""What is wrong with a systemd unit, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

import time
from collections.abc import Sequence

from collectors.findings import BAD, WARN, Finding, Judging, Monitor, RuleSpec, Tile, about, level_of
from collectors.host.systemd.state import SystemdState, UnitView
from collectors.plugin import View

RULES = (
    RuleSpec("unit_failed", "critical", title="Service failed"),
    RuleSpec("unit_restarting", "warning", title="Service restarting"),
    RuleSpec("timer_stale", "warning", title="Timer overdue"),
)


def _ago(seconds: float) -> str:
    h = int(seconds // 3600)
    return f"{h // 24} days {h % 24} h" if h >= 48 else f"{h} h {int(seconds % 3600 // 60)} min"


def unit_findings(u: UnitView, state: SystemdState, now: float) -> list[Finding]:
    labels = {"unit": u.unit}
    out = []
    if u.active == "failed":
        why = f" ({u.result}{f', exit status {u.exit_status}' if u.exit_status else ''})" if u.result else ""
        out.append(Finding(BAD, f"systemd unit {u.unit} failed{why}: journalctl -u {u.unit}", "unit_failed", u.unit,
                           labels))
    limit = state.restart_count or 3
    if u.restarts_10m is not None and u.restarts_10m > limit:
        out.append(Finding(WARN, f"systemd unit {u.unit} restarted {u.restarts_10m} times in 10 minutes",
                           "unit_restarting", u.unit, labels))
    if u.stale:
        last = (f"last succeeded {_ago(now - u.last_success)} ago" if u.last_success
                else "has not succeeded since the timer started")
        out.append(Finding(WARN, f"timer {u.unit}: {u.triggers or 'its service'} {last} (stale after "
                                 f"{_ago(state.stale_after or 0)})", "timer_stale", u.unit,
                           {**labels, "service": u.triggers}))
    return out


def findings(state: SystemdState, judging: Judging) -> list[Finding]:
    return [f for u in state.units for f in unit_findings(u, state, judging.now)]


def all_clear(state: SystemdState, judging: Judging) -> str | None:
    watched = [u for u in state.units if u.watched]
    timers = [u for u in watched if u.triggers]
    if not watched:
        return "no failed units" if judging.status is not None and judging.status.up else None
    said = f"{len(watched)} watched units fine"
    return said + (f", {len(timers)} timers on time" if timers else "")


def view(state: SystemdState, found: Sequence[Finding]) -> View:
    rows = sorted(state.units, key=lambda u: (u.active != "failed", not u.watched, u.unit))
    return {"units": [(u, level_of(about(found, unit=u.unit))) for u in rows], "now": time.time()}


TILE = Tile("Services", "/host#systemd", all_clear)


def monitors(state: SystemdState) -> list[Monitor]:
    """The watched units marked public, for /status: up while active (a timer while waiting on time)."""
    return [Monitor(u.unit, "service", u.active == "active" and not u.stale, u.description,
                    f"{u.active} ({u.result})" if u.active == "failed" else None, "rackpulse_systemd_unit_active",
                    {"unit": u.unit}) for u in state.units if u.public]
