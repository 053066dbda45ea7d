"""Probes: ping (fping), HTTP and TCP checks and TLS certificate expiry, from this host."""

from pathlib import Path

from collectors.plugin import CollectorPlugin, Pages, Section
from collectors.probes.checks import findings
from collectors.probes.checks.collector import ProbesCollector, build
from collectors.probes.checks.config import ProbesConfig
from collectors.probes.checks.state import ProbesState

SECTION: Section[ProbesState] = Section("probes", "Probes", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "fping needs CAP_NET_RAW (Debian's package sets it) for pings; HTTP and TCP checks need nothing."

PLUGIN = CollectorPlugin(
    "probes", ProbesCollector, build, ProbesConfig, ProbesState,
    domain="probes", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, monitors=findings.monitors))
