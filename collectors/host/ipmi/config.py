"""[collectors.ipmi]: this server's own BMC (/dev/ipmi0) and remote BMCs over IPMI-over-LAN."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator

from collectors.config import Argv, CollectorBase, Seconds, Strict, unique_names


class Bmc(Strict):
    """A BMC reached over the network (iDRAC, iLO, a Supermicro or ASRock BMC)."""

    name: Annotated[str, Field(min_length=1)]
    host: Annotated[str, Field(min_length=1)]
    port: Annotated[int, Field(ge=1, le=65535)] = 623
    user: str = ""
    # A file holding only the password, readable only by rackpulse. It is handed to FreeIPMI in a
    # private config file for the one call (never on a command line that `ps` shows, never logged).
    password_file: Path | None = None
    interface: Literal["lanplus", "lan"] = "lanplus"  # IPMI 2.0 (RMCP+) or 1.5
    privilege: Literal["user", "operator", "admin"] = "user"  # reading sensors and the SEL needs only "user"
    # FreeIPMI's --workaround-flags for a BMC that needs them ("opensesspriv", "authcap" ...).
    workarounds: list[str] = []

    def __repr__(self) -> str:  # the password file's path is fine; its content is never held here
        return f"Bmc({self.name}: {self.host}:{self.port}, user={self.user!r})"


class IpmiConfig(CollectorBase):
    interval: Seconds = 60.0
    timeout: Seconds = 120.0
    command_timeout: Seconds = 30.0  # a BMC over the LAN answers slowly: a few seconds for 60 sensors
    # This host's own BMC through the kernel's ipmi_si driver: "auto" reads it when /dev/ipmi0
    # exists; needs root or read-write access to /dev/ipmi0 (see PERMISSIONS).
    local: Literal["auto", "on", "off"] = "auto"
    bmcs: list[Bmc] = []
    ipmi_sensors: Argv = ["ipmi-sensors"]
    ipmi_sel: Argv = ["ipmi-sel"]
    ipmi_dcmi: Argv = ["ipmi-dcmi"]
    # A directory private to rackpulse's user: FreeIPMI's cache of each BMC's sensor records
    # (reading them is the slow part), and for the length of each call a BMC's credentials file.
    # Unset: rackpulse-ipmi-<uid> in the system's temporary directory.
    work_dir: Path | None = None
    # How long a critical or warning SEL entry stays on the tile and keeps its alert: an ECC error
    # logged at 03:00 is still news at breakfast.
    sel_hold: Seconds = 24 * 3600.0
    # A SEL fuller than this (0..1) is a warning: a full SEL drops new events.
    sel_full_ratio: Annotated[float, Field(gt=0, le=1)] = 0.9

    @field_validator("bmcs")
    @classmethod
    def _unique(cls, v: list[Bmc]) -> list[Bmc]:
        return unique_names(v, "collectors.ipmi.bmcs")
