"""Linux bonds from /proc/net/bonding: slave states and link failures."""

from pathlib import Path

from collectors.findings import items
from collectors.network.bonding import findings
from collectors.network.bonding.collector import BondingCollector, build
from collectors.network.bonding.config import BondingConfig
from collectors.network.bonding.demo import write_scene
from collectors.plugin import CollectorPlugin, Section

SECTION = Section("network", "Network", Path(__file__).parent,
                  lambda state: {"bonds": items(state, "bonds")})
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Reads /proc/net/bonding and /sys/class/net: no privileges."

PLUGIN = CollectorPlugin("bonding", BondingCollector, build, BondingConfig, domain="network",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS,
                         section=SECTION, scene=write_scene,
                         nouns={"bond": "bond", "bond_slave": "bond link"})
