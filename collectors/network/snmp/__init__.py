"""Switch ports over SNMP (IF-MIB): status, counters, flaps."""

from collectors.network.snmp import findings
from collectors.network.snmp.collector import SnmpCollector, build
from collectors.network.snmp.config import SnmpConfig
from collectors.plugin import CollectorPlugin

PLUGIN = CollectorPlugin("snmp", SnmpCollector, build, SnmpConfig, domain="network",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS)
