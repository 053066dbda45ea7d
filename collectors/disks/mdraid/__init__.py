"""md RAID arrays: /proc/mdstat and `mdadm --detail`, each member with its disk and bay."""

from collectors.disks.mdraid import findings
from collectors.disks.mdraid.collector import MdraidCollector, build
from collectors.disks.mdraid.config import MdraidConfig
from collectors.plugin import CollectorPlugin

PLUGIN = CollectorPlugin("mdraid", MdraidCollector, build, MdraidConfig, domain="disks",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS)
