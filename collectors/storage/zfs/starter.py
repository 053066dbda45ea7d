"""ZFS, when `rackpulse init` finds its tool, as the starter config's [collectors.zfs]."""

from __future__ import annotations

from collectors.starter import HostTree


def starter(tree: HostTree) -> list[str]:
    where = tree.tool("zpool")
    if where is None:
        return []
    return ["[collectors.zfs]", f"## zpool found ({where}): on by default, it reads what is there"]
