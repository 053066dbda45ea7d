"""What the host collector read of CPU, memory, filesystems, interfaces and disks: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class Cpu(Record):
    busy_ratio: float | None = None  # 0..1 since the previous poll; None at the first
    cores: int | None = None


class Limits(Record):
    """The thresholds [collectors.host] set: carried in the state so that a server judging an
    agent's host reads the agent's own."""

    filesystem_full_ratio: float | None = None
    memory_low_ratio: float | None = None


class Memory(Record):
    total: int | None = None  # bytes
    available: int | None = None
    swap_total: int | None = None
    swap_used: int | None = None


class Filesystem(Record):
    mountpoint: str
    device: str = ""
    fstype: str = ""
    error: str | None = None  # statvfs failed (a hung NFS mount): the rest is unknown
    size: int | None = None
    avail: int | None = None
    used_ratio: float | None = None  # as df counts it
    files_free: int | None = None
    files: int | None = None
    readonly: bool = False
    expect_readonly: bool = False
    hours_to_full: float | None = None  # at the rate of the last hours; None while not shrinking


class NetInterface(Record):
    name: str
    oper: str | None = None  # operstate
    speed_mbps: int | None = None
    rx_bytes: int | None = None
    tx_bytes: int | None = None
    rx_packets: int | None = None
    tx_packets: int | None = None
    rx_errs: int | None = None
    tx_errs: int | None = None
    rx_drop: int | None = None
    tx_drop: int | None = None


class BlockDev(Record):
    name: str
    read_bytes: int | None = None
    written_bytes: int | None = None
    busy_ratio: float | None = None  # share of the time since the previous poll it was busy


class Temperature(Record):
    chip: str
    sensor: str
    celsius: float | None = None
    max: float | None = None  # the chip's own limits
    crit: float | None = None


class HostState(State):
    cpu: Cpu | None = None  # None before the first collection
    limits: Limits = Limits()
    load: dict[str, float | None] = {}  # "1m", "5m", "15m"
    memory: Memory = Memory()
    pressure: dict[str, dict[str, dict[str, float | None]]] = {}  # cpu/memory/io -> some/full -> avg10 ...
    filesystems: list[Filesystem] = []
    interfaces: list[NetInterface] = []
    blockdevs: list[BlockDev] = []
    temperatures: list[Temperature] = []  # the hottest first
