"""[collectors.frr]: how to reach vtysh, and how to judge prefixes."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from collectors.config import Argv, CollectorBase, Seconds


class FrrConfig(CollectorBase):
    # Off unless asked for: a host with FRR installed but not routing would otherwise show an error.
    enabled: bool = False
    # e.g. ["vtysh", "--vty_socket", "/var/run/frr/ns1"] or ["vtysh", "-N", "ns1"] or ["sudo", "-n", "vtysh"]
    vtysh: Argv = ["vtysh"]
    # bgp_prefixes_dropped: the accepted prefixes of a session fell by more than this share of
    # their highest count within drop_window while the session stayed Established.
    drop_ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5
    drop_window: Seconds = 600.0
    # bgp_prefix_limit_near: accepted prefixes above this share of the peer's maximum-prefix.
    limit_near: Annotated[float, Field(gt=0, le=1)] = 0.8
    # BFD sessions from bfdd (`show bfd peers json`); without bfdd running there are none.
    bfd: bool = True
    # For peers with soft-reconfiguration inbound: one `prefix-counts` command each, for the
    # prefixes received before the inbound policy (and so the filtered ones). At most this many.
    max_prefix_count_queries: Annotated[int, Field(ge=0)] = 32
    # EVPN VNIs from zebra (`show evpn vni json`); a router without EVPN has none, no error.
    evpn: bool = True
    # evpn_vtep_lost: a remote VTEP a VNI had within this many seconds and has no longer. One
    # gone for longer is forgotten (a leaf taken out of service), and so is a VNI gone that long.
    vtep_memory: Seconds = 86400.0
