"""Throughput: scheduled iperf3 tests against servers you run, against a baseline."""

from pathlib import Path

from collectors.plugin import CollectorPlugin, Pages, Section
from collectors.probes.throughput import findings
from collectors.probes.throughput.collector import ThroughputCollector, build
from collectors.probes.throughput.config import ThroughputConfig
from collectors.probes.throughput.state import ThroughputState

SECTION: Section[ThroughputState] = Section("probes", "Probes", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Only network access to the iperf3 servers you list; nothing on this host."

PLUGIN = CollectorPlugin(
    "throughput", ThroughputCollector, build, ThroughputConfig, ThroughputState,
    domain="probes", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION))
