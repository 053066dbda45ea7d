"""libvirt: the KVM guests of a plain libvirt host (virsh domstats), and the ones set to
autostart that are not running."""

from pathlib import Path

from collectors.host.libvirt import findings
from collectors.host.libvirt.collector import LibvirtCollector, build
from collectors.host.libvirt.config import LibvirtConfig
from collectors.host.libvirt.demo import write_scene
from collectors.host.libvirt.state import LibvirtState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup

SECTION: Section[LibvirtState] = Section("host", "Host", Path(__file__).parent)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = ("virsh (libvirt-clients) and, for qemu:///system, membership of the `libvirt` group (Debian; "
               "`libvirtd` on some distributions): read-only use of the daemon's socket is all it asks.")

PLUGIN = CollectorPlugin(
    "libvirt", LibvirtCollector, build, LibvirtConfig, LibvirtState,
    domain="host", rank=6, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, nouns={"vm": "virtual machine"}),
    setup=Setup(scene=write_scene))
