"""BGP sessions from FRR's vtysh JSON, per VRF and address family."""

from pathlib import Path

from collectors.findings import items
from collectors.network.frr import findings
from collectors.network.frr.collector import FrrCollector, build
from collectors.network.frr.config import FrrConfig
from collectors.plugin import CollectorPlugin, Section

SECTION = Section("network", "Network", Path(__file__).parent,
                  lambda state: {"peers": [{**p, "health": findings.peer_level(p)} for p in items(state, "peers")]})
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "`vtysh` needs membership of the frrvty group (or root)."

PLUGIN = CollectorPlugin("frr", FrrCollector, build, FrrConfig, domain="network",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS,
                         section=SECTION,
                         nouns={"bgp_peer": "BGP peer"})
