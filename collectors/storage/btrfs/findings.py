"""What is wrong with btrfs filesystems: missing devices, error counters that rise, a scrub
that found what it could not fix."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import (
    BAD,
    OK,
    SOON_DATA,
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
from collectors.storage.btrfs.state import BtrfsState, DeviceView, FsView
from collectors.storage.common import describe

RULES = (
    RuleSpec("btrfs_device_missing", "critical", 0, 12, urgency=SOON_DATA, title="Btrfs device missing"),
    RuleSpec("btrfs_errors_rising", "warning", 0, 24, title="Btrfs device errors rising"),
    RuleSpec("btrfs_scrub_errors", "critical", 0, 24, title="Btrfs scrub found errors"),
)


def _labels(fs: str, d: DeviceView | None = None) -> dict[str, str | None]:
    if d is None:
        return {"fs": fs}
    return {"fs": fs, "device": d.path, "serial": d.serial, "bay": d.bay, "model": d.model}


def _errors(d: DeviceView) -> int:
    return sum(n or 0 for n in d.errors.values())


def fs_findings(fs: FsView, judging: Judging) -> list[Finding]:
    name, out = fs.name, []
    gone = [d for d in fs.devices if d.missing]
    if gone or fs.unlisted_missing:
        where = "; ".join(f"devid {d.devid} ({describe(d)}{', was ' + d.path if d.path else ''})" for d in gone)
        more = f"{fs.unlisted_missing} device(s) not listed" if fs.unlisted_missing else ""
        missing = fs.missing if fs.missing is not None else len(gone)
        text = f"btrfs {name} on {fs.mount}: {missing} device(s) missing: " + "; ".join(
            x for x in (where, more) if x)
        out.append(Finding(BAD, text, "btrfs_device_missing", name, _labels(name, gone[0] if len(gone) == 1 else None)))
    for d in fs.devices:
        total = _errors(d)
        if not total:
            continue
        counts = ", ".join(f"{n} {k}" for k, n in d.errors.items() if n)
        device = d.path or f"devid {d.devid}"
        rose = judging.rose(f"btrfs:{name}:{d.devid}", total)
        if rose:
            out.append(Finding(WARN, f"btrfs {name}: {device} errors rose by {rose} ({counts}; {describe(d)})",
                               "btrfs_errors_rising", f"{name}:{d.devid}", _labels(name, d)))
        else:
            out.append(Finding(WARN, f"btrfs {name}: {device} has {counts} errors "
                                     f"(`btrfs device stats -z` resets them)", labels=_labels(name)))
    scrub = fs.scrub
    if scrub and scrub.uncorrectable:
        out.append(Finding(BAD, f"btrfs {name}: scrub found {scrub.uncorrectable} uncorrectable errors",
                           "btrfs_scrub_errors", name, _labels(name)))
    elif scrub and scrub.corrected:
        out.append(Finding(WARN, f"btrfs {name}: scrub corrected {scrub.corrected} errors", labels=_labels(name)))
    return out


def findings(state: BtrfsState, judging: Judging) -> list[Finding]:
    return [f for fs in state.filesystems for f in fs_findings(fs, judging)]


def all_clear(state: BtrfsState, judging: Judging) -> str | None:
    n = len(state.filesystems)
    return f"{n} {'filesystem' if n == 1 else 'filesystems'} complete" if n else None


def view(state: BtrfsState, found: Sequence[Finding]) -> View:
    """Each filesystem with how it stands: the level of the findings about it."""
    return {"filesystems": [(fs, level_of(about(found, fs=fs.name))) for fs in state.filesystems]}


TILE = Tile("btrfs", "/disks#btrfs", all_clear)
CHARTS: dict[str, ChartSpec] = {"btrfs_fs": (("fs",), [
    ("Missing devices", "rackpulse_btrfs_devices_missing", {"fs": 0}),
])}


def bay_devices(state: BtrfsState) -> list[BayDevice]:
    return [BayDevice(d.bay, d.serial, d.model, d.path, "btrfs missing" if d.missing else "btrfs",
                      BAD if d.missing else WARN if _errors(d) else OK, f"btrfs {fs.name}", pull=d.missing,
                      entity=("btrfs_device", f"{fs.name}:{d.devid}"))
            for fs in state.filesystems for d in fs.devices]
