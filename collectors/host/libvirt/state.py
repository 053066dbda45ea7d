"""What the libvirt collector read of each guest."""

from __future__ import annotations

from collectors.state import Record, State


class DomainView(Record):
    name: str
    state: str = "no state"  # running, paused, shut off, crashed ... (virDomainState in words)
    reason: str = "unknown"  # why: booted, destroyed, I/O error ...
    autostart: bool = False
    expected: bool = False  # autostart, or named in expect_running: it should be running
    vcpus: int | None = None
    cpu_seconds: float | None = None  # since the guest started
    memory_bytes: float | None = None  # the balloon's current size: what the guest has now
    memory_max_bytes: float | None = None
    rss_bytes: float | None = None  # what its QEMU process holds on the host
    block_read_bytes: float | None = None
    block_write_bytes: float | None = None
    net_rx_bytes: float | None = None
    net_tx_bytes: float | None = None

    @property
    def running(self) -> bool:
        return self.state == "running"


class LibvirtState(State):
    uri: str = ""
    domains: list[DomainView] = []
