"""The bays: which device sits in which labelled bay, what to pull, and the bay map the disks
page draws (shelves, or an enclosure's rows and columns), from every plug-in's bay list.

May import: app.snapshot and the plug-ins' findings (what each places in a bay)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.snapshot import Snapshot, same_inputs
from collectors import plugins
from collectors.findings import BAD, RANK, UNKNOWN, BayDevice, natural


def storage_bays(snap: Snapshot, placed: bool = True) -> list[BayDevice]:
    """The devices every plug-in places in bays (SMART's disks, md members to pull, ZFS, btrfs,
    RAID controllers, Ceph); with `placed`, only those in a labelled bay. Worked out once per
    collection: the overview, /disks and every disk's page ask."""
    every = same_inputs(snap, "storage_bays", tuple(snap.states.get(name) for name in plugins()), lambda: [
        # A state of another shape (an agent of another version) places nothing.
        e for name, p in plugins().items() for e in p.bay_list(snap.states.get(name))])
    return [e for e in every if e.bay] if placed else list(every)


def storage_pulls(snap: Snapshot) -> list[BayDevice]:
    """Each device to pull, in a bay or not ("bay unknown")."""
    return [e for e in storage_bays(snap, placed=False) if e.pull]


def unlabelled(snap: Snapshot) -> list[BayDevice]:
    """Disks with a page of their own but no bay label: a failure there could not say which bay."""
    return [e for e in storage_bays(snap, placed=False) if not e.bay and e.href and not e.pull]


def bays_seen(snap: Snapshot) -> list[str]:
    """An agent host's bays: the labels its disks carry (its config is not here)."""
    return sorted({e.bay for e in storage_bays(snap) if e.bay}, key=natural)


@dataclass(frozen=True)
class BayView:
    label: str
    short: str  # the label without its shelf ("bay 7")
    level: str
    state: str
    pull: BayDevice | None  # the device to pull from it, until another disk sits there
    disk: BayDevice | None  # the disk there now with its own page
    other: BayDevice | None  # else the worst device there (a ZFS or RAID member SMART does not see)
    row: int | None = None  # where it sits in its enclosure (1-based), when one is configured
    column: int | None = None


@dataclass(frozen=True)
class Shelf:
    name: str
    bays: list[BayView]
    rows: int | None = None  # an enclosure's grid; None lays the bays out in a row that wraps
    columns: int | None = None
    what: str = ""  # what it holds, when not disks in bays: "Ceph OSDs", "NVMe slots"


@dataclass(frozen=True)
class Enclosure:
    """[[disks.enclosures]]: how one chassis places its numbered bays (app.config.EnclosureConfig)."""

    name: str
    rows: int
    columns: int
    order: str = "rows"
    start: str = "top"
    first: int = 0

    def place(self, short: str) -> tuple[int, int] | None:
        """(row, column), 1-based, of "bay 7"; None for a label without a number in range."""
        m = re.search(r"(\d+)\s*$", short)
        if m is None:
            return None
        n = int(m.group(1)) - self.first
        if not 0 <= n < self.rows * self.columns:
            return None
        row, col = divmod(n, self.columns) if self.order == "rows" else divmod(n, self.rows)[::-1]
        return (self.rows - row if self.start == "bottom" else row + 1), col + 1


def _split(label: str) -> tuple[str, str]:
    """("shelf 1", "bay 7") from "shelf 1, bay 7"; ("NVMe slot", "M2_1") from "NVMe slot M2_1"."""
    shelf, _, short = label.rpartition(",")
    if shelf:
        return shelf.strip(), short.strip()
    head, _, tail = label.rpartition(" ")
    return (head, tail) if head and re.search(r"\bslot\b", head, re.I) else ("bays", label)


def bay_map(snap: Snapshot, labels: list[str], enclosures: Sequence[Enclosure] = ()) -> list[Shelf]:
    """The user's shelves and bays, in the order configured, each with what is in it. A shelf is
    the part of the label before its last comma ("shelf 2, bay 7" -> "shelf 2"); one configured
    as an enclosure is drawn as its chassis, rows and columns. A device to pull speaks for its
    bay until another disk sits there; else the worst device in the bay does."""
    in_bay: dict[str, list[BayDevice]] = {}
    for e in storage_bays(snap):
        in_bay.setdefault(e.bay or "", []).append(e)
    chassis = {e.name: e for e in enclosures}
    shelves: dict[str, list[BayView]] = {}
    for label in dict.fromkeys(labels):  # two rules may name one bay (an old disk and its replacement)
        shelf, short = _split(label)
        here = in_bay.get(label, [])
        present = [e for e in here if not e.pull]
        pull = next((e for e in here if e.pull), None)
        shown = max(present, key=lambda e: RANK[e.level], default=None)
        if pull is not None and not any(e.serial != pull.serial and e.href for e in present):
            level, state = BAD, f"pull: {pull.state}"
        elif shown is not None:
            level, state = shown.level, shown.state
        else:
            level, state = UNKNOWN, "empty"
        disk = next((e for e in present if e.href), None)
        spot = chassis[shelf].place(short) if shelf in chassis else None
        shelves.setdefault(shelf, []).append(BayView(
            label, short or label, level, state, pull, disk, shown if disk is None else None,
            *(spot or (None, None))))
    out = []
    for name, bays in shelves.items():
        enc = chassis.get(name)
        wheres = {d.where for b in bays for d in (b.pull or b.disk or b.other,) if d is not None}
        what = ("Ceph OSDs" if wheres and all(w.startswith("Ceph") for w in wheres)
                else "slots" if all(re.search(r"\bslot\b", b.label, re.I) for b in bays)
                and "slot" not in name.lower() else "")  # not "NVMe slot slots"
        if enc is not None and all(b.row is not None for b in bays):
            out.append(Shelf(name, bays, enc.rows, enc.columns, what))
        else:  # no chassis said, or a bay it cannot place: the bays in order, wrapping
            out.append(Shelf(name, [replace(b, row=None, column=None) for b in bays], None, None, what))
    return out
