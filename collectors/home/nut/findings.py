"""What is wrong with a UPS, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

import math
from typing import Any

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, items

RULES = (RuleSpec("ups_on_battery", "warning", 30), RuleSpec("ups_low_battery", "critical"))


def charge(u: dict[str, Any]) -> str:
    return f"{u['charge']:.0f}% charge" if u.get("charge") is not None else "charge unknown"


def runtime(u: dict[str, Any]) -> str:
    s = u.get("runtime")
    if s is None or not math.isfinite(s):
        return "runtime unknown"
    return f"about {int(s) // 60} min left" if s >= 60 else f"about {int(s)} s left"


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    out = []
    for u in items(state, "ups"):
        name = u["name"]
        if not u.get("up"):
            out.append(Finding(BAD, f"UPS {name}: {u.get('error')}"))
            continue
        if u["low_battery"]:
            out.append(Finding(BAD, f"UPS {name} LOW BATTERY: {charge(u)}, {runtime(u)}", "ups_low_battery", name,
                               {"ups": name}))
        if u["on_battery"]:
            out.append(Finding(WARN, f"UPS {name} on battery ({charge(u)})", "ups_on_battery", name, {"ups": name}))
    return out


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    return "on mains" if items(state, "ups") else None


TILE = Tile("Power", "/power", all_clear)

CHARTS: dict[str, ChartSpec] = {"ups": (("ups",), [("Battery charge", "rackpulse_ups_battery_charge_ratio", {"ups": 0}),
                             ("Battery voltage", "rackpulse_ups_battery_voltage_volts", {"ups": 0})])}
