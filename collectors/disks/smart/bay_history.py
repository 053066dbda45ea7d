"""Which disks have sat in each bay: serial, model, first and last seen, and how each left
(failed, pulled, replaced, moved to another bay). Kept in the SMART collector's state, which the
database stores and a restart restores, so the history outlives both the disk and the process.

A disk that did not answer this run (a smartctl timeout) has not left: only a disk that is no
longer listed, or that now sits elsewhere, ends its stay.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from collectors.disks.smart.state import BayStay, Disk

KEPT_PER_BAY = 30
YEAR = 365.25 * 86400


def update(stays: Sequence[BayStay], disks: Iterable[Disk], unanswered: set[str], now: float) -> list[BayStay]:
    """The stays after this run: open ones go on, end, or move; new disks in bays begin one."""
    here = {d.bay: d for d in disks if d.bay}
    where = {d.key: d.bay for d in here.values()}
    out: list[BayStay] = []
    for s in stays:
        if s.left is not None:
            out.append(s)
            continue
        d = here.get(s.bay)
        if d is not None and d.key == s.serial:
            out.append(s.model_copy(update={"last_seen": now, "health": d.health_name}))
        elif s.device in unanswered and where.get(s.serial) is None:
            out.append(s)  # it did not answer: still there as far as anyone knows
        else:
            out.append(s.model_copy(update={"left": now, "how": _how(s, where.get(s.serial), d)}))
    open_now = {(s.bay, s.serial) for s in out if s.left is None}
    for bay, d in here.items():
        if (bay, d.key) not in open_now:
            out.append(BayStay(bay=bay, serial=d.key, model=d.model, device=d.device, first_seen=now, last_seen=now,
                               health=d.health_name))
    return _trim(out)


def _how(s: BayStay, moved_to: str | None, successor: Disk | None) -> str:
    if moved_to is not None:
        return f"moved to {moved_to}"
    if s.health == "failing":
        return "failed"
    return "replaced" if successor is not None else "pulled"


def _trim(stays: list[BayStay]) -> list[BayStay]:
    """The newest KEPT_PER_BAY stays of each bay (a bay whose label changed keeps its own)."""
    by_bay: dict[str, list[BayStay]] = {}
    for s in stays:
        by_bay.setdefault(s.bay, []).append(s)
    keep = {id(s) for group in by_bay.values() for s in sorted(group, key=lambda x: x.first_seen or 0.0)[-KEPT_PER_BAY:]}
    return [s for s in stays if id(s) in keep]


def of_bay(stays: Iterable[BayStay], bay: str | None) -> list[BayStay]:
    """A bay's timeline, the newest first."""
    return sorted((s for s in stays if s.bay == bay), key=lambda s: s.first_seen or 0.0, reverse=True)


def losses(stays: Iterable[BayStay], now: float | None = None) -> dict[str, list[BayStay]]:
    """Per bay, the distinct disks that failed in it within the last year (the last time each did)."""
    now = time.time() if now is None else now
    out: dict[str, dict[str, BayStay]] = {}
    for s in sorted(stays, key=lambda x: x.left or 0):
        if s.how == "failed" and s.left is not None and now - s.left <= YEAR:
            out.setdefault(s.bay, {})[s.serial] = s
    return {bay: list(by_serial.values()) for bay, by_serial in out.items()}
