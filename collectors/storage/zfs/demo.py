"""The demo's ZFS pool: a two-disk mirror that loses a disk to checksum errors, has it
swapped, and resilvers onto the new one, on the story's four-minute loop."""

from __future__ import annotations

from pathlib import Path

from collectors.scenes import write_answer
from collectors.storage.zfs.zpool_text import LIST_COLUMNS

MODEL = "WDC_WD40EFRX-68N32N0"
DISKS = {"a": f"ata-{MODEL}_WD-WCC7K4NL1AXA", "b": f"ata-{MODEL}_WD-WCC7K6RR9KXB",
         "new": f"ata-{MODEL}_WD-WCC7K2HJ7YZN"}
GUID = "11805468287435197437"  # the pulled disk, as ZFS keeps naming it
SIZE, ALLOC = 3_985_729_650_688, 1_647_130_456_064
STATUS_ARGS = ["status", "-p"]
LIST_ARGS = ["list", "-Hp", "-o", ",".join(LIST_COLUMNS)]


def _line(name: str, state: str, indent: int, errors: tuple[int, int, int] = (0, 0, 0), note: str = "") -> str:
    r, w, c = errors
    return f"\t{' ' * indent}{name:<{44 - indent}} {state:<8} {r:>5} {w:>5} {c:>5}{('  ' + note) if note else ''}"


def zpool_status(t: float) -> str:
    degraded = 60 <= t < 210
    cksum = int((t - 60) * 2) if 60 <= t < 100 else 0
    b_state = "FAULTED" if 80 <= t < 100 else "ONLINE"
    rows = [_line("a", "", 0)]  # replaced below: the header and pool line
    if t < 100:
        b = _line(DISKS["b"] + "-part1", b_state, 4, (0, 0, cksum), "too many errors" if b_state == "FAULTED" else "")
        mirror = [_line("mirror-0", "DEGRADED" if degraded else "ONLINE", 2), _line(DISKS["a"] + "-part1", "ONLINE", 4), b]
    elif t < 120:
        mirror = [_line("mirror-0", "DEGRADED", 2), _line(DISKS["a"] + "-part1", "ONLINE", 4),
                  _line(GUID, "REMOVED", 4, note=f"was /dev/disk/by-id/{DISKS['b']}-part1")]
    elif t < 210:
        mirror = [_line("mirror-0", "DEGRADED", 2), _line(DISKS["a"] + "-part1", "ONLINE", 4),
                  _line("replacing-1", "DEGRADED", 4),
                  _line(GUID, "UNAVAIL", 6, note=f"was /dev/disk/by-id/{DISKS['b']}-part1"),
                  _line(DISKS["new"] + "-part1", "ONLINE", 6, note="(resilvering)")]
    else:
        mirror = [_line("mirror-0", "ONLINE", 2), _line(DISKS["a"] + "-part1", "ONLINE", 4),
                  _line(DISKS["new"] + "-part1", "ONLINE", 4)]
    rows = [f"\t{'NAME':<44} {'STATE':<8} {'READ':>5} {'WRITE':>5} {'CKSUM':>5}",
            _line("tank", "DEGRADED" if degraded else "ONLINE", 0), *mirror]
    if 120 <= t < 210:
        r = (t - 120) / 90
        done = int(ALLOC * r)
        left = int((1 - r) * 90 * 40)
        scan = (f"resilver in progress since Tue Nov 24 02:00:00 2026\n"
                f"\t{done} scanned at 165284352/s, {done} issued at 165284352/s, {ALLOC} total\n"
                f"\t{done // 2} resilvered, {r * 100:.2f}% done, {left // 3600:02d}:{left // 60 % 60:02d}:{left % 60:02d}"
                " to go")
    elif t >= 210:
        scan = f"resilvered {ALLOC // 2} in 01:00:00 with 0 errors on Tue Nov 24 03:00:00 2026"
    else:
        scan = "scrub repaired 0 in 06:58:02 with 0 errors on Sun Nov  8 07:22:03 2026"
    head = [" pool: tank", f" state: {'DEGRADED' if degraded else 'ONLINE'}"]
    if 80 <= t < 120:
        head += ["status: One or more devices are faulted in response to persistent errors.",
                 "\tSufficient replicas exist for the pool to continue functioning in a",
                 "\tdegraded state.",
                 "action: Replace the faulted device, or use 'zpool clear' to mark the device",
                 "\trepaired.",
                 "   see: https://openzfs.github.io/openzfs-docs/msg/ZFS-8000-GH"]
    elif 120 <= t < 210:
        head += ["status: One or more devices is currently being resilvered.  The pool will",
                 "\tcontinue to function, possibly in a degraded state.",
                 "action: Wait for the resilver to complete."]
    return "\n".join([*head, f"  scan: {scan}", "config:", "", *rows, "", "errors: No known data errors", ""])


def write_scene(root: Path, t: float) -> None:
    folder = root / "demo-tools" / "zpool"
    write_answer(folder, STATUS_ARGS, zpool_status(t))
    degraded = 60 <= t < 210
    write_answer(folder, LIST_ARGS, f"tank\t{SIZE}\t{ALLOC}\t{SIZE - ALLOC}\t12\t41\t1.00\t"
                                    f"{'DEGRADED' if degraded else 'ONLINE'}\n")
