"""Disks through `smartctl --json`: health judged in words, serials, bays."""

from pathlib import Path

from collectors.disks.smart import findings
from collectors.disks.smart.collector import SmartCollector, build
from collectors.disks.smart.config import SmartConfig
from collectors.disks.smart.starter import starter
from collectors.disks.smart.state import SmartState
from collectors.plugin import CollectorPlugin, Detail, Legacy, Needs, Pages, Section, Setup
from collectors.privilege import DEVICE, SMARTCTL_TYPES, Privilege

SECTION: Section[SmartState] = Section("disks", "Disks and arrays", Path(__file__).parent, findings.view)
# Each disk's page, /disks/<serial>: its facts, its counters against failure statistics, its history.
DETAIL = Detail("disks", "disk", "disk.html", findings.find_disk, findings.disk_page)
# What it needs on the host (its README says it: `make docs`).
TYPE = f"( -d {SMARTCTL_TYPES})?"  # read-only types alone: `-d jmb39x,0,force` writes LBA 33
PRIVILEGES = (
    Privilege("smartctl", "finds the disks (`--scan`) and reads each one's SMART data: ATA/SCSI pass-through "
              "needs CAP_SYS_RAWIO, NVMe admin commands CAP_SYS_ADMIN, opening the device root",
              args=("--scan --json", f"--json --all( --nocheck=(never|sleep|standby|idle))?{TYPE} {DEVICE}")),
    Privilege("smartctl", "starts a self-test (`-t short|long`): the schedule of [collectors.smart.selftest], "
              "`rackpulse smart-test` or a disk page's button; delete this entry to allow none",
              args=(f"-t (short|long)( --nocheck=standby)?{TYPE} {DEVICE}",)),
)
PERMISSIONS = "smartctl needs root, or CAP_SYS_RAWIO and read access to the disk devices (`sudo -n smartctl` in its argv)."

PLUGIN = CollectorPlugin(
    "smart", SmartCollector, build, SmartConfig, SmartState,
    domain="disks", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, detail=DETAIL, bays=findings.bay_devices, nouns={"disk": "disk", "bay": "bay"}),
    needs=Needs(privileges=PRIVILEGES, uses=("mdraid", "zfs", "megaraid")),
    setup=Setup(starter=starter),
    legacy=Legacy(api={"disks": findings.disks}, moved={"temperature_warning": "alerts.disk_hot_celsius"}))
