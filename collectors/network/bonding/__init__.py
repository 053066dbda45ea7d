"""Linux bonds from /proc/net/bonding: slave states and link failures."""

from pathlib import Path

from collectors.network.bonding import findings
from collectors.network.bonding.collector import BondingCollector, build
from collectors.network.bonding.config import BondingConfig
from collectors.network.bonding.demo import write_scene
from collectors.network.bonding.starter import starter
from collectors.network.bonding.state import BondingState
from collectors.plugin import CollectorPlugin, Legacy, Pages, Section, Setup

SECTION: Section[BondingState] = Section("network", "Network", Path(__file__).parent)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Reads /proc/net/bonding and /sys/class/net: no privileges."

PLUGIN = CollectorPlugin(
    "bonding", BondingCollector, build, BondingConfig, BondingState,
    domain="network", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, nouns={"bond": "bond", "bond_slave": "bond link"}),
    setup=Setup(scene=write_scene, starter=starter),
    legacy=Legacy(api={"bonds": lambda s: s.bonds}))
