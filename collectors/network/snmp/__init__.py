"""Switch ports over SNMP (IF-MIB): status, counters, flaps."""

from pathlib import Path

from collectors.network.snmp import findings
from collectors.network.snmp.collector import SnmpCollector, build
from collectors.network.snmp.config import SnmpConfig
from collectors.network.snmp.state import SnmpState
from collectors.plugin import CollectorPlugin, Legacy, Pages, Section

SECTION: Section[SnmpState] = Section("network", "Network", Path(__file__).parent)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "An SNMP community or v3 user with read access to IF-MIB on each switch; nothing on this host."

PLUGIN = CollectorPlugin(
    "snmp", SnmpCollector, build, SnmpConfig, SnmpState,
    domain="network", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, nouns={"switch_port": "switch port"},
                words={"oper": {"lowerLayerDown": "down (lower layer)", "notPresent": "not present"}},
                field_names={"oper": "link"}),
    legacy=Legacy(api={"switches": lambda s: s.targets}))
