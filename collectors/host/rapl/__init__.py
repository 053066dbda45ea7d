"""RAPL: the CPU packages' own energy counters (/sys/class/powercap), each zone's draw, and the
packages together as the lab energy source `cpu`."""

from pathlib import Path

from collectors.host.rapl.collector import RaplCollector, build
from collectors.host.rapl.config import RaplConfig
from collectors.host.rapl.demo import write_scene
from collectors.host.rapl.starter import starter
from collectors.host.rapl.state import RaplState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup

SECTION: Section[RaplState] = Section("host", "Host", Path(__file__).parent)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = ("Reads /sys/class/powercap/intel-rapl:*/energy_uj, which Linux 5.10 and later let only root read "
               "(CVE-2020-8694). Rather than running as root, give rackpulse's group read access at boot with "
               "a udev rule, /etc/udev/rules.d/70-rackpulse-rapl.rules:\n\n"
               "```\nSUBSYSTEM==\"powercap\", KERNEL==\"intel-rapl:*\", "
               "RUN+=\"/bin/chgrp rackpulse /sys%p/energy_uj\", RUN+=\"/bin/chmod g+r /sys%p/energy_uj\"\n```\n\n"
               "then `udevadm trigger --subsystem-match=powercap`. Group read of the counter is what the CVE "
               "warns about (an energy side channel, at a millisecond rate): rackpulse reads it every 30 s, "
               "and only its own user is in the group.")

PLUGIN = CollectorPlugin(
    "rapl", RaplCollector, build, RaplConfig, RaplState,
    domain="host", rank=5,
    pages=Pages(section=SECTION),
    setup=Setup(scene=write_scene, starter=starter))
