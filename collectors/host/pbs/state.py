"""What the Proxmox Backup Server collector read: datastores, backup groups with their newest
snapshot and whether it verified, and the verify, sync, prune and garbage collection jobs."""

from __future__ import annotations

import re
from typing import ClassVar

from collectors.state import Record, State


class PbsDatastore(Record):
    name: str
    total_bytes: float | None = None
    used_bytes: float | None = None
    avail_bytes: float | None = None
    estimated_full: float | None = None  # when it fills at the last month's pace (Unix time)
    error: str | None = None  # the datastore cannot be read (not mounted, removed)
    gc_removed_bytes: float | None = None  # freed by the last garbage collection
    gc_pending_bytes: float | None = None  # to be freed by the next

    @property
    def used_percent(self) -> float | None:
        if not self.total_bytes or self.used_bytes is None:
            return None
        return 100.0 * self.used_bytes / self.total_bytes


class PbsGroup(Record):
    store: str
    type: str  # vm, ct or host
    id: str  # the VMID for vm and ct, the host's name for host
    last_backup: float | None = None  # its newest snapshot's time
    count: int | None = None  # snapshots kept
    owner: str = ""
    comment: str = ""
    verified: str | None = None  # its newest snapshot's verify state: ok, failed, or None (not yet)
    size_bytes: float | None = None  # its newest snapshot's size

    @property
    def name(self) -> str:
        return f"{self.type}/{self.id}"


class PbsJob(Record):
    kind: str  # verify, sync, prune or gc
    id: str
    store: str
    last_state: str | None = None  # OK, "WARNINGS: n", or the error; None: it never ran
    last_end: float | None = None
    next_run: float | None = None

    @property
    def failed(self) -> bool:
        return bool(self.last_state) and self.last_state != "OK" and not str(self.last_state).startswith("WARNINGS")


class PbsState(State):
    url: str = ""
    tls: str = ""
    datastores: list[PbsDatastore] = []
    groups: list[PbsGroup] = []
    jobs: list[PbsJob] = []
    denied: list[str] = []
    snapshot_max_age: float | None = None
    ignore: list[str] = []  # the groups not judged (the collector's ignore)
    source_label: ClassVar[str] = "store"

    def unreadable_sources(self) -> dict[str, float | None]:
        """Datastores that cannot be read, or whose groups or snapshots the token was refused (only
        `.../snapshots` answering 403 resolved pbs_verify_failed, then it fired again as new)."""
        out: dict[str, float | None] = {d.name: None for d in self.datastores if d.error}
        for words in self.denied:
            if m := re.search(r"/admin/datastore/([^/\s]+)/", words):
                out[m.group(1)] = None
        return out

    def sources(self) -> set[str]:
        return {d.name for d in self.datastores}
