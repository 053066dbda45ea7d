"""The md arrays `rackpulse init` finds, as the starter config's [collectors.mdraid]."""

from __future__ import annotations

from collectors.base import CollectorError
from collectors.disks.mdraid.mdstat import MdArray, parse_mdstat
from collectors.starter import HostTree


def starter(tree: HostTree) -> list[str]:
    out = ["[collectors.mdraid]"]
    arrays: tuple[MdArray, ...] = ()
    text = tree.read("/proc/mdstat")
    if text:
        try:
            arrays = parse_mdstat(text).arrays
        except CollectorError as exc:
            tree.notes.append(f"/proc/mdstat: {exc}")
    for a in arrays:
        out.append(f"## {a.name}: {a.level or 'level unknown'}, members {' '.join(m.device for m in a.members) or 'none'}")
    if not arrays:
        out.append("## no md arrays on this host now (the collector says \"no data\" until there are)")
    if where := tree.tool("mdadm"):
        out.append(f"## mdadm found ({where}): `mdadm --detail` names each member's slot (it needs root)")
    return out
