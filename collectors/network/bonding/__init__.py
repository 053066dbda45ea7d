"""Linux bonds from /proc/net/bonding: slave states and link failures."""

from collectors.network.bonding import findings
from collectors.network.bonding.collector import BondingCollector, build
from collectors.network.bonding.config import BondingConfig
from collectors.plugin import CollectorPlugin

PLUGIN = CollectorPlugin("bonding", BondingCollector, build, BondingConfig, domain="network",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS)
