"""What the Proxmox VE collector read: nodes, guests with their newest backup, storages,
replication jobs and the tasks that failed."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class PveNode(Record):
    name: str
    online: bool = True
    cpu: float | None = None  # share of its cores busy, 0..1
    cores: int | None = None
    memory_bytes: float | None = None
    memory_total_bytes: float | None = None
    uptime: float | None = None


class PveBackup(Record):
    time: float | None = None  # when the backup was made (the archive's ctime)
    storage: str
    verified: str | None = None  # "ok", "failed", or None: never verified (PBS only verifies)
    size_bytes: float | None = None


class PveGuest(Record):
    vmid: str  # the VMID, unique in the cluster (an identifier: "101")
    name: str
    type: str  # qemu or lxc
    node: str
    status: str  # running, stopped, paused (qemu), unknown when its node is away
    uptime: float | None = None
    cpu: float | None = None  # share of its vCPUs busy, 0..1
    cpus: float | None = None
    memory_bytes: float | None = None
    memory_total_bytes: float | None = None
    net_in_bytes: float | None = None  # since it started
    net_out_bytes: float | None = None
    disk_read_bytes: float | None = None
    disk_write_bytes: float | None = None
    hastate: str | None = None  # the HA manager's state, when the guest is an HA resource
    lock: str | None = None  # backup, migrate, snapshot ... while one holds it
    onboot: bool | None = None  # read for the guests that are not running only
    expected: bool = False  # onboot, HA "started", or in watch: it should be running
    backup_expected: bool = False  # a backup job covers it, or it was backed up before
    backup: PveBackup | None = None  # its newest, on any backup storage the token may read
    backup_failed: str | None = None  # its newest vzdump task's failure, when newer than its newest backup
    backup_failed_at: float | None = None

    @property
    def kind(self) -> str:
        return "VM" if self.type == "qemu" else "CT"

    @property
    def entity_kind(self) -> str:
        """Its kind of inventory entity, its page /entity/<kind>/<VMID> (libvirt's guests are "vm")."""
        return "pve_vm" if self.type == "qemu" else "pve_ct"

    @property
    def label(self) -> str:
        return f"{self.kind} {self.vmid} ({self.name})"

    @property
    def running(self) -> bool:
        return self.status == "running"

    def backup_age(self, now: float) -> float | None:
        """Seconds since its newest backup; None without one (or with its time unknown)."""
        return None if self.backup is None or self.backup.time is None else now - self.backup.time


class PveStorage(Record):
    name: str
    node: str  # the node it was read on; a shared storage is listed once
    type: str = ""  # dir, zfspool, lvmthin, nfs, pbs ...
    shared: bool = False
    active: bool = True
    used_bytes: float | None = None
    total_bytes: float | None = None
    content: list[str] = []

    @property
    def used_percent(self) -> float | None:
        if not self.total_bytes or self.used_bytes is None:
            return None
        return 100.0 * self.used_bytes / self.total_bytes


class PveReplication(Record):
    id: str  # VMID-N
    guest: str  # its VMID
    target: str
    source: str = ""
    last_sync: float | None = None
    fail_count: int | None = 0  # failed runs in a row
    error: str | None = None


class PveTask(Record):
    type: str  # vzdump, qmstart, vzmigrate ...
    id: str  # the guest's VMID, or "" for a job over several
    node: str
    user: str
    start: float | None = None
    end: float | None = None
    status: str = ""  # OK, "WARNINGS: 2", or the error


class ProxmoxState(State):
    url: str = ""
    tls: str = ""  # how the node's certificate was checked, in words
    cluster: str | None = None  # None: a single node, no cluster
    quorate: bool | None = None
    nodes: list[PveNode] = []
    guests: list[PveGuest] = []
    storages: list[PveStorage] = []
    replication: list[PveReplication] = []
    failed_tasks: list[PveTask] = []  # within failed_tasks_window, newest first
    backup_job_failures: list[PveTask] = []  # job-wide vzdump tasks that failed, newest per node
    denied: list[str] = []  # what the token may not read, each naming the privilege it lacks
    backup_max_age: float | None = None  # the collector's backup_max_age
    unread: list[str] = []  # API paths this run could not read (refused, or not answered)
    # Its findings name the part of the API they come from (label "source"): a part that cannot
    # be read holds their firing alerts (pve_backup_failed resolved when a listing answered 403).
    source_label: ClassVar[str] = "source"

    def unreadable_sources(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for path in self.unread:
            if "/storage/" in path or path.startswith(("/cluster/backup", "/cluster/tasks")):
                out["backups"] = None
            if path.endswith("/replication"):
                out["replication"] = None
        return out
