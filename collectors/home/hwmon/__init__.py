"""hwmon sensors: the user's named rails and fans, and every other reading."""

from collectors.home.hwmon import findings
from collectors.home.hwmon.collector import HwmonCollector, build
from collectors.home.hwmon.config import HwmonConfig
from collectors.plugin import CollectorPlugin

PLUGIN = CollectorPlugin("hwmon", HwmonCollector, build, HwmonConfig, domain="home",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, charts=findings.CHARTS)
