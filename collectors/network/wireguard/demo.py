"""The demo's WireGuard: wg0 with a site-to-site peer that keeps its tunnel up (persistent
keepalive 25 s) and a phone that is expected but goes quiet for a while each loop (its latest
handshake grows stale, then it roams back from another address). Written as `wg show all dump`
answers for the demo's replay stand-in."""

from __future__ import annotations

import time
from pathlib import Path

from collectors.scenes import write_answer

# Made-up public keys (44 characters of base64, as wg prints them).
SITE_B = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="
PHONE = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="
QUIET = (100.0, 200.0)  # story seconds in which the phone sends nothing


def dump(t: float, now: float) -> str:
    t = t % 240.0
    lines = ["wg0\t(hidden)\tF4Ys7UbrKqfG0JZyNn0PjbAAzv3bXW3xXy5gNc1yImI=\t51820\toff"]
    site_hs = int(now - (t % 20))  # a handshake every 2 minutes at most; keepalives keep it fresh
    lines.append(f"wg0\t{SITE_B}\t(none)\t203.0.113.7:51820\t10.8.0.2/32,192.168.20.0/24\t{site_hs}\t"
                 f"{int(8_200_000_000 + t * 90_000)}\t{int(3_100_000_000 + t * 45_000)}\t25")
    if QUIET[0] <= t < QUIET[1]:
        phone_hs, endpoint = int(now - (t - QUIET[0]) - 30), "198.51.100.23:40112"
    else:
        phone_hs = int(now - (t % 30))
        endpoint = "198.51.100.23:40112" if t < QUIET[0] else "192.0.2.77:61234"  # roamed to another network
    lines.append(f"wg0\t{PHONE}\t(none)\t{endpoint}\t10.8.0.3/32\t{phone_hs}\t{int(42_000_000 + t * 1_000)}\t"
                 f"{int(150_000_000 + t * 4_000)}\toff")
    return "\n".join(lines) + "\n"


def write_scene(root: Path, t: float) -> None:
    write_answer(root / "demo-tools" / "wg", ["show", "all", "dump"], dump(t, time.time()))
