"""The bonds `rackpulse init` finds, as the starter config's [collectors.bonding]."""

from __future__ import annotations

from collectors.starter import HostTree, q


def starter(tree: HostTree) -> list[str]:
    bonds = tree.listdir("/proc/net/bonding")
    return ["[collectors.bonding]", f"bonds = [{', '.join(q(b) for b in bonds)}]"] if bonds else []
