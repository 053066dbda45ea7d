"""BGP sessions (with their prefixes), BFD sessions and EVPN VNIs from FRR's vtysh JSON."""

from pathlib import Path

from collectors.network.frr import findings
from collectors.network.frr.collector import FrrCollector, build
from collectors.network.frr.config import FrrConfig
from collectors.network.frr.starter import starter
from collectors.network.frr.state import FrrState
from collectors.plugin import CollectorPlugin, Legacy, Needs, Pages, Section, Setup
from collectors.privilege import Privilege

SECTION: Section[FrrState] = Section("network", "Network", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PRIVILEGES = (Privilege("vtysh", "vtysh talks to FRR's daemons over their sockets in /run/frr, open to the "
                                 "frrvty group", group="frrvty"),)
PERMISSIONS = "`vtysh` needs membership of the frrvty group (or root)."

PLUGIN = CollectorPlugin(
    "frr", FrrCollector, build, FrrConfig, FrrState,
    domain="network", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS,
                nouns={"bgp_peer": "BGP peer", "bfd_peer": "BFD session", "evpn_vni": "EVPN VNI"},
                words={"state": findings.STATE_WORDS, "afi": findings.AFI_WORDS, "key": findings.AFI_WORDS},
                field_names={"state": "session", "remote_as": "peer AS"}),
    needs=Needs(privileges=PRIVILEGES),
    setup=Setup(starter=starter),
    legacy=Legacy(api={"bgp_peers": lambda s: s.peers, "bfd_peers": lambda s: s.bfd, "evpn_vnis": lambda s: s.evpn}))
