"""btrfs, when `rackpulse init` finds its tool, as the starter config's [collectors.btrfs]."""

from __future__ import annotations

from collectors.starter import HostTree


def starter(tree: HostTree) -> list[str]:
    where = tree.tool("btrfs")
    if where is None:
        return []
    return ["[collectors.btrfs]", f"## btrfs found ({where}): on by default, it reads what is there"]
