"""What the SMART collector knows of each disk: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class AtaRow(Record):
    """One line of the ATA attribute table, as smartctl prints it."""

    id: int | None = None
    name: str = ""
    value: int | None = None  # normalized: higher is better
    worst: int | None = None
    thresh: int | None = None  # fails at or below this
    raw: float | None = None
    raw_string: str | None = None
    when_failed: str = ""  # "", "past" or "now"
    prefailure: bool = False
    decoded: float | None = None  # the value meant: a Seagate's error count, not its 48 packed bits
    shown: str | None = None  # as smartctl -v prints it: "2988/4294967295", "0 0 0"
    packed: str | None = None  # the packing when not plain 48 bits: "raw24/raw32", "raw16", "tempminmax"


class Reading(Record):
    """A named value of the NVMe health log or the SCSI counters."""

    name: str
    value: int | float | str | None = None


class SelfTestRun(Record):
    """One entry of the drive's self-test log (ATA, NVMe or SCSI), newest first as the drive keeps it."""

    type: str  # "short", "long", "conveyance", "selective", "offline" or the drive's own words
    result: str  # the drive's words: "Completed without error", "Completed: read failure"
    passed: bool | None = None  # None: aborted, interrupted or still running
    hours: int | None = None  # power-on hours when it ran (ATA keeps 16 bits of them)
    lba: int | None = None  # the first failing block, when it failed


class SelfTests(Record):
    """What the drive says of its self-tests: one running now, and its log."""

    running: str | None = None  # "short" or "long" while one runs
    percent_done: int | None = None
    log: list[SelfTestRun] = []
    minutes: dict[str, int | None] = {}  # how long the drive says each takes: {"short": 2, "long": 523}


class SmartTable(Record):
    """The whole SMART report in rows for a person; empty lists where the disk speaks another protocol."""

    ata: list[AtaRow] = []
    nvme: list[Reading] = []
    scsi: list[Reading] = []


class Disk(Record):
    key: str  # the serial, else "wwn:…", "path:…" or "dev:…" when a USB bridge hides it
    device: str  # kernel name: sda
    serial: str | None = None
    serial_hidden: bool = False
    model: str | None = None
    wwn: str | None = None
    firmware: str | None = None
    protocol: str | None = None  # ATA, NVMe, SCSI
    dev_type: str | None = None  # smartctl's -d type
    capacity_bytes: int | None = None
    form_factor: str | None = None  # "3.5 inches", "2.5 inches", "M.2"
    rotation_rpm: int | None = None  # 0: solid state
    by_path: str | None = None  # the controller port it hangs on
    enclosure_slot: str | None = None
    bay: str | None = None
    smart_passed: bool | None = None
    temperature: float | None = None
    power_on_hours: int | None = None
    # Failure-predicting counters: "5", "187", ... for ATA; "media_errors", "percentage_used" ... for NVMe.
    attributes: dict[str, float | None] = {}
    accepted: dict[str, float | None] = {}  # [[disks.accept]]: the values accepted as this disk's normal
    exit_status: int | None = None  # smartctl's bitmask
    messages: list[str] = []
    standby: bool = False  # asleep and not woken: the values are from before
    health: int | None = None  # 0 ok, 1 warning, 2 failing
    health_name: str = "unknown"  # ok, warning, failing
    reasons: list[str] = []
    table: SmartTable = SmartTable()
    vendor: str = ""
    selftests: SelfTests = SelfTests()
    selftest_started: dict[str, float | None] = {}
    # Wear (SSDs): percent of rated life used, from what, and when 100 % comes at this rate (epoch).
    wear_used: float | None = None
    wear_source: str | None = None
    wear_full_at: float | None = None
    written_bytes: float | None = None  # "short"/"long" -> when rackpulse last started one (epoch)


class BayStay(Record):
    """One disk's time in one bay."""

    bay: str
    serial: str  # the disk's key: its serial, else "wwn:…"
    model: str | None = None
    device: str | None = None  # its kernel name while there
    first_seen: float | None = None  # None only for a stored number that was not finite
    last_seen: float | None = None
    left: float | None = None  # when it was found gone (None: still there)
    how: str | None = None  # "failed", "pulled", "replaced", "moved to <bay>"
    health: str = "unknown"  # the last verdict while it sat there


class SmartState(State):
    disks: list[Disk] = []
    bays: list[BayStay] = []  # every disk that has sat in each bay (bay_history.py)
