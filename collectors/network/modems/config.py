"""[collectors.modems]: 3G/LTE modems through ModemManager's mmcli, tied to the links they carry."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from collectors.config import Argv, CollectorBase, Seconds, Strict


class ModemLink(Strict):
    """A modem (by IMEI, or by its sysfs device path) and the interface it carries: a bond slave
    (the EoIP tunnel over it, or its wwan0)."""

    imei: Annotated[str, Field(pattern=r"^[0-9]{14,16}$")] | None = None
    device: Annotated[str, Field(min_length=1, max_length=300)] | None = None
    interface: Annotated[str, Field(min_length=1, max_length=15, pattern=r"^[^\s/]+$")]
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f]+$")] | None = None

    @model_validator(mode="after")
    def _one_key(self) -> ModemLink:
        if not self.imei and not self.device:
            raise ValueError("a modem link names the modem by imei or by device")
        return self


class ModemsConfig(CollectorBase):
    # Off unless asked for: ModemManager is on many laptops and routers without a modem worth watching.
    enabled: bool = False
    mmcli: Argv = ["mmcli"]
    # Extended signal (RSRP, RSRQ, SNR, RSCP, Ec/Io) needs `mmcli -m N --signal-setup=SECONDS` once per
    # modem attach; it changes the modem's reporting, so only when allowed: 0 leaves it alone.
    signal_setup: Annotated[int, Field(ge=0, le=3600)] = 0
    links: list[ModemLink] = []
    # modem_signal_poor, per technology: at or below these is poor (dBm; dB for RSRQ, Ec/Io, SNR).
    poor_rsrp: float = -110.0  # LTE, 5G
    poor_rsrq: float = -15.0
    poor_snr: float = 0.0
    poor_rscp: float = -100.0  # UMTS/HSPA
    poor_ecio: float = -15.0
    poor_rssi: float = -100.0  # GSM, and UMTS without RSCP
    poor_quality: Annotated[int, Field(ge=0, le=100)] = 15  # percent, when no extended signal is known
    # modem_gone: a modem seen before and listed no more; one gone longer than this is forgotten.
    gone_memory: Seconds = 86400.0
