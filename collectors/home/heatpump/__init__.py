"""A Stiebel Eltron heat pump behind an ISG, over Modbus TCP, read only."""

from pathlib import Path

from collectors.home.heatpump import findings
from collectors.home.heatpump.collector import HeatpumpCollector, build
from collectors.home.heatpump.config import HeatpumpConfig
from collectors.home.heatpump.state import HeatpumpState
from collectors.plugin import CollectorPlugin, Legacy, Pages, Section

SECTION: Section[HeatpumpState] = Section("heatpump", "Heat pump", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Network access to the ISG's Modbus TCP port (502); read only, never a write."

PLUGIN = CollectorPlugin(
    "heatpump", HeatpumpCollector, build, HeatpumpConfig, HeatpumpState,
    domain="home", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, nouns={"heatpump": "heat pump"}),
    legacy=Legacy(api={"heatpump": lambda s: s if s.controller is not None else None}))
