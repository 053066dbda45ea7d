"""systemd: failed units, watched services and timers (did the nightly backup run?), from systemctl."""

from pathlib import Path

from collectors.host.systemd import findings
from collectors.host.systemd.collector import SystemdCollector, build
from collectors.host.systemd.config import SystemdConfig
from collectors.host.systemd.demo import write_scene
from collectors.host.systemd.state import SystemdState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup

SECTION: Section[SystemdState] = Section("host", "Host", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Nothing beyond an ordinary user: `systemctl list-units` and `systemctl show` read systemd over D-Bus."

PLUGIN = CollectorPlugin(
    "systemd", SystemdCollector, build, SystemdConfig, SystemdState,
    domain="host", rank=2, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,  # after the host and its containers
    pages=Pages(section=SECTION, monitors=findings.monitors, nouns={"systemd_unit": "systemd unit"}),
    setup=Setup(scene=write_scene))
