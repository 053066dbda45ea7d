"""What is wrong with md arrays, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from typing import Any

from collectors.findings import (
    BAD,
    WARN,
    ChartSpec,
    Finding,
    Judging,
    RuleSpec,
    Tile,
    items,
    level_of,
)

RULES = (RuleSpec("array_degraded", "critical", 0, 12), RuleSpec("array_member_failed", "critical", 0, 12))
REBUILDING = ("resync", "recovery", "reshape", "repair")  # a check is routine, not a finding


def describe_member(m: dict[str, Any]) -> str:
    """Where a member is and what it is, in words; what is not known is said to be unknown."""
    bay = m.get("bay") or "bay unknown"
    model = m.get("model") or "model unknown"
    serial = f"serial {m['serial']}" if m.get("serial") else "serial unknown (not readable from the disk)"
    was = f", was {m['device']}" if m.get("device") else ""
    return f"{bay}, {model} {serial}{was}"


def pull_list(a: dict[str, Any]) -> list[dict[str, Any]]:
    """Members the user must act on: failed or missing ones, with their last known bay."""
    return [m for m in a["members"] if m["state"] == "failed" or (m["state"] == "missing" and m.get("device"))]


def member_labels(members: list[dict[str, Any]]) -> dict[str, Any]:
    """A single member's identity, for receivers to route on; none when several are out."""
    if len(members) != 1:
        return {}
    m = members[0]
    return {"serial": m.get("serial"), "bay": m.get("bay"), "device": m.get("device"), "model": m.get("model")}


def array_findings(a: dict[str, Any]) -> list[Finding]:
    name, pulls = a["name"], pull_list(a)
    out = []
    if a["degraded"] or not a["active"]:
        where = "; ".join(describe_member(m) for m in pulls)
        text = (f"{name} {'inactive' if not a['active'] else 'degraded'} ({a['disks_working']}/{a['disks_total']})"
                + (f": {where}" if where else ""))
        out.append(Finding(BAD, text, "array_degraded", name, {"array": name, **member_labels(pulls)}))
    else:
        for m in pulls:
            out.append(Finding(BAD, f"{name}: member {m['state']}: {describe_member(m)}", "array_member_failed",
                               f"{name}:{m.get('serial') or m['device']}", {"array": name, **member_labels([m])}))
        if a["array_state"] in ("inactive", "broken"):
            out.append(Finding(BAD, f"{name} {a['array_state']}"))
    if a["active"] and a["sync_action"] in REBUILDING:
        done = f"{a['sync_ratio'] * 100:.1f}%" if a["sync_ratio"] is not None else (a["sync_waiting"] or "")
        out.append(Finding(WARN, f"{name} {a['sync_action']} {done}".rstrip()))
    return out


def array_level(a: dict[str, Any]) -> str:
    return level_of(array_findings(a))


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    return [f for a in items(state, "arrays") for f in array_findings(a)]


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    arrays = items(state, "arrays")
    if arrays:
        return f"{len(arrays)} arrays clean"
    return "no arrays seen" if judging.status is not None else None


TILE = Tile("Arrays", "/disks", all_clear)

CHARTS: dict[str, ChartSpec] = {"md_array": (("array",), [("Degraded (1 = yes)", "rackpulse_md_array_degraded", {"array": 0}),
                                    ("Sync progress", "rackpulse_md_array_sync_completed_ratio", {"array": 0})])}


def bay_devices(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The members to pull, with their last known bay (the bay map and the disks page's callouts)."""
    return [{"bay": m.get("bay"), "serial": m.get("serial"), "model": m.get("model"), "device": m.get("device"),
             "state": m["state"], "level": BAD, "pull": True, "where": a["name"]}
            for a in items(state, "arrays") for m in pull_list(a)]
