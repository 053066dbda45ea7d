"""md RAID arrays: /proc/mdstat and `mdadm --detail`, each member with its disk and bay."""

from pathlib import Path

from collectors.disks.mdraid import findings
from collectors.disks.mdraid.collector import MdraidCollector, build
from collectors.disks.mdraid.config import MdraidConfig
from collectors.disks.mdraid.starter import starter
from collectors.disks.mdraid.state import MdraidState
from collectors.plugin import CollectorPlugin, Legacy, Needs, Pages, Section, Setup
from collectors.privilege import Privilege

SECTION: Section[MdraidState] = Section("disks", "Disks and arrays", Path(__file__).parent, findings.view, summary="summary.html")
# What it needs on the host (its README says it: `make docs`).
PRIVILEGES = (Privilege("mdadm", "`mdadm --detail` per array (UUID, events, each slot's state) opens the md "
                                 "device, which only root may", args=(r"--detail /dev/md[_a-z0-9]+",),
                         needed=lambda c: c.detail),)
PERMISSIONS = "Reads /proc/mdstat and /sys: no privileges; `mdadm --detail` needs root (or `sudo -n mdadm` in its argv)."

PLUGIN = CollectorPlugin(
    "mdraid", MdraidCollector, build, MdraidConfig, MdraidState,
    domain="disks", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS, bays=findings.bay_devices,
                nouns={"md_array": "array", "md_member": "array member"},
                words={"sync_action": findings.SYNC_WORDS, "array_state": findings.ARRAY_STATE_WORDS},
                field_names={"level": "RAID level", "uuid": "UUID", "sync_action": "sync", "array_state": "write state"}),
    needs=Needs(privileges=PRIVILEGES),
    setup=Setup(starter=starter),
    legacy=Legacy(api={"arrays": lambda s: s.arrays}))
