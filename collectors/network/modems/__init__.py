"""3G/LTE modems from ModemManager (state, registration, operator, signal), tied to bond slaves."""

from pathlib import Path

from collectors.network.modems import findings
from collectors.network.modems.collector import ModemsCollector, build
from collectors.network.modems.config import ModemsConfig
from collectors.network.modems.demo import write_scene
from collectors.network.modems.state import ModemsState
from collectors.plugin import CollectorPlugin, Legacy, Needs, Pages, Section, Setup

SECTION: Section[ModemsState] = Section("network", "Network", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = ("`mmcli` reads ModemManager over D-Bus: allowed for root and, by polkit, for local active users; "
               "`--signal-setup` (only with signal_setup set) needs the modem-control permission.")

PLUGIN = CollectorPlugin(
    "modems", ModemsCollector, build, ModemsConfig, ModemsState,
    domain="network", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, nouns={"modem": "modem"}),
    needs=Needs(uses=("bonding",)),
    setup=Setup(scene=write_scene),
    legacy=Legacy(api={"modems": lambda s: s.modems}))
