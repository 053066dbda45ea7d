"""[collectors.snmp]: the switches whose ports are polled (IF-MIB)."""

from __future__ import annotations

from collectors.config import CollectorBase, Seconds
from collectors.snmpwire import SnmpTarget


class SnmpConfig(CollectorBase):
    interval: Seconds = 30.0
    targets: list[SnmpTarget] = []
