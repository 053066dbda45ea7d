"""What the btrfs collector knows of each mounted filesystem and its devices: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class Allocation(Record):
    type: str  # data, metadata, system
    profile: str  # single, dup, raid1 ...
    total: int | None = None
    used: int | None = None


class DeviceView(Record):
    devid: int | None = None
    path: str | None = None  # its device path; the last known one for a missing device
    missing: bool = False
    size: float | None = None
    used: float | None = None
    disk: str | None = None  # the disk behind it, its identity and its bay
    serial: str | None = None
    model: str | None = None
    wwn: str | None = None
    bay: str | None = None
    errors: dict[str, int | None] = {}  # write_io_errs, read_io_errs, flush_io_errs, corruption_errs, generation_errs


class ScrubView(Record):
    status: str  # running, finished, interrupted, aborted, canceled, none
    started: str | None = None
    duration_seconds: float | None = None
    errors: dict[str, int | None] = {}
    uncorrectable: int | None = None
    corrected: int | None = None
    bytes_scrubbed: float | None = None
    ratio: float | None = None


class FsView(Record):
    name: str  # its label, else its UUID
    uuid: str = ""
    label: str | None = None
    mount: str = ""
    used: float | None = None
    total_devices: int | None = None
    devices: list[DeviceView] = []
    missing: int | None = None  # devices missing, listed or not
    unlisted_missing: int | None = None  # missing and not even listed
    allocation: list[Allocation] = []
    scrub: ScrubView | None = None


class BtrfsState(State):
    filesystems: list[FsView] = []
