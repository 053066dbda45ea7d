"""Updates: pending and security updates (apt, dnf), the package lists' age, and a reboot owed."""

from pathlib import Path

from collectors.host.updates import findings
from collectors.host.updates.collector import UpdatesCollector, build
from collectors.host.updates.config import UpdatesConfig
from collectors.host.updates.demo import write_scene
from collectors.host.updates.state import UpdatesState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup

SECTION: Section[UpdatesState] = Section("host", "Host", Path(__file__).parent, findings.view)
PERMISSIONS = ("Nothing beyond an ordinary user: `apt-get -s` simulates without the lock and reads the lists "
               "apt already has; `dnf check-update --refresh=false` reads dnf's cache.")

PLUGIN = CollectorPlugin(
    "updates", UpdatesCollector, build, UpdatesConfig, UpdatesState,
    domain="host", rank=3, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION), setup=Setup(scene=write_scene))
