"""A Stiebel Eltron heat pump behind an ISG, over Modbus TCP, read only."""

from pathlib import Path

from collectors.home.heatpump import findings
from collectors.home.heatpump.collector import HeatpumpCollector, build
from collectors.home.heatpump.config import HeatpumpConfig
from collectors.plugin import CollectorPlugin, Section

SECTION = Section("heatpump", "Heat pump", Path(__file__).parent,
                  lambda state: {"hp": state or None})
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Network access to the ISG's Modbus TCP port (502); read only, never a write."

PLUGIN = CollectorPlugin("heatpump", HeatpumpCollector, build, HeatpumpConfig, domain="home",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
                         section=SECTION,
                         nouns={"heatpump": "heat pump"})
