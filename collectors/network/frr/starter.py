"""FRR, when `rackpulse init` finds it, as the starter config's [collectors.frr]."""

from __future__ import annotations

from collectors.starter import HostTree


def starter(tree: HostTree) -> list[str]:
    if not (tree.tool("vtysh") or tree.exists("/etc/frr/frr.conf")):
        return []
    return ["[collectors.frr]", "## FRR is installed: its BGP sessions per VRF and address family.", "enabled = true"]
