"""What the OpenVPN collector knows of each instance and its tun: its state, typed."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class Client(Record):
    common_name: str
    real_address: str = ""
    virtual_address: str | None = None
    bytes_received: int | None = None
    bytes_sent: int | None = None
    connected_since: int | None = None  # unix time, when the status says it


class Interface(Record):
    """The tun's counters from /sys/class/net/<tun>."""

    tx_dropped: int | None = None
    rx_dropped: int | None = None
    tx_bytes: int | None = None
    rx_bytes: int | None = None
    tx_queue_len: int | None = None
    mtu: int | None = None


class Hint(Record):
    saw: str  # what was seen
    do: str  # the config line to add


class Instance(Record):
    name: str
    up: bool = False
    error: str | None = None  # why it is down
    mode: str | None = None  # server | client
    state: str | None = None  # from the management interface: CONNECTED ...
    title: str | None = None
    clients: list[Client] = []
    undef_clients: int | None = None  # connections not yet authenticated
    bytes_in: int | None = None
    bytes_out: int | None = None
    interface: str | None = None  # its tun
    iface: Interface = Interface()
    iface_error: str | None = None
    drops_delta: int | None = None  # packets the tun dropped on transmit since the last poll
    hints: list[Hint] = []
    tx_rate_bytes: float | None = None
    rx_rate_bytes: float | None = None


class OpenvpnState(State):
    instances: list[Instance] = []
    # An instance that cannot be read (its status file stale, its management socket away) is
    # vpn_down by itself; the rest of what fired for it (its tun's drops) is held meanwhile.
    source_label: ClassVar[str] = "instance"

    def unreadable_sources(self) -> dict[str, float | None]:
        return {v.name: None for v in self.instances if not v.up}

    def sources(self) -> set[str]:
        return {v.name for v in self.instances}
