"""hwmon sensors: the user's named rails and fans, and every other reading."""

from pathlib import Path

from collectors.home.hwmon import findings
from collectors.home.hwmon.collector import HwmonCollector, build
from collectors.home.hwmon.config import HwmonConfig
from collectors.home.hwmon.demo import write_scene
from collectors.home.hwmon.starter import starter
from collectors.home.hwmon.state import HwmonState
from collectors.plugin import CollectorPlugin, Legacy, Pages, Section, Setup

SECTION: Section[HwmonState] = Section("power", "Power", Path(__file__).parent)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = "Reads /sys/class/hwmon: no privileges."

PLUGIN = CollectorPlugin(
    "hwmon", HwmonCollector, build, HwmonConfig, HwmonState,
    domain="home", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS,
                nouns={"fan": "fan", "rail": "power rail", "sensor": "sensor"}),
    setup=Setup(scene=write_scene, starter=starter),
    legacy=Legacy(api={"power": lambda s: s}))
