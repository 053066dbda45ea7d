"""[collectors.bonding]: which bonds under /proc/net/bonding."""

from __future__ import annotations

from collectors.config import CollectorBase, Seconds


class BondingConfig(CollectorBase):
    interval: Seconds = 10.0
    # Bonds to read from /proc/net/bonding; empty means all of them.
    bonds: list[str] = []
