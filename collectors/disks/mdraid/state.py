"""What the mdraid collector knows of each array and its members: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class Member(Record):
    slot: int | None = None  # position in the array (RaidDevice); None for spares and failed disks
    device: str = ""  # kernel name of the member ("sdh1"); for a vanished member, its last name
    state: str  # active | rebuilding | spare | failed | missing | journal | replacement
    disk: str | None = None  # whole disk ("sdh")
    serial: str | None = None
    model: str | None = None
    wwn: str | None = None
    bay: str | None = None
    write_mostly: bool = False


class Array(Record):
    name: str
    active: bool = True
    read_only: str | None = None  # "read-only" | "auto-read-only"
    level: str | None = None  # raid6, raid1, linear ...
    uuid: str | None = None
    array_state: str | None = None  # /sys/block/mdX/md/array_state: clean, active, inactive, broken ...
    state_words: list[str] = []  # mdadm's "State :" words: clean, degraded, recovering ...
    events: str | None = None
    size_bytes: int | None = None
    disks_total: int | None = None  # raid_disks
    disks_working: int | None = None  # in sync
    slot_map: str | None = None  # "UU_U"
    degraded: bool = False
    missing: int | None = None  # slots without an in-sync device
    failed: int | None = None
    spares: int | None = None
    sync_action: str = "idle"  # idle | resync | recovery | check | repair | reshape
    sync_ratio: float | None = None  # 0..1 while it runs
    sync_waiting: str | None = None  # DELAYED | PENDING
    sync_remaining_seconds: float | None = None
    sync_speed_bytes: float | None = None
    mismatch_cnt: int | None = None
    members: list[Member] = []


class MdraidState(State):
    arrays: list[Array] = []
