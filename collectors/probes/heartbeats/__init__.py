"""Heartbeats: a dead man's switch for cron jobs (the job calls a URL; silence is the alarm)."""

from pathlib import Path

from collectors.plugin import CollectorPlugin, Pages, Section, Setup
from collectors.probes.heartbeats import findings
from collectors.probes.heartbeats.collector import HeartbeatsCollector, build
from collectors.probes.heartbeats.config import HeartbeatsConfig
from collectors.probes.heartbeats.demo import write_scene
from collectors.probes.heartbeats.state import HeartbeatsState

SECTION: Section[HeartbeatsState] = Section("probes", "Probes", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = ("Nothing on this host: jobs call rackpulse's /ping/<token> URL (open without a login; each "
               "token is a secret, stored hashed).")

PLUGIN = CollectorPlugin(
    "heartbeats", HeartbeatsCollector, build, HeartbeatsConfig, HeartbeatsState,
    domain="probes", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, monitors=findings.monitors),
    setup=Setup(scene=write_scene))
