"""Disks through `smartctl --json`: health judged in words, serials, bays."""

from collectors.disks.smart import findings
from collectors.disks.smart.collector import SmartCollector, build
from collectors.disks.smart.config import SmartConfig
from collectors.plugin import CollectorPlugin

PLUGIN = CollectorPlugin("smart", SmartCollector, build, SmartConfig, domain="disks",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE)
