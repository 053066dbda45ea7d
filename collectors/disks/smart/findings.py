"""What is wrong with a disk, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from urllib.parse import quote

from collectors.disks.smart import bay_history, failure_stats
from collectors.disks.smart.selftests import latest_finished
from collectors.disks.smart.smartctl import worth_a_notification
from collectors.disks.smart.state import Disk, SmartState
from collectors.disks.smart.wear import Wear, forecast_words
from collectors.findings import (
    BAD,
    OK,
    SOON_HARDWARE,
    UNKNOWN,
    WARN,
    BayDevice,
    Finding,
    Judging,
    RuleSpec,
    Tile,
    natural,
)
from collectors.plugin import View
from collectors.state import Record

RULES = (
    RuleSpec("disk_failing", "critical", 0, 24, urgency=SOON_HARDWARE, title="Disk failing"),
    RuleSpec("disk_warning", "warning", title="Disk showing wear"),
    RuleSpec("disk_hot", "warning", 600, title="Disk running hot"),
    RuleSpec("smart_selftest_failed", "critical", 0, 24, title="Disk self-test failed"),
    RuleSpec("bay_losing_disks", "warning", 0, 168, title="Bay keeps losing disks"),
)


def disks(state: SmartState) -> list[Disk]:
    """The disks by bay in natural order ("bay 2" before "bay 10"), then by device in the
    kernel's order (sdz before sdaa); disks without a bay last."""
    return sorted(state.disks, key=lambda d: (d.bay is None, natural(d.bay), len(re.sub(r"\d", "", d.device)),
                                              natural(d.device)))


def findings(state: SmartState, judging: Judging) -> list[Finding]:
    out = []
    for d in disks(state):
        serial = f"serial {d.serial}" if d.serial else f"serial unknown ({d.key})"
        where = f"{d.bay or d.device}: {d.model or 'model unknown'} {serial}"
        labels = {"serial": d.serial or d.key, "bay": d.bay, "device": d.device}
        reasons = "; ".join(d.reasons[:3])
        if d.health == 2:
            out.append(Finding(BAD, f"disk failing, {where}: {reasons}", "disk_failing", d.key, labels))
        elif d.health == 1:
            # A counter that rose, or an attribute at a telling value, is worth a notification;
            # the rest (say, an old error log entry) is shown, not sent.
            notify = any(worth_a_notification(r) for r in d.reasons)
            out.append(Finding(WARN, f"disk warning, {where}: {reasons}", "disk_warning" if notify else None,
                               d.key, labels))
        failed = latest_finished(d.selftests)
        if failed is not None and failed.passed is False:
            # The drive read its own surface and could not: the strongest sign short of SMART failing.
            at = f" at {failed.hours:,} power-on hours" if failed.hours is not None else ""
            block = f", first bad block {failed.lba:,}" if failed.lba is not None else ""
            out.append(Finding(BAD, f"self-test failed, {where}: {failed.type} test: {failed.result}{at}{block}",
                               "smart_selftest_failed", d.key, labels))
        hot = None if d.temperature is None else judging.level("disk_hot", d.temperature, judging.disk_hot_celsius)
        if hot is not None:
            out.append(Finding(BAD if hot == "critical" else WARN, f"disk hot, {where}: {d.temperature:g} °C",
                               "disk_hot", d.key, labels, severity=judging.alert_severity("disk_hot", hot)))
    return out + bay_findings(state, judging)


def bay_findings(state: SmartState, judging: Judging) -> list[Finding]:
    """A bay that has lost two disks within a year: the slot, its cable or the backplane, more likely
    than bad luck twice."""
    out = []
    for bay, lost in sorted(bay_history.losses(state.bays, judging.now).items(), key=lambda kv: natural(kv[0])):
        if len(lost) >= 2:  # two disks: one disk failing, put back and failing again is one
            since = time.strftime("%B %Y", time.localtime(min(s.left or 0 for s in lost)))
            serials = ", ".join(s.serial for s in sorted(lost, key=lambda s: s.left or 0))
            out.append(Finding(WARN, f"{bay} has lost {len(lost)} disks since {since} ({serials}): check its cable "
                                     f"and backplane slot", "bay_losing_disks", bay, {"bay": bay}))
    return out


def all_clear(state: SmartState, judging: Judging) -> str | None:
    if state.disks:
        return f"{len(state.disks)} disks healthy"
    return "no disks seen" if judging.status is not None else None


TILE = Tile("Disks", "/disks", all_clear)
LEVELS = {0: OK, 1: WARN, 2: BAD}


def view(state: SmartState, found: Sequence[Finding]) -> View:
    departed = sorted((s for s in state.bays if s.left is not None), key=lambda s: s.left or 0, reverse=True)
    return {"disks": disks(state), "departures": departed[:50]}


def bay_devices(state: SmartState) -> list[BayDevice]:
    """The disks SMART sees, each in its bay when it has one (the bay map, like the storage
    plug-ins'): its health in words, a link to its page, its temperature."""
    return [BayDevice(d.bay, d.serial, d.model, d.device, d.health_name,
                      UNKNOWN if d.health is None else LEVELS.get(d.health, UNKNOWN), "disk",
                      href="/disks/" + quote(d.key, safe=""),
                      detail=f"{d.temperature:g} °C" if d.temperature is not None else None,
                      temperature=d.temperature)
            for d in disks(state)]


def find_disk(state: SmartState, key: str) -> Disk | None:
    return next((d for d in state.disks if d.key == key), None)


def disk_page(state: SmartState, disk: Record) -> View:
    """What a disk's page shows besides its facts: where its counters stand against published
    failure statistics, and its attributes' names for the charts."""
    assert isinstance(disk, Disk)
    raw = {k: v for k, v in disk.attributes.items() if v is not None}
    worn = Wear(disk.wear_used, disk.wear_source or "", disk.written_bytes, disk.wear_full_at) \
        if disk.wear_used is not None else None
    return {"disk": disk, "standing": failure_stats.standing(raw), "source": failure_stats.SOURCE,
            "attr_names": {str(a.id): a.name.replace("_", " ") for a in disk.table.ata},
            "wear_words": forecast_words(worn) if worn else None,
            "bay_stays": bay_history.of_bay(state.bays, disk.bay) if disk.bay else []}
