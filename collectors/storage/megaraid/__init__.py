"""MegaRAID/PERC controllers through storcli/perccli JSON: virtual drives, physical drives by
EID:slot with serial and bay, BBU/CacheVault."""

from pathlib import Path

from collectors.plugin import CollectorPlugin, Needs, Pages, Section, Setup
from collectors.privilege import Privilege
from collectors.storage.megaraid import findings
from collectors.storage.megaraid.collector import MegaraidCollector, build
from collectors.storage.megaraid.config import MegaraidConfig
from collectors.storage.megaraid.demo import write_scene
from collectors.storage.megaraid.starter import starter
from collectors.storage.megaraid.state import MegaraidState

SECTION: Section[MegaraidState] = Section("disks", "Disks and arrays", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PRIVILEGES = (Privilege("storcli", "storcli/perccli open the controller's ioctl node, which only root may; "
                                 "rackpulse runs only its `show` commands", args=("/call(/eall/sall)? show (all|rebuild) J",)),)
PERMISSIONS = "storcli64/perccli64 need root."

PLUGIN = CollectorPlugin(
    "megaraid", MegaraidCollector, build, MegaraidConfig, MegaraidState,
    domain="storage", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, bays=findings.bay_devices,
                nouns={"megaraid_vd": "RAID virtual drive", "megaraid_pd": "RAID drive"},
                words={"state": findings.STATE_WORDS, "dg": {"-": "none"}},
                field_names={"dg": "drive group", "raid": "RAID level"}),
    needs=Needs(privileges=PRIVILEGES),
    setup=Setup(scene=write_scene, starter=starter))
