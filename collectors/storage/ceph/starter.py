"""Ceph, when `rackpulse init` finds its tool, as the starter config's [collectors.ceph]."""

from __future__ import annotations

from collectors.starter import HostTree


def starter(tree: HostTree) -> list[str]:
    where = tree.tool("ceph")
    if where is None:
        return []
    return ["[collectors.ceph]", f"## ceph found ({where}): on by default, it reads what is there"]
