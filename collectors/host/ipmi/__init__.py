"""IPMI: a server's own health as its BMC reports it: sensors with their thresholds, the system
event log (a failed PSU, an uncorrectable ECC error, an opened chassis), DCMI power."""

import re
import tempfile
from pathlib import Path

from collectors.host.ipmi import findings
from collectors.host.ipmi.collector import LOCAL_DEVICES, IpmiCollector, build
from collectors.host.ipmi.config import IpmiConfig
from collectors.host.ipmi.demo import write_scene
from collectors.host.ipmi.starter import starter
from collectors.host.ipmi.state import IpmiState
from collectors.plugin import CollectorPlugin, Needs, Pages, Section, Setup
from collectors.privilege import Privilege

SECTION: Section[IpmiState] = Section("host", "Host", Path(__file__).parent, findings.view)
# The SDR cache root writes into: the collector's own work directory's (collector._work_dir), never
# a folder the caller names (the pattern took any absolute path).
_DEFAULT_WORK = re.escape(tempfile.gettempdir()) + "/rackpulse-ipmi-[0-9]+"
_CACHE = f"--quiet-cache --sdr-cache-directory={_DEFAULT_WORK}/sdr-cache"
_SENSORS = "--comma-separated-output --output-sensor-state --output-sensor-thresholds"
_SEL = "--comma-separated-output --output-event-state -v --interpret-oem-data (--tail=[0-9]+|--display-range=[0-9]+-[0-9]+)"


def _cache_of(c: IpmiConfig) -> str:
    work = str(c.work_dir) if c.work_dir is not None else ""
    if not work or any(ch.isspace() for ch in work):  # a space would end sudo's argument
        return _CACHE
    return f"--quiet-cache --sdr-cache-directory={re.escape(work)}/sdr-cache"


def _local(c: IpmiConfig) -> bool:
    """Whether the local BMC is read: "on", or "auto" on a host with the device (where init runs)."""
    return c.local == "on" or (c.local == "auto" and any(Path("/", d).exists() for d in LOCAL_DEVICES))


PRIVILEGES = (
    Privilege("ipmi_sensors", "reads this server's own BMC's sensors through /dev/ipmi0 (root, or read-write "
              "access to the device)", args=(f"{_CACHE} {_SENSORS}",), needed=_local,
              args_for=lambda c: (f"{_cache_of(c)} {_SENSORS}",)),
    Privilege("ipmi_sel", "reads the local BMC's system event log: its size, then the entries after the last one read",
              args=(f"{_CACHE} --info", f"{_CACHE} {_SEL}"), needed=_local,
              args_for=lambda c: (f"{_cache_of(c)} --info", f"{_cache_of(c)} {_SEL}")),
    Privilege("ipmi_dcmi", "reads the local BMC's DCMI power reading", args=("--get-system-power-statistics",),
              needed=_local),
)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = ("Remote BMCs: an IPMI user with the User privilege (reading sensors and the event log needs no more), "
               "its password in a file only rackpulse can read. This server's own BMC: root or read-write access "
               "to /dev/ipmi0 (`sudo -n ipmi-sensors` ... in the argv options, or a udev rule giving the device "
               "to rackpulse's group).")

PLUGIN = CollectorPlugin(
    "ipmi", IpmiCollector, build, IpmiConfig, IpmiState,
    domain="host", rank=3, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, nouns={"ipmi_sensor": "IPMI sensor"},
                words={"state": {"Nominal": "nominal",
                                                                               "Warning": "warning",
                                                                               "Critical": "critical"}}),
    needs=Needs(privileges=PRIVILEGES),
    setup=Setup(scene=write_scene, starter=starter))
