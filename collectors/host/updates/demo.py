"""Updates in `rackpulse demo`: the NAS has three updates waiting (one from Debian's security
archive), and from story second 170 unattended-upgrades has installed a new kernel: a reboot is
owed (/run/reboot-required names linux-image-6.1.0-28-amd64, /lib/modules holds it beside the
running 6.1.0-26-amd64) until the loop's end, when the story's NAS has rebooted into it and the
next loop starts again on the older kernel, the new one not yet installed. apt's simulation is
replayed from what this scene writes; the lists were updated at 06:25 today."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

from collectors.scenes import atomic_write, write_answer

ARGS = ["-s", "-o", "Debug::NoLocking=1", "upgrade"]
RUNNING, NEW = "6.1.0-26-amd64", "6.1.0-28-amd64"
OWED = (170.0, 240.0)


def simulation(owed: bool) -> str:
    inst = ["Inst openssl [3.0.15-1~deb12u1] (3.0.17-1~deb12u2 Debian-Security:12/stable-security [amd64])",
            "Inst tzdata [2025b-0+deb12u1] (2025b-0+deb12u2 Debian:12.12/stable [all])",
            "Inst smartmontools [7.3-pre1] (7.3-pre1+deb12u1 Debian:12.12/stable [amd64])"]
    kernel = [] if owed else [f"Inst linux-image-{NEW} (6.1.148-1 Debian-Security:12/stable-security [amd64])"]
    lines = ["Reading package lists...", "Building dependency tree...", "Calculating upgrade...",
             f"{len(inst) + len(kernel)} upgraded, 0 newly installed, 0 to remove and 0 not upgraded.", *kernel, *inst]
    return "\n".join(lines) + "\n"


def write_scene(root: Path, t: float) -> None:
    owed = OWED[0] <= t % 240 < OWED[1]
    write_answer(root / "demo-tools" / "apt-get", ARGS, simulation(owed))
    atomic_write(root / "proc/sys/kernel/osrelease", RUNNING + "\n")
    for release in (RUNNING, NEW):
        folder = root / "lib/modules" / release
        if release == RUNNING or owed:
            folder.mkdir(parents=True, exist_ok=True)
        elif folder.exists():
            folder.rmdir()
    flag = root / "run/reboot-required"
    if owed:
        atomic_write(flag, "*** System restart required ***\n")
        atomic_write(root / "run/reboot-required.pkgs", f"linux-image-{NEW}\n")
    else:
        for f in (flag, root / "run/reboot-required.pkgs"):
            f.unlink(missing_ok=True)
    lists = root / "var/lib/apt/lists"
    stamp = lists / "deb.debian.org_debian_dists_bookworm_InRelease"
    if not stamp.exists():
        atomic_write(stamp, "demo\n")
        when = datetime.now().replace(hour=6, minute=25, second=0, microsecond=0).timestamp()
        os.utime(stamp, (when if when <= time.time() else when - 86400,) * 2)


def demo_section(replay: list[str], interval: float) -> dict[str, object]:
    return {"interval": interval, "manager": "apt", "apt_get": replay}
