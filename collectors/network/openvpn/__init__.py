"""OpenVPN instances: status file or management interface, and their tun's drops."""

from collectors.network.openvpn import findings
from collectors.network.openvpn.collector import OpenvpnCollector, build
from collectors.network.openvpn.config import OpenvpnConfig
from collectors.plugin import CollectorPlugin

PLUGIN = CollectorPlugin("openvpn", OpenvpnCollector, build, OpenvpnConfig, domain="network",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS)
