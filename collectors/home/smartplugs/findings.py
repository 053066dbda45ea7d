"""What is wrong with a smart plug, in the words the tile, the alert and the webhook share:
mostly that it went quiet, which is "no data", never 0 W."""

from __future__ import annotations

import time
from collections.abc import Sequence

from collectors.findings import WARN, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.home.smartplugs.state import PlugView, SmartplugsState
from collectors.plugin import View

RULES = (
    RuleSpec("smartplug_silent", "warning", title="Smart plug silent"),
)


def _since(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def plug_findings(p: PlugView, now: float) -> list[Finding]:
    labels = {"plug": p.name}
    out = []
    if p.silent:
        heard = f"no data for {_since(now - p.last_seen)}" if p.last_seen else "no data yet"
        out.append(Finding(WARN, f"smart plug {p.name}: {heard}", "smartplug_silent", p.name, labels))
    if p.error:
        out.append(Finding(WARN, f"smart plug {p.name}: its last message could not be read: {p.error}", labels=labels))
    return out


def findings(state: SmartplugsState, judging: Judging) -> list[Finding]:
    out = [f for p in state.plugs for f in plug_findings(p, judging.now)]
    if state.broker_error and state.plugs and all(p.silent for p in state.plugs):
        out.append(Finding(WARN, f"smart plugs: {state.broker_error}"))
    return out


def all_clear(state: SmartplugsState, judging: Judging) -> str | None:
    live = [p for p in state.plugs if p.watts is not None]
    if not live:
        return None
    return f"{len(live)} plug{'s' if len(live) != 1 else ''} drawing {sum(p.watts or 0 for p in live):.0f} W"


TILE = Tile("Power", "/power#smartplugs", all_clear)


def view(state: SmartplugsState, found: Sequence[Finding]) -> View:
    return {"plugs": [(p, level_of(about(found, plug=p.name))) for p in state.plugs],
            "broker_error": state.broker_error, "now": time.time()}
