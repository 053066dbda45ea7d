"""[collectors.nut]: upsd servers (NUT's network protocol) and UPSes with a network card (UPS-MIB)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr

from collectors.config import CollectorBase, Seconds, Strict, secret_value
from collectors.snmpwire import SnmpTarget


class UpsdTarget(Strict):
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 3493
    username: str | None = None
    # The password inline, or (better) in a file readable only by rackpulse.
    password: SecretStr | None = None
    password_file: Path | None = None
    # UPS names on that upsd; empty means all of them (LIST UPS).
    ups: list[str] = []

    def password_value(self) -> str | None:
        return secret_value(self.password, self.password_file)

    def __repr__(self) -> str:  # never show the password in logs or errors
        return f"UpsdTarget({self.host}:{self.port}, user={self.username!r})"


class NutConfig(CollectorBase):
    interval: Seconds = 10.0
    command_timeout: Seconds = 5.0
    upsd: list[UpsdTarget] = []
    # UPSes with a network card, read through UPS-MIB (RFC 1628); same keys as an SNMP target.
    snmp: list[SnmpTarget] = []
