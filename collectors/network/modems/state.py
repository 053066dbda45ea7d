"""What the modems collector knows of each 3G/LTE modem (and the bond slave it carries)."""

from __future__ import annotations

from collectors.state import Record, State


class Modem(Record):
    key: str  # IMEI (else the equipment id, else the device path): stable across re-attaches
    name: str | None = None  # from [[collectors.modems.links]]
    imei: str | None = None
    device: str = ""  # sysfs path of the physical device
    number: str | None = None  # ModemManager's object number now (it changes on re-attach)
    model: str | None = None
    state: str = ""  # failed, disabled, enabled, searching, registered, connected ... ("gone")
    failed_reason: str | None = None
    registration: str | None = None  # home, roaming, searching, denied, idle ...
    operator: str | None = None
    access: list[str] = []  # access technologies: ["lte"], ["hsdpa", "hsupa"]
    family: str | None = None  # 2G, 3G, LTE or 5G
    quality: int | None = None  # percent
    # extended signal (after --signal-setup): dBm and dB by technology
    rssi: float | None = None
    rsrp: float | None = None
    rsrq: float | None = None
    snr: float | None = None  # LTE/5G SNR (SINR)
    rscp: float | None = None
    ecio: float | None = None
    has_sim: bool = True
    gone: bool = False  # seen before, not listed now
    # the link it carries and, when that is a bond slave, the slave's state as the bond sees it
    interface: str | None = None
    bond: str | None = None
    slave_up: bool | None = None
    slave_flaps: int | None = None
    poor: list[str] = []  # what is poor about its signal, in words ("RSRP -112 dBm")


class ModemsState(State):
    modems: list[Modem] = []
