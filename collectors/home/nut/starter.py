"""The UPSes `rackpulse init` finds, as the starter config's [collectors.nut]: those NUT's
ups.conf names, and an upsd listening on this host (asked only on the running host)."""

from __future__ import annotations

import re
import socket

from collectors.starter import HostTree, q


def starter(tree: HostTree) -> list[str]:
    ups = re.findall(r"^\s*\[([^\]]+)\]", tree.read("/etc/nut/ups.conf") or "", re.M)
    listening = False
    if tree.live:
        try:
            with socket.create_connection(("127.0.0.1", 3493), timeout=0.3):
                listening = True
        except OSError:
            pass
    if not ups and not listening:
        return []
    out = ["[collectors.nut]", "[[collectors.nut.upsd]]", 'host = "127.0.0.1"', "port = 3493"]
    if ups:
        out.append(f"ups = [{', '.join(q(u) for u in ups)}]  # from /etc/nut/ups.conf")
    return out
