"""The demo's bond0: six 3G links through EoIP tunnels, one of them flapping."""

from __future__ import annotations

from pathlib import Path

from collectors.scenes import atomic_write


def write_scene(root: Path, t: float) -> None:
    # eoip4's 3G modem: fine, then dropping out every 20 s (story seconds 20-100), down for good
    # (100-140), back. Its failure count rises with each drop.
    downs = [(20, 30), (40, 50), (60, 70), (80, 90), (100, 140)]
    flapping_up = not any(a <= t < b for a, b in downs)
    drops = sum(a <= t for a, _ in downs)
    slaves = []
    for i in range(1, 7):
        up = flapping_up if i == 4 else True
        failures = drops if i == 4 else 1
        slaves.append(f"Slave Interface: eoip{i}\nMII Status: {'up' if up else 'down'}\nSpeed: "
                      f"{'Unknown' if not up else '21 Mbps'}\nDuplex: {'full' if up else 'Unknown'}\n"
                      f"Link Failure Count: {failures}\nPermanent HW addr: 02:00:00:00:00:0{i}\nSlave queue ID: 0\n")
    atomic_write(root / "proc/net/bonding/bond0",
                  "Ethernet Channel Bonding Driver: v6.1.0\n\nBonding Mode: load balancing (xor)\n"
                  "Transmit Hash Policy: layer3+4 (1)\nMII Status: up\nMII Polling Interval (ms): 100\n"
                  "Up Delay (ms): 0\nDown Delay (ms): 0\nPeer Notification Delay (ms): 0\n\n" + "\n".join(slaves))
