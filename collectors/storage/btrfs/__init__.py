"""btrfs: mounted filesystems' devices, error counters, scrub and space by profile."""

from pathlib import Path

from collectors.plugin import CollectorPlugin, Section
from collectors.storage.btrfs import findings
from collectors.storage.btrfs.collector import BtrfsCollector, build
from collectors.storage.btrfs.config import BtrfsConfig

SECTION = Section("disks", "Disks and arrays", Path(__file__).parent, findings.view)
PLUGIN = CollectorPlugin("btrfs", BtrfsCollector, build, BtrfsConfig, domain="storage",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS,
                         section=SECTION, bays=findings.bay_devices,
                         nouns={"btrfs_fs": "btrfs filesystem", "btrfs_device": "btrfs device"})
