"""What is wrong with md arrays, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.disks.mdraid.state import Array, MdraidState, Member
from collectors.findings import (
    BAD,
    SOON_DATA,
    SOON_HARDWARE,
    WARN,
    BayDevice,
    ChartSpec,
    Finding,
    Judging,
    RuleSpec,
    Tile,
    about,
    level_of,
)
from collectors.plugin import View

RULES = (
    RuleSpec("array_degraded", "critical", 0, 12, urgency=SOON_DATA, title="RAID array degraded"),
    RuleSpec("array_member_failed", "critical", 0, 12, urgency=SOON_HARDWARE, title="RAID member disk failed"),
    RuleSpec("array_rebuilding", "warning", 0, 24, title="RAID array rebuilding"),
)
# md's sync_action (the kernel's md.rst), as words.
SYNC_WORDS = {"idle": "idle", "resync": "resyncing", "recover": "rebuilding", "recovery": "rebuilding",
              "check": "checking", "repair": "repairing", "reshape": "reshaping", "frozen": "frozen"}
# md's array_state (md.rst): whether writes are pending, not whether the array is whole: "clean"
# sits beside "degraded" on a degraded array, so it is called the write state and said in words.
ARRAY_STATE_WORDS = {"clear": "not set up", "inactive": "inactive", "suspended": "suspended", "readonly": "read-only",
                     "read-auto": "read-only until the first write", "clean": "clean (no writes pending)",
                     "active": "active (writing)", "write-pending": "writes pending", "active-idle": "active, idle",
                     "broken": "broken (a member it needs is gone)"}
REBUILDING = ("resync", "recovery", "reshape", "repair")  # a check is routine, not a finding


def describe_member(m: Member) -> str:
    """Where a member is and what it is, in words; what is not known is said to be unknown."""
    bay = m.bay or "bay unknown"
    model = m.model or "model unknown"
    serial = f"serial {m.serial}" if m.serial else "serial unknown (not readable from the disk)"
    was = f", was {m.device}" if m.device else ""
    return f"{bay}, {model} {serial}{was}"


def describe_new(m: Member) -> str:
    """The disk an array rebuilds onto: its device, and where it sits when known."""
    return f"{m.device} ({m.bay})" if m.bay else str(m.device)


def pull_list(a: Array) -> list[Member]:
    """Members the user must act on: failed or missing ones, with their last known bay."""
    return [m for m in a.members if m.state == "failed" or (m.state == "missing" and m.device)]


def member_labels(name: str, members: list[Member]) -> dict[str, str | None]:
    """The array, and a single member's identity, for receivers to route on; none when several are out."""
    if len(members) != 1:
        return {"array": name}
    m = members[0]
    return {"array": name, "serial": m.serial, "bay": m.bay, "device": m.device, "model": m.model}


def array_findings(a: Array) -> list[Finding]:
    name, pulls = a.name, pull_list(a)
    out = []
    if a.active and a.degraded and not pulls and a.sync_action in ("recover", "recovery"):
        # The failed disk was replaced and md rebuilds onto the new one: being dealt with, so a
        # warning with its progress (its alert resolves when the rebuild finishes: a notification
        # people wait for), not the critical "degraded", which comes back if the rebuild fails.
        # md's sysfs calls the disk being rebuilt onto a spare until it is in sync
        onto = [m for m in a.members if m.state == "rebuilding"] or [m for m in a.members if m.state == "spare"]
        target = f" onto {describe_new(onto[0])}" if len(onto) == 1 else ""
        done = f" {a.sync_ratio * 100:.1f}%" if a.sync_ratio is not None else ""
        return [Finding(WARN, f"{name} rebuilding{target}{done}: degraded ({_count(a.disks_working)}/"
                              f"{_count(a.disks_total)}) until it finishes", "array_rebuilding", name,
                        {"array": name})]
    if a.degraded or not a.active:
        where = "; ".join(describe_member(m) for m in pulls)
        text = (f"{name} {'inactive' if not a.active else 'degraded'} ({_count(a.disks_working)}/"
                f"{_count(a.disks_total)})" + (f": {where}" if where else ""))
        out.append(Finding(BAD, text, "array_degraded", name, member_labels(name, pulls)))
    else:
        for m in pulls:
            out.append(Finding(BAD, f"{name}: member {m.state}: {describe_member(m)}", "array_member_failed",
                               f"{name}:{m.serial or m.device}", member_labels(name, [m])))
        if a.array_state in ("inactive", "broken"):
            out.append(Finding(BAD, f"{name} {a.array_state}", labels={"array": name}))
    if a.active and a.sync_action in REBUILDING:
        done = f"{a.sync_ratio * 100:.1f}%" if a.sync_ratio is not None else (a.sync_waiting or "")
        out.append(Finding(WARN, f"{name} {a.sync_action} {done}".rstrip(), labels={"array": name}))
    return out


def _count(n: int | None) -> str:
    return "?" if n is None else str(n)


def findings(state: MdraidState, judging: Judging) -> list[Finding]:
    return [f for a in state.arrays for f in array_findings(a)]


def all_clear(state: MdraidState, judging: Judging) -> str | None:
    if state.arrays:
        return f"{len(state.arrays)} arrays clean"
    return "no arrays seen" if judging.status is not None else None


def view(state: MdraidState, found: Sequence[Finding]) -> View:
    """Each array with how it stands: the level of the findings about it (what its tile says)."""
    return {"arrays": [(a, level_of(about(found, array=a.name))) for a in state.arrays]}


TILE = Tile("Arrays", "/disks", all_clear)

CHARTS: dict[str, ChartSpec] = {"md_array": (("array",), [("Array", "rackpulse_md_array_degraded", {"array": 0}),
                                    ("Sync progress", "rackpulse_md_array_sync_completed_ratio", {"array": 0})])}


def bay_devices(state: MdraidState) -> list[BayDevice]:
    """The members to pull, with their last known bay (the bay map and the disks page's callouts)."""
    return [BayDevice(m.bay, m.serial, m.model, m.device, m.state, BAD, a.name, pull=True)
            for a in state.arrays for m in pull_list(a)]
