"""A data set judged: how many copies it has off its array and off site, how old the newest are,
what losing the array or the building would cost, and the two rules' conditions.

- `data_unprotected` (warning): no copy off the array newer than the set's max_age, or, with
  offsite_required, no such copy off site.
- `data_at_risk` (critical): the array has no redundancy left and the newest copy off it is
  older than max_age: one more disk lost is data lost.

Each is True, False, or None when a copy's source cannot be read now (a repository that will not
open, a collector not run yet or down): then the watch holds what was said before (app/data/watch.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.data.config import DataSet
from app.data.copies import Copy
from app.data.homes import Home
from collectors.proxmoxapi import age


@dataclass(frozen=True)
class Verdict:
    set: DataSet
    home: Home
    copies: list[Copy]
    unknown: list[str]  # sources that may hold a copy and cannot be read now ("restic nas-local: wrong password")
    unprotected: bool | None
    at_risk: bool | None
    headline: str  # "photos: 2 copies, 1 off site; the off-site copy (borg offsite) is 2 days old, older than 26 h"
    reasons: list[str]  # why it is unprotected or at risk, one sentence each
    lost: list[str]  # what losing the array, the building, would lose

    @property
    def off_array(self) -> list[Copy]:
        return [c for c in self.copies if not c.same_array]


def _fresh(c: Copy, now: float, max_age: float) -> bool:
    return c.newest is not None and now - c.newest <= max_age


def _newest(copies: Sequence[Copy]) -> Copy | None:
    dated = [c for c in copies if c.newest is not None]
    return max(dated, key=lambda c: c.newest or 0.0) if dated else None


def _ago(c: Copy, now: float) -> str:
    return f"{age(now - c.newest)} old" if c.newest is not None else "of unknown age"


def judge(s: DataSet, home: Home, copies: list[Copy], now: float, away: Sequence[str] = ()) -> Verdict:
    """`away`: sources that may hold a copy of this set and cannot be read (a collector down)."""
    off = [c for c in copies if not c.same_array]
    unknown = [f"{c.label}: {c.error}" for c in off if c.error] + list(away)
    fresh = [c for c in off if _fresh(c, now, s.max_age)]
    fresh_off_site = [c for c in fresh if c.offsite]
    off_site = [c for c in off if c.offsite]
    limit = age(s.max_age)
    reasons = []
    newest = _newest(off)
    if not fresh:
        reasons.append(f"no copy off {home.array or 'its disks'} at all" if not off else
                       f"the newest copy ({newest.label}) is {_ago(newest, now)}, older than {limit}" if newest
                       else "no copy's age is known")
    if s.offsite_required and not fresh_off_site:
        best = _newest(off_site)
        reasons.append(f"the off-site copy ({best.label}) is {_ago(best, now)}, older than {limit}" if best
                       else "no copy is off site" if not off_site else "the off-site copy's age is not known")
    protected = bool(fresh) and (not s.offsite_required or bool(fresh_off_site))
    unprotected = False if protected else (None if unknown else True)
    if home.left is None or home.left > 0 or fresh:
        at_risk: bool | None = False if (home.left is not None or fresh) else None
    else:
        at_risk = None if unknown else True
    if at_risk:
        reasons.insert(0, f"no redundancy left under it ({home.words})")
    return Verdict(s, home, copies, unknown, unprotected, at_risk, headline(s, off, copies, now, reasons),
                   reasons, lost(home, off, now))


def headline(s: DataSet, off: list[Copy], copies: list[Copy], now: float, reasons: list[str]) -> str:
    """The verdict in one sentence: the copies, then what is wrong, or how fresh they are."""
    n, sites = len(off), sum(1 for c in off if c.offsite)
    words = f"{s.name}: {n} cop{'ies' if n != 1 else 'y'}" + (f", {sites or 'none'} off site" if n else "")
    on_array = len(copies) - n
    if on_array:
        words += f" (and {on_array} on the same array, lost with it)"
    if reasons:
        return words + "; " + "; ".join(reasons)
    best, best_off_site = _newest(off), _newest([c for c in off if c.offsite])
    if best is not None:
        words += f"; the newest is {_ago(best, now)}"
        if best_off_site is not None and best_off_site is not best:
            words += f", the off-site one {_ago(best_off_site, now)}"
    return words


def lost(home: Home, off: list[Copy], now: float) -> list[str]:
    """What would be lost: with the array, what changed since the newest copy off it; with the
    building, what changed since the newest copy off site."""
    where = home.array or home.device or "its disks"
    best, best_off_site = _newest(off), _newest([c for c in off if c.offsite])
    out = [f"if {where} died now: what changed in the last {age(now - best.newest)} (since {best.label})"
           if best and best.newest is not None else f"if {where} died now: all of it (no copy off it)"]
    out.append(f"if the building burned: what changed in the last {age(now - best_off_site.newest)} "
               f"(since {best_off_site.label})" if best_off_site and best_off_site.newest is not None
               else "if the building burned: all of it (no copy off site)")
    return out
