"""WireGuard: interfaces and peers from `wg show all dump` (handshake age, bytes, endpoint)."""

from pathlib import Path

from collectors.network.wireguard import findings
from collectors.network.wireguard.collector import WireguardCollector, build
from collectors.network.wireguard.config import WireguardConfig
from collectors.network.wireguard.demo import write_scene
from collectors.network.wireguard.state import WireguardState
from collectors.plugin import CollectorPlugin, Needs, Pages, Section, Setup
from collectors.privilege import Privilege

SECTION: Section[WireguardState] = Section("network", "Network", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PRIVILEGES = (Privilege("wg", "`wg show all dump` asks the kernel over netlink, which needs CAP_NET_ADMIN; "
                                 "this form prints no private key", args=("show all dump",)),)
PERMISSIONS = ("`wg show all dump` needs CAP_NET_ADMIN: run it through `sudo -n wg` with a sudoers line for that "
               "command only (wg = [\"sudo\", \"-n\", \"wg\"]); it prints no private key in this form.")

PLUGIN = CollectorPlugin(
    "wireguard", WireguardCollector, build, WireguardConfig, WireguardState,
    domain="network", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, nouns={"wireguard_peer": "WireGuard peer"}),
    needs=Needs(privileges=PRIVILEGES),
    setup=Setup(scene=write_scene))
