"""The disks `rackpulse init` finds, as the starter config's [collectors.smart]."""

from __future__ import annotations

from collectors.location import read_locations
from collectors.starter import HostTree


def starter(tree: HostTree) -> list[str]:
    disks = [d for d in read_locations(tree.root).values() if d.serial or d.wwn or d.by_path or d.enclosure_slot]
    out = ["[collectors.smart]", f"## {len(disks)} disks found; smartctl never wakes a sleeping one."]
    if where := tree.tool("smartctl"):
        out.append(f"## smartctl found ({where})")
    else:
        out.append("## smartctl is not installed here: `apt install smartmontools` (the collector says \"no data\" "
                   "until it is)")
    return out
