"""OpenVPN instances: status file or management interface, and their tun's drops."""

from pathlib import Path

from collectors.network.openvpn import findings
from collectors.network.openvpn.collector import OpenvpnCollector, build
from collectors.network.openvpn.config import OpenvpnConfig
from collectors.network.openvpn.demo import write_scene
from collectors.network.openvpn.starter import starter
from collectors.network.openvpn.state import OpenvpnState
from collectors.plugin import CollectorPlugin, Legacy, Pages, Section, Setup

SECTION: Section[OpenvpnState] = Section("network", "Network", Path(__file__).parent)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Read access to the status file, or the management interface's address (and its password file)."

PLUGIN = CollectorPlugin(
    "openvpn", OpenvpnCollector, build, OpenvpnConfig, OpenvpnState,
    domain="network", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, nouns={"vpn_instance": "VPN"}),
    setup=Setup(scene=write_scene, starter=starter),
    legacy=Legacy(api={"vpn_instances": lambda s: s.instances}))
