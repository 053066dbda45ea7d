"""Linux MD RAID: /proc/mdstat + /sys/block/mdX/md + ``mdadm --detail``, joined with
each member disk's serial and bay so that a failed member says which bay to pull.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    ParseError,
    Runner,
    Sample,
    host_path,
    read_text,
    run_command,
)
from collectors.context import HostContext
from collectors.disks.mdraid.mdadm import MdadmDetail, parse_mdadm_detail
from collectors.disks.mdraid.mdstat import MdArray, parse_mdstat
from collectors.disks.mdraid.state import Array, MdraidState, Member
from collectors.location import BayRule, DiskLocation, base_device, read_locations
from collectors.state import State

log = logging.getLogger("collectors.mdraid")

SYNC_STATES = ("idle", "resync", "recovery", "check", "repair", "reshape")
DISK_STATES = ("active", "failed", "spare", "missing")


@dataclass
class MemberRow:
    """A member while its array is put together (slots of failed disks are filled in afterwards)."""

    slot: int | None
    device: str
    state: str
    disk: str | None = None
    serial: str | None = None
    model: str | None = None
    wwn: str | None = None
    bay: str | None = None
    write_mostly: bool = False


class MdraidCollector(Collector):
    name: ClassVar[str] = "mdraid"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_md_array_degraded": MetricSpec("1 if the array is missing members (not all slots in sync).",
                                                  states=("clean", "degraded")),
        "rackpulse_md_array_active": MetricSpec("1 if the array is active (assembled and running).",
                                                states=("inactive", "active")),
        "rackpulse_md_array_info": MetricSpec("Array level, UUID and state as labels; value 1.", store=False),
        "rackpulse_md_array_sync_action": MetricSpec("1 for the array's current sync action (idle when none).",
                                                     store=False),
        "rackpulse_md_array_sync_completed_ratio": MetricSpec("Progress of the running sync action, 0..1 (1 when idle)."),
        "rackpulse_md_array_sync_remaining_seconds": MetricSpec("Kernel's estimate of the time left for the sync action."),
        "rackpulse_md_array_sync_speed_bytes": MetricSpec("Speed of the running sync action in bytes per second."),
        "rackpulse_md_array_disks": MetricSpec("Number of member disks by state (active, failed, spare, missing)."),
        "rackpulse_md_array_disks_required": MetricSpec("Number of slots the array has (raid_disks)."),
        "rackpulse_md_array_size_bytes": MetricSpec("Array size in bytes."),
        "rackpulse_md_member_state": MetricSpec("1 per member with its state, serial and bay as labels.", store=False),
    }

    def __init__(
        self,
        host_root: Path,
        mdadm: Sequence[str] = ("mdadm",),
        detail: bool = True,
        timeout: float = 20.0,
        bays: Iterable[BayRule] = (),
        runner: Runner = run_command,
    ) -> None:
        self.host_root = host_root
        self.mdadm = list(mdadm)
        self.detail = detail
        self.timeout = timeout
        self.bays = bays  # live: labels saved from a page apply from the next collection
        self.runner = runner
        # Last members seen per array: a disk that failed and was pulled no longer shows
        # in mdstat or by-id, but the user still needs its bay and serial.
        self._known: dict[str, dict[str, Member]] = {}

    def restore(self, state: State) -> None:
        """Seed the memory of members from the last stored state (survives restarts)."""
        if isinstance(state, MdraidState):
            for arr in state.arrays:
                self._known[arr.name] = {m.device: m for m in arr.members if m.state != "missing"}

    def collect(self) -> CollectResult:
        path = host_path(self.host_root, "/proc/mdstat")
        try:
            text = read_text(path)
        except FileNotFoundError:
            raise NoData(f"{path} does not exist (md driver not loaded)") from None
        except OSError as exc:
            raise CollectorError(f"cannot read {path}: {exc}") from None
        try:
            mdstat = parse_mdstat(text)
        except ParseError as exc:
            raise ParseError(f"{path}: {exc}") from None
        locations = read_locations(self.host_root, self.bays)
        result = CollectResult()
        arrays = []
        for arr in mdstat.arrays:
            detail = None
            if self.detail and arr.active:
                try:
                    detail = self._detail(arr.name)
                except CollectorError as exc:
                    result.warnings.append(str(exc))
            sysfs = read_md_sysfs(self.host_root, arr.name)
            view = self._array_view(arr, detail, sysfs, locations)
            arrays.append(view)
            result.samples.extend(array_samples(view))
            result.entities.extend(array_entities(view))
        result.state = MdraidState(arrays=arrays)
        return result

    def _detail(self, name: str) -> MdadmDetail:
        res = self.runner([*self.mdadm, "--detail", f"/dev/{name}"], self.timeout)
        text = res.stdout.decode("utf-8", "replace")
        if res.returncode not in (0, 1, 2, 4) or not text.strip():
            err = res.stderr.decode("utf-8", "replace").strip() or f"exit status {res.returncode}"
            raise CollectorError(f"mdadm --detail /dev/{name}: {err[:300]}")
        # mdadm --detail exits 1 when degraded, 2 when unusable, 4 on error reading the array
        try:
            return parse_mdadm_detail(text)
        except ParseError as exc:
            raise ParseError(f"mdadm --detail /dev/{name}: {exc}") from None

    def _array_view(
        self, arr: MdArray, detail: MdadmDetail | None, sysfs: MdSysfs, locs: dict[str, DiskLocation]
    ) -> Array:
        members: list[MemberRow] = []
        by_dev = {d.device.removeprefix("/dev/"): d for d in (detail.devices if detail else ()) if d.device}
        dev_states = sysfs.dev_states
        for m in arr.members:
            state = m.state
            slot: int | None = None
            d = by_dev.get(m.device)
            if d is not None:
                slot = d.raid_device
                if d.role in ("rebuilding", "failed", "spare") and state == "active":
                    state = d.role
            sys_state = dev_states.get(m.device)
            if sys_state is not None and state == "active" and "in_sync" not in sys_state and arr.sync:
                state = "rebuilding"
            members.append(self._member(slot, m.device, state, locs, m.write_mostly))
        if detail:
            # mdadm lists the slot of a failed-but-not-removed disk as "removed" *and* the disk
            # as "faulty": the failed member accounts for that slot, so no extra placeholder.
            failed = [m for m in members if m.state == "failed"]
            for d in detail.devices:
                if d.role == "missing" and d.raid_device is not None:
                    if failed:
                        fm = failed.pop(0)
                        fm.slot = fm.slot if fm.slot is not None else d.raid_device
                        continue
                    members.append(MemberRow(slot=d.raid_device, device="", state="missing"))
        if arr.active:
            self._remember_vanished(arr, members)
        sync = arr.sync
        return Array(
            name=arr.name,
            active=arr.active,
            read_only=arr.read_only,
            level=arr.level or (detail.level if detail else None),
            uuid=(detail.uuid if detail else None) or sysfs.uuid,
            array_state=sysfs.array_state or ("active" if arr.active else "inactive"),
            state_words=list(detail.state) if detail else [],
            events=detail.events if detail else None,
            size_bytes=arr.blocks * 1024 if arr.blocks else None,
            disks_total=arr.disks_total,
            disks_working=arr.disks_working,
            slot_map=arr.slot_map,
            degraded=arr.degraded,
            missing=arr.missing,
            failed=arr.failed,
            spares=arr.spares,
            sync_action=sync.action if sync else "idle",
            sync_ratio=sync.ratio if sync else None,
            sync_waiting=sync.waiting if sync else None,
            sync_remaining_seconds=sync.finish_seconds if sync else None,
            sync_speed_bytes=sync.speed_kib * 1024 if sync and sync.speed_kib else None,
            mismatch_cnt=sysfs.mismatch_cnt,
            members=[Member(**asdict(m)) for m in sorted(members, key=_member_order)],
        )

    def _member(self, slot: int | None, device: str, state: str, locs: dict[str, DiskLocation],
                wm: bool) -> MemberRow:
        disk = base_device(device)
        loc = locs.get(disk) or locs.get(device)
        m = MemberRow(slot=slot, device=device, state=state, disk=disk, write_mostly=wm)
        if loc:
            m.serial, m.model, m.wwn, m.bay = loc.serial, loc.model, loc.wwn, loc.bay
        return m

    def _remember_vanished(self, arr: MdArray, members: list[MemberRow]) -> None:
        """Give empty slots the identity of the disk that last sat there.

        A failed disk that was removed (``mdadm --remove``, or pulled) is gone from mdstat
        and /dev/disk/by-id; we still know its serial and bay from earlier runs.
        """
        known = self._known.setdefault(arr.name, {})
        present = {m.device for m in members if m.device}
        covered = sum(1 for m in members if m.state in ("failed", "rebuilding"))
        need = max(arr.missing - covered, 0)
        placeholders = [m for m in members if m.state == "missing" and not m.device]
        gone = [k for dev, k in known.items() if dev not in present and k.state != "spare"]
        gone.sort(key=lambda k: k.state != "failed")  # the one that failed is the likeliest gap
        for old in gone[:need]:
            target = placeholders.pop(0) if placeholders else None
            if target is None:
                target = MemberRow(slot=old.slot, device="", state="missing")
                members.append(target)
            target.device = old.device
            target.disk, target.serial, target.model, target.wwn, target.bay = (old.disk, old.serial, old.model,
                                                                                 old.wwn, old.bay)
            if target.slot is None:
                target.slot = old.slot
        if not arr.degraded:
            known.clear()
        for m in members:
            if m.device and m.state != "missing":
                known[m.device] = Member(**asdict(m))


def _member_order(m: MemberRow) -> tuple[int, int, str]:
    return (0 if m.slot is not None else 1, m.slot if m.slot is not None else 0, m.device)


@dataclass
class MdSysfs:
    """The few /sys/block/mdX/md attributes /proc/mdstat does not carry (None when absent)."""

    array_state: str | None = None
    uuid: str | None = None
    mismatch_cnt: int | None = None
    sync_action: str | None = None
    dev_states: dict[str, list[str]] = field(default_factory=dict)  # member -> in_sync, faulty ...


def read_md_sysfs(host_root: Path, name: str) -> MdSysfs:
    """/sys/block/<name>/md; absent files are skipped."""
    base = host_path(host_root, f"/sys/block/{name}/md")
    out = MdSysfs()
    if not base.is_dir():
        return out
    for attr in ("array_state", "uuid", "mismatch_cnt", "sync_action"):
        try:
            value = read_text(base / attr).strip()
        except OSError:
            continue
        if attr == "mismatch_cnt":
            out.mismatch_cnt = int(value) if value.isdigit() else None
        else:
            setattr(out, attr, value)
    try:
        entries = os.listdir(base)
    except OSError:
        entries = []
    for entry in entries:
        if entry.startswith("dev-"):
            try:
                out.dev_states[entry[4:]] = read_text(base / entry / "state").strip().split(",")
            except OSError:
                continue
    return out


def array_samples(a: Array) -> list[Sample]:
    name = a.name
    s = [
        Sample.of("rackpulse_md_array_degraded", 1 if a.degraded else 0, array=name),
        Sample.of("rackpulse_md_array_active", 1 if a.active else 0, array=name),
        Sample.of("rackpulse_md_array_info", 1, array=name, level=a.level or "", uuid=a.uuid or "",
                  state=a.array_state or ""),
    ]
    for action in SYNC_STATES:
        s.append(Sample.of("rackpulse_md_array_sync_action", 1 if a.sync_action == action else 0,
                           array=name, action=action))
    ratio = a.sync_ratio
    s.append(Sample.of("rackpulse_md_array_sync_completed_ratio",
                       1.0 if a.sync_action == "idle" else (ratio or 0.0), array=name))
    if a.sync_remaining_seconds is not None:
        s.append(Sample.of("rackpulse_md_array_sync_remaining_seconds", a.sync_remaining_seconds, array=name))
    if a.sync_speed_bytes is not None:
        s.append(Sample.of("rackpulse_md_array_sync_speed_bytes", a.sync_speed_bytes, array=name))
    counts = {st: 0 for st in DISK_STATES}
    for m in a.members:
        key = {"rebuilding": "spare", "replacement": "spare", "journal": "active"}.get(m.state, m.state)
        if key in counts:
            counts[key] += 1
    # Slots shown as "_" that no member row accounts for are missing disks too.
    covered = sum(1 for m in a.members if m.state in ("rebuilding", "failed"))
    counts["missing"] = max(counts["missing"], (a.missing or 0) - covered)
    for st, n in counts.items():
        s.append(Sample.of("rackpulse_md_array_disks", n, array=name, state=st))
    if a.disks_total is not None:
        s.append(Sample.of("rackpulse_md_array_disks_required", a.disks_total, array=name))
    if a.size_bytes:
        s.append(Sample.of("rackpulse_md_array_size_bytes", a.size_bytes, array=name))
    for m in a.members:
        s.append(Sample.of("rackpulse_md_member_state", 1, array=name, device=m.device, serial=m.serial or "",
                           bay=m.bay or "", state=m.state))
    return s


def array_entities(a: Array) -> list[Entity]:
    ents = [Entity("md_array", a.name, {
        "level": a.level, "uuid": a.uuid, "degraded": a.degraded, "sync_action": a.sync_action,
        "array_state": a.array_state, "members": sorted(m.device for m in a.members if m.device),
    })]
    for m in a.members:
        if m.device:
            ents.append(Entity("md_member", f"{a.name}:{m.serial or m.device}", {
                "array": a.name, "device": m.device, "serial": m.serial, "bay": m.bay,
                "state": m.state, "slot": m.slot,
            }))
    return ents


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.mdraid]."""
    return MdraidCollector(host.root, c.mdadm, c.detail, c.command_timeout, host.bays, runner)
