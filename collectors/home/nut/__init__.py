"""UPSes through NUT's upsd, or UPS-MIB for one with a network card."""

from pathlib import Path

from collectors.findings import items
from collectors.home.nut import findings
from collectors.home.nut.collector import NutCollector, build
from collectors.home.nut.config import NutConfig
from collectors.plugin import CollectorPlugin, Section

SECTION = Section("power", "Power", Path(__file__).parent,
                  lambda state: {"ups": items(state, "ups")})
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Network access to upsd (TCP 3493); a user only if upsd asks for a login; or SNMP to the UPS's card."

PLUGIN = CollectorPlugin("nut", NutCollector, build, NutConfig, domain="home",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS,
                         section=SECTION,
                         nouns={"ups": "UPS"})
