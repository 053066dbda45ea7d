"""btrfs: mounted filesystems' devices, error counters, scrub and space by profile."""

from pathlib import Path

from collectors.plugin import CollectorPlugin, Needs, Pages, Section, Setup
from collectors.privilege import MOUNT, Privilege
from collectors.storage.btrfs import findings
from collectors.storage.btrfs.collector import BtrfsCollector, build
from collectors.storage.btrfs.config import BtrfsConfig
from collectors.storage.btrfs.starter import starter
from collectors.storage.btrfs.state import BtrfsState

SECTION: Section[BtrfsState] = Section("disks", "Disks and arrays", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PRIVILEGES = (Privilege("btrfs", "`filesystem show`, `device stats` and `scrub status` read the filesystems' "
                                 "devices and ioctls, which need root",
                         args=("filesystem show --raw", f"device stats {MOUNT}", f"scrub status -R {MOUNT}")),)
PERMISSIONS = "Reads /proc/mounts and /sys/fs/btrfs: no privileges; `btrfs filesystem show` and `scrub status` need root."

PLUGIN = CollectorPlugin(
    "btrfs", BtrfsCollector, build, BtrfsConfig, BtrfsState,
    domain="storage", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, bays=findings.bay_devices,
                nouns={"btrfs_fs": "btrfs filesystem", "btrfs_device": "btrfs device"}),
    needs=Needs(privileges=PRIVILEGES),
    setup=Setup(starter=starter))
