"""What `rackpulse init` writes for RAPL: the CPU packages it found under /sys/class/powercap,
and whether rackpulse's user will be let to read their counters."""

from __future__ import annotations

from collectors.host.rapl.powercap import PREFIX
from collectors.starter import HostTree


def starter(tree: HostTree) -> list[str]:
    zones = [z for z in tree.listdir("/sys/class/powercap") if z.startswith(PREFIX) and z.count(":") == 1]
    if not zones:
        return []
    names = [(tree.read(f"/sys/class/powercap/{z}/name") or z).strip() for z in zones]
    out = ["[collectors.rapl]", f"## RAPL energy counters found: {', '.join(names)}. Their sum is the energy source",
           '## "cpu" on /energy; behind a metering plug, say so in [energy] inside = { cpu = "<plug>" }.',
           '# source = "cpu"']
    if tree.read(f"/sys/class/powercap/{zones[0]}/energy_uj") is None:
        out.append("## energy_uj is root's only here (Linux 5.10+): see collectors/host/rapl/README.md for the udev rule.")
    return out
