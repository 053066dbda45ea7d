"""Metering smart plugs over MQTT (Shelly Gen2, Tasmota, or any JSON): each plug's watts now and
its energy, counted across the plug's reboots."""

from pathlib import Path

from collectors.home.smartplugs import findings
from collectors.home.smartplugs.collector import SmartplugsCollector, build
from collectors.home.smartplugs.config import SmartplugsConfig
from collectors.home.smartplugs.state import SmartplugsState
from collectors.plugin import CollectorPlugin, Pages, Section

SECTION: Section[SmartplugsState] = Section("power", "Power", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = ("A login to the MQTT broker the plugs publish to, allowed to subscribe to their topics; "
               "nothing on this host.")

PLUGIN = CollectorPlugin(
    "smartplugs", SmartplugsCollector, build, SmartplugsConfig, SmartplugsState,
    domain="home", rank=2, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION))
