"""Ceph: health checks in Ceph's words, OSDs up/in per host with their disk and bay, PGs, space."""

from pathlib import Path

from collectors.plugin import CollectorPlugin, Pages, Section, Setup
from collectors.storage.ceph import findings
from collectors.storage.ceph.collector import CephCollector, build
from collectors.storage.ceph.config import CephConfig
from collectors.storage.ceph.demo import write_scene
from collectors.storage.ceph.starter import starter
from collectors.storage.ceph.state import CephState

SECTION: Section[CephState] = Section("disks", "Disks and arrays", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "The `ceph` CLI with a keyring that may read the cluster (client.admin, or a read-only client with `mon 'allow r'`)."

PLUGIN = CollectorPlugin(
    "ceph", CephCollector, build, CephConfig, CephState,
    domain="storage", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, bays=findings.bay_devices, nouns={"ceph_osd": "Ceph OSD"},
                words={"health": findings.HEALTH_WORDS}),
    setup=Setup(scene=write_scene, starter=starter))
