"""Disks through `smartctl --json`: health judged in words, serials, bays."""

from pathlib import Path

from collectors.disks.smart import findings
from collectors.disks.smart.collector import SmartCollector, build
from collectors.disks.smart.config import SmartConfig
from collectors.plugin import CollectorPlugin, Section

SECTION = Section("disks", "Disks and arrays", Path(__file__).parent,
                  lambda state: {"disks": findings.disks(state)})
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "smartctl needs root, or CAP_SYS_RAWIO and read access to the disk devices (`sudo -n smartctl` in its argv)."

PLUGIN = CollectorPlugin("smart", SmartCollector, build, SmartConfig, domain="disks",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
                         section=SECTION, bays=findings.bay_devices,
                         nouns={"disk": "disk", "bay": "bay"})
