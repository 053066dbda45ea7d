"""What the MegaRAID/PERC collector knows of each controller, virtual and physical drive: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class Bbu(Record):
    kind: str  # BBU | CacheVault
    model: str = ""
    state: str = ""  # Optimal ...
    temperature: str = ""  # as storcli prints it


class VirtualDrive(Record):
    dg_vd: str  # "0/0": drive group / virtual drive
    raid: str = ""  # RAID6
    state: str = ""  # storcli's word: Optl, Dgrd, Pdgd, Rbld, OfLn, Rec
    size: str = ""
    name: str = ""


class PhysicalDrive(Record):
    key: str  # "<controller>/<EID:Slt>"
    eid_slot: str  # "252:4"
    enclosure: str = ""
    slot: str = ""
    did: int | None = None
    state: str = ""  # storcli's word: Onln, UGood, UBad, Rbld, Offln, Failed, Msng ...
    dg: str = "-"  # drive group, "-" for none
    size: str = ""
    interface: str = ""
    media: str = ""
    model: str | None = ""
    serial: str | None = None
    wwn: str | None = None
    firmware: str | None = None
    device: str | None = None  # the kernel's name, when the host sees the drive (JBOD)
    bay: str | None = None
    media_errors: int | None = None
    other_errors: int | None = None
    predictive_failures: int | None = None
    temperature: float | None = None
    smart_alert: bool | None = None
    rebuild_ratio: float | None = None
    rebuild_remaining_seconds: float | None = None


class Controller(Record):
    index: int | None = None
    name: str  # c0
    model: str = ""
    serial: str = ""
    status: str = ""  # Optimal, OK, Needs Attention, Degraded ...
    problem: str = ""  # what storcli said when it answered "Failure" but still gave data
    bbu: Bbu | None = None
    vds: list[VirtualDrive] = []
    pds: list[PhysicalDrive] = []


class MegaraidState(State):
    controllers: list[Controller] = []
