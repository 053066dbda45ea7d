"""[collectors.frr]: how to reach vtysh."""

from __future__ import annotations

from collectors.config import Argv, CollectorBase


class FrrConfig(CollectorBase):
    # Off unless asked for: a host with FRR installed but not routing would otherwise show an error.
    enabled: bool = False
    # e.g. ["vtysh", "--vty_socket", "/var/run/frr/ns1"] or ["vtysh", "-N", "ns1"] or ["sudo", "-n", "vtysh"]
    vtysh: Argv = ["vtysh"]
