"""What is wrong with a disk, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from collectors.findings import BAD, OK, UNKNOWN, WARN, Finding, Judging, RuleSpec, Tile, items, natural

RULES = (RuleSpec("disk_failing", "critical", 0, 24), RuleSpec("disk_warning", "warning"),
         RuleSpec("disk_hot", "warning", 600))


def disks(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The disks by bay in natural order ("bay 2" before "bay 10"), then by device in the
    kernel's order (sdz before sdaa); disks without a bay last."""
    return sorted(items(state, "disks"), key=lambda d: (d.get("bay") is None, natural(d.get("bay")),
                                                         len(re.sub(r"\d", "", d["device"])), natural(d["device"])))


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    out = []
    for d in disks(state):
        serial = f"serial {d['serial']}" if d.get("serial") else f"serial unknown ({d['key']})"
        where = f"{d.get('bay') or d['device']}: {d.get('model') or 'model unknown'} {serial}"
        labels = {"serial": d.get("serial") or d["key"], "bay": d.get("bay"), "device": d["device"]}
        reasons = "; ".join(d["reasons"][:3])
        if d["health"] == 2:
            out.append(Finding(BAD, f"disk failing, {where}: {reasons}", "disk_failing", d["key"], labels))
        elif d["health"] == 1:
            # A counter that rose, or an attribute at a telling value, is worth a notification;
            # the rest (say, an old error log entry) is shown, not sent.
            notify = any("rose" in r or " = " in r for r in d["reasons"])
            out.append(Finding(WARN, f"disk warning, {where}: {reasons}", "disk_warning" if notify else None,
                               d["key"], labels))
        if d.get("temperature") is not None and d["temperature"] >= judging.disk_hot_celsius:
            out.append(Finding(WARN, f"disk hot, {where}: {d['temperature']:g} °C", "disk_hot", d["key"], labels))
    return out


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    n = len(items(state, "disks"))
    if n:
        return f"{n} disks healthy"
    return "no disks seen" if judging.status is not None else None


TILE = Tile("Disks", "/disks", all_clear)


def bay_devices(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The disks SMART sees, each in its bay when it has one (the bay map, like the storage
    plug-ins'): its health in words, a link to its page, its temperature."""
    out = []
    for d in disks(state):
        temp = d.get("temperature")
        out.append({"bay": d.get("bay"), "serial": d.get("serial"), "model": d.get("model"), "device": d.get("device"),
                    "state": d.get("health_name") or "unknown", "pull": False, "where": "disk",
                    "level": {0: OK, 1: WARN, 2: BAD}.get(d.get("health", -1), UNKNOWN),
                    "href": "/disks/" + quote(str(d["key"]), safe=""),
                    "detail": f"{temp:g} °C" if isinstance(temp, int | float) else None})
    return out
