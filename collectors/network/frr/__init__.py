"""BGP sessions from FRR's vtysh JSON, per VRF and address family."""

from collectors.network.frr import findings
from collectors.network.frr.collector import FrrCollector, build
from collectors.network.frr.config import FrrConfig
from collectors.plugin import CollectorPlugin

PLUGIN = CollectorPlugin("frr", FrrCollector, build, FrrConfig, domain="network",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS)
