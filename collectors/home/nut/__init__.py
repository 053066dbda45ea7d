"""UPSes through NUT's upsd, or UPS-MIB for one with a network card."""

from pathlib import Path

from collectors.home.nut import findings
from collectors.home.nut.collector import NutCollector, build
from collectors.home.nut.config import NutConfig
from collectors.home.nut.starter import starter
from collectors.home.nut.state import NutState
from collectors.plugin import CollectorPlugin, Legacy, Pages, Section, Setup

SECTION: Section[NutState] = Section("power", "Power", Path(__file__).parent)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Network access to upsd (TCP 3493); a user only if upsd asks for a login; or SNMP to the UPS's card."

PLUGIN = CollectorPlugin(
    "nut", NutCollector, build, NutConfig, NutState,
    domain="home", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, nouns={"ups": "UPS"}, words={"status": findings.FLAG_WORDS}),
    setup=Setup(starter=starter),
    legacy=Legacy(api={"ups": lambda s: s.ups}))
