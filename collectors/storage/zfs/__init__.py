"""ZFS pools: `zpool status` (JSON where OpenZFS offers it) and `zpool list`, each device
with its disk and bay."""

from pathlib import Path

from collectors.plugin import CollectorPlugin, Pages, Section, Setup
from collectors.storage.zfs import findings
from collectors.storage.zfs.collector import ZfsCollector, build
from collectors.storage.zfs.config import ZfsConfig
from collectors.storage.zfs.demo import write_scene
from collectors.storage.zfs.starter import starter
from collectors.storage.zfs.state import ZfsState

SECTION: Section[ZfsState] = Section("disks", "Disks and arrays", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "`zpool status` and `zpool list` need no privileges on OpenZFS (they read /dev/zfs)."

PLUGIN = CollectorPlugin(
    "zfs", ZfsCollector, build, ZfsConfig, ZfsState,
    domain="storage", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, bays=findings.bay_devices,
                nouns={"zfs_pool": "ZFS pool", "zfs_device": "ZFS device"},
                words={"state": findings.STATE_WORDS, "scan": {"none": "never scrubbed"}},
                field_names={"scan": "last scan"}),
    setup=Setup(scene=write_scene, starter=starter))
