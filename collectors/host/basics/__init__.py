"""Host basics: CPU, load, memory, pressure, filesystems, interfaces and block devices."""

from pathlib import Path

from collectors.host.basics import findings
from collectors.host.basics.collector import HostCollector, build
from collectors.host.basics.config import HostConfig
from collectors.host.basics.demo import write_scene
from collectors.host.basics.starter import starter
from collectors.host.basics.state import HostState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup

SECTION: Section[HostState] = Section("host", "Host", Path(__file__).parent)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Reads /proc and /sys under host_root: no privileges."

PLUGIN = CollectorPlugin(
    "host", HostCollector, build, HostConfig, HostState,
    domain="host", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION),
    setup=Setup(scene=write_scene, starter=starter))
