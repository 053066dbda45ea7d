"""Pure parsing of ``smartctl --json`` output and the disk health verdict.

Format source: smartmontools' JSON output (``smartctl --json``, json_format_version 1)
and the exit status bitmask in smartctl(8), section RETURN VALUES.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from collectors import finite
from collectors.base import ParseError
from collectors.disks.smart.rawvalues import decode, vendor_of
from collectors.disks.smart.selftests import parse_selftests
from collectors.disks.smart.state import AtaRow, Reading, SelfTests, SmartTable
from collectors.disks.smart.words import CRITICAL_WARNING_WORDS, attribute_words

# smartctl(8) RETURN VALUES
EXIT_BITS = {
    0: "command line did not parse",
    1: "device open failed or device in low-power mode",
    2: "a SMART or ATA command to the disk failed",
    3: "SMART status check returned DISK FAILING",
    4: "prefail attributes at or below threshold",
    5: "attributes were at or below threshold in the past",
    6: "device error log contains errors",
    7: "self-test log contains errors",
}

# ATA attributes whose raw counts predict failure (Backblaze's and smartmontools' list).
ATA_PREDICTIVE = {
    5: "Reallocated_Sector_Ct",
    187: "Reported_Uncorrect",
    188: "Command_Timeout",
    197: "Current_Pending_Sector",
    198: "Offline_Uncorrectable",
    199: "UDMA_CRC_Error_Count",
}
CRC_KEY = "199"  # UDMA_CRC_Error_Count: a cable or backplane symptom, judged on increases only
# What each counter counts, as a person says it (one, several).
MEANING = {"5": ("reallocated sector", "reallocated sectors"),
           "187": ("reported uncorrectable error", "reported uncorrectable errors"),
           "188": ("command timeout", "command timeouts"),
           "197": ("sector pending reallocation", "sectors pending reallocation"),
           "198": ("offline uncorrectable sector", "offline uncorrectable sectors"),
           "199": ("CRC error", "CRC errors"),
           "media_errors": ("NVMe media error", "NVMe media errors"),
           "grown_defects": ("grown defect", "grown defects")}
# NVMe health log fields that matter; percentage_used and available_spare are judged by value.
NVME_COUNTERS = ("media_errors",)
OK, WARNING, FAILING = 0, 1, 2
HEALTH_NAMES = {OK: "ok", WARNING: "warning", FAILING: "failing"}


@dataclass(frozen=True, slots=True)
class SmartDisk:
    device: str  # "/dev/sda"
    dev_type: str | None  # smartctl's -d type: "sat", "nvme", "scsi", "sat+megaraid,0", "usbjmicron"
    protocol: str | None  # "ATA" | "NVMe" | "SCSI"
    model: str | None
    serial: str | None  # None: not reported (USB bridges often hide it)
    wwn: str | None  # "0x5000c500a1b2c3d4"
    firmware: str | None
    capacity_bytes: int | None
    form_factor: str | None
    rotation_rpm: int | None
    smart_passed: bool | None
    temperature: float | None
    power_on_hours: int | None
    exit_status: int
    messages: tuple[str, ...]
    standby: bool = False
    # Failure-predicting counters: "5", "187", ... for ATA; "media_errors", "critical_warning",
    # "available_spare", "available_spare_threshold", "percentage_used" for NVMe; "grown_defects" for SCSI.
    attributes: dict[str, float] = field(default_factory=dict)
    vendor: str = ""  # "seagate", "wdc", ...: how its raw values are packed (rawvalues.py)
    selftests: SelfTests = field(default_factory=SelfTests)
    ata_failing_now: tuple[str, ...] = ()  # attributes with when_failed == "now"
    # Everything else the disk reports, for its page: see smart_table().
    table: SmartTable = field(default_factory=SmartTable)

    @property
    def exit_bits(self) -> tuple[int, ...]:
        return tuple(b for b in range(8) if self.exit_status & (1 << b))


def parse_smartctl_json(data: str | bytes, returncode: int | None = None) -> SmartDisk:
    """Parse one ``smartctl --json`` document. ``returncode`` overrides the JSON's exit_status."""
    try:
        doc = finite.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        head = data[:80] if isinstance(data, str) else data[:80].decode("utf-8", "replace")
        raise ParseError(f"smartctl output is not JSON ({exc}): {head!r}") from None
    # Every smartctl --json document has a "smartctl" object; trimmed captures may keep
    # only "device" and the data, which is still usable.
    if not isinstance(doc, dict) or not (isinstance(doc.get("smartctl"), dict) or isinstance(doc.get("device"), dict)):
        raise ParseError("smartctl JSON has no 'smartctl' object (is this smartctl --json output?)")
    meta = _obj(doc, "smartctl")
    exit_status = _int(meta.get("exit_status")) or 0 if returncode is None else returncode
    raw_messages = meta.get("messages")
    raw_messages = raw_messages if isinstance(raw_messages, list) else []
    messages = tuple(str(m.get("string", "")) for m in raw_messages if isinstance(m, dict))
    dev = _obj(doc, "device")
    device = str(dev.get("name") or _argv_device(meta.get("argv")) or "?")
    standby = any(("STANDBY" in m or "SLEEP" in m) and "mode" in m for m in messages)
    if exit_status & 0b11 and not standby and "model_name" not in doc and "serial_number" not in doc:
        detail = "; ".join(messages) or EXIT_BITS[1 if exit_status & 2 else 0]
        raise ParseError(f"smartctl {device}: {detail} (exit status {exit_status})")
    vendor = vendor_of(_str(doc.get("model_name")), _str(doc.get("model_family")))
    table = smart_table(doc, vendor)
    nvme = _obj(doc, "nvme_smart_health_information_log")
    attributes = _judged_attributes(doc, table, nvme)
    temperature = _num(_obj(doc, "temperature").get("current")) or None  # 0: not reported (RAID volumes)
    if temperature is None:
        temperature = _num(nvme.get("temperature"))
    hours = _num(_obj(doc, "power_on_time").get("hours"))
    if hours is None:
        hours = _num(nvme.get("power_on_hours"))
    passed = _obj(doc, "smart_status").get("passed")
    model = _str(doc.get("model_name")) or " ".join(
        s for k in ("scsi_vendor", "scsi_product") if (s := _str(doc.get(k)))
    ) or None
    return SmartDisk(
        device=device,
        dev_type=_str(dev.get("type")),
        protocol=_str(dev.get("protocol")),
        model=model,
        serial=_str(doc.get("serial_number")),
        wwn=_wwn(doc.get("wwn")),
        firmware=_str(doc.get("firmware_version")) or _str(doc.get("revision")) or _str(doc.get("scsi_revision")),
        capacity_bytes=_int(_obj(doc, "user_capacity").get("bytes")),
        form_factor=_str(_obj(doc, "form_factor").get("name")),
        rotation_rpm=_int(doc.get("rotation_rate")),
        smart_passed=passed if isinstance(passed, bool) else None,
        temperature=temperature,
        power_on_hours=int(hours) if hours is not None else None,
        exit_status=exit_status,
        messages=messages,
        standby=standby,
        attributes=attributes,
        vendor=vendor,
        selftests=parse_selftests(doc),
        ata_failing_now=tuple(f"{row.id} {row.name}".strip() for row in table.ata if row.when_failed == "now"),
        table=table,
    )



# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _judged_attributes(doc: Mapping[str, Any], table: SmartTable, nvme: Mapping[str, Any]) -> dict[str, float]:
    """The values the health judgement reads: ATA's predictive attributes (decoded: a Seagate's
    packed 188 "0 0 0" is no timeout), NVMe's health log, SCSI's grown defects."""
    attributes: dict[str, float] = {}
    for row in table.ata:
        if row.id in ATA_PREDICTIVE and row.decoded is not None:
            attributes[str(row.id)] = row.decoded
    for key in ("critical_warning", "media_errors", "available_spare", "available_spare_threshold",
                "percentage_used"):
        if _num(nvme.get(key)) is not None:
            attributes[key] = float(nvme[key])
    if _num(doc.get("scsi_grown_defect_list")) is not None:
        attributes["grown_defects"] = float(doc["scsi_grown_defect_list"])
    return attributes

# Any: a tool's JSON output, read key by key (each value checked where it is used)
def smart_table(doc: dict[str, Any], vendor: str = "") -> SmartTable:
    """The whole SMART report in rows for a person: "ata" (id, name, normalized value, worst,
    threshold, raw and its decoded value, when it failed, pre-failure or not), "nvme" (the health log, name and
    value) and "scsi" (grown defects and the error counter log). Empty lists where the disk
    speaks another protocol; fields smartctl left out are None."""
    ata: list[AtaRow] = []
    rows = _obj(doc, "ata_smart_attributes").get("table")
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or _int(row.get("id")) is None:
            continue
        raw = _obj(row, "raw")
        raw_value, raw_string = _num(raw.get("value")), _str(raw.get("string"))
        decoded = decode(int(row["id"]), raw_value, raw_string, vendor)
        ata.append(AtaRow(id=int(row["id"]), name=_str(row.get("name")) or "", value=_int(row.get("value")),
                          worst=_int(row.get("worst")), thresh=_int(row.get("thresh")), raw=raw_value,
                          raw_string=raw_string, when_failed=_str(row.get("when_failed")) or "",
                          prefailure=_obj(row, "flags").get("prefailure") is True,
                          decoded=decoded.value if decoded else None, shown=decoded.shown if decoded else None,
                          packed=decoded.how if decoded and decoded.how != "raw48" else None))
    nvme: list[Reading] = []
    for key, value in _obj(doc, "nvme_smart_health_information_log").items():
        if isinstance(value, list):  # temperature_sensors: [36, 41]
            value = ", ".join(str(v) for v in value if _num(v) is not None)
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            nvme.append(Reading(name=str(key), value=value))
    scsi: list[Reading] = []
    if _num(doc.get("scsi_grown_defect_list")) is not None:
        scsi.append(Reading(name="grown defect list", value=doc["scsi_grown_defect_list"]))
    for op, counters in _obj(doc, "scsi_error_counter_log").items():
        for key, value in (counters.items() if isinstance(counters, dict) else ()):
            if _num(value) is not None or (isinstance(value, str) and value.replace(".", "", 1).isdigit()):
                scsi.append(Reading(name=f"{op}: {str(key).replace('_', ' ')}", value=value))  # "386.568" GB
    for key, value in _obj(doc, "scsi_start_stop_cycle_counter").items():
        if _num(value) is not None:
            scsi.append(Reading(name=str(key).replace("_", " "), value=value))
    return SmartTable(ata=ata, nvme=nvme, scsi=scsi)


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _obj(doc: Mapping[str, Any], key: str) -> dict[str, Any]:
    """doc[key] if it is a JSON object, else {} (a truncated or odd document must not crash us)."""
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _str(v: Any) -> str | None:
    return v.strip() or None if isinstance(v, str) else None


def parse_smartctl_scan(data: str | bytes) -> list[tuple[str, str]]:
    """``smartctl --scan --json`` -> [(name, type)], e.g. [("/dev/sda", "sat")]."""
    try:
        doc = finite.loads(data)
    except ValueError as exc:
        raise ParseError(f"smartctl --scan output is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ParseError(f"smartctl --scan JSON is not an object: {str(doc)[:120]!r}")
    if "devices" not in doc:
        # smartctl fills jglb["devices"][i] per device found (smartctl.cpp, scan_devices): with
        # none found (a VM, a container) the key is not there at all. That is "no disks", unless
        # smartctl said why it could not look.
        said = _obj(doc, "smartctl").get("messages")
        errors = [m.get("string") for m in said if isinstance(m, dict) and m.get("severity") == "error"] \
            if isinstance(said, list) else []
        if errors:
            raise ParseError(f"smartctl --scan: {errors[0]}")
        return []
    devices = doc["devices"]
    if not isinstance(devices, list):
        raise ParseError(f"smartctl --scan JSON: 'devices' is not a list: {str(devices)[:120]!r}")
    return [(str(d["name"]), str(d.get("type", "auto"))) for d in devices if isinstance(d, dict) and d.get("name")]



def judge_health(
    disk: SmartDisk,
    accepted: Mapping[str, float] | None = None,
    previous: Mapping[str, float] | None = None,
    temp_warning: float = 50.0,
    where: str | None = None,
) -> tuple[int, list[str]]:
    """Return (OK | WARNING | FAILING, reasons).

    1. FAILING: the drive says so (SMART status failed, exit bit 3 or 4, an attribute
       failing now, NVMe spare under threshold or a critical warning other than temperature).
    2. WARNING: a failure-predicting counter above the value the user accepted (0 unless
       set), any such counter that rose since the previous reading, NVMe wear at 100 %,
       errors in the self-test log, a hot disk.

    UDMA CRC errors (ATA 199) are the exception: they count transfers the cable or backplane
    garbled, not a failing disk, and never reset. A count that stands still is history; only
    an increase is a warning, worded as what to check (``where``: the bay, if known).
    """
    accepted = accepted or {}
    previous = previous or {}
    reasons_fail: list[str] = []
    reasons_warn: list[str] = []
    bits = set(disk.exit_bits)
    if disk.smart_passed is False or 3 in bits:
        reasons_fail.append("SMART overall health: FAILED")
    if 4 in bits or disk.ata_failing_now:
        reasons_fail.append("at or below its failure threshold now: "
                            + (", ".join(attribute_words(a) for a in disk.ata_failing_now) or "an attribute"))
    attrs = disk.attributes
    cw = int(attrs.get("critical_warning", 0))
    if cw & ~0x02:
        said = ", ".join(w for bit, w in CRITICAL_WARNING_WORDS.items() if cw & bit) or "set"
        reasons_fail.append(f"NVMe critical warning: {said} (0x{cw:02x})")
    elif cw & 0x02:
        reasons_warn.append("NVMe critical_warning: temperature")
    if "available_spare" in attrs and "available_spare_threshold" in attrs:
        if attrs["available_spare"] < attrs["available_spare_threshold"]:
            reasons_fail.append(
                f"NVMe available spare {attrs['available_spare']:g}% below threshold "
                f"{attrs['available_spare_threshold']:g}%"
            )
    if attrs.get("percentage_used", 0) >= 100:
        reasons_warn.append(f"NVMe wear {attrs['percentage_used']:g}% used")
    reasons_warn += _counters_risen(disk, accepted, previous, where)
    if 7 in bits:
        reasons_warn.append("self-test log contains errors")
    if disk.temperature is not None and disk.temperature >= temp_warning:
        reasons_warn.append(f"temperature {disk.temperature:g} °C >= {temp_warning:g} °C")
    if reasons_fail:
        return FAILING, reasons_fail + reasons_warn
    if reasons_warn:
        return WARNING, reasons_warn
    return OK, []


def _counters_risen(disk: SmartDisk, accepted: Mapping[str, float], previous: Mapping[str, float],
                    where: str | None) -> list[str]:
    """A warning per failure-predicting counter above what the user accepted or risen since the
    previous reading; the CRC count only when it rose, worded as the cable or backplane to check."""
    out = []
    attrs = disk.attributes
    for key in counter_keys(attrs):
        value = attrs[key]
        if key == CRC_KEY:
            if key in previous and value > previous[key]:
                out.append(f"{counted(key, value)}, up from {previous[key]:g}: check the "
                           f"cable/backplane of {where or disk.device}")
            continue
        rose = key in previous and value > previous[key]
        if value > accepted.get(key, 0) or rose:
            # One reason per counter: how many, how many before, what the user accepted, its id.
            said = [f"up from {previous[key]:g}"] if rose else []
            said += [f"{accepted[key]:g} accepted"] if key in accepted else []
            out.append(f"{counted(key, value)}{', ' + ', '.join(said) if said else ''} ({attribute_label(key)})")
    return out


def counter_keys(attrs: Mapping[str, float]) -> list[str]:
    """Attributes that are error counters (their increase matters), in a stable order."""
    keys = [str(k) for k in ATA_PREDICTIVE if str(k) in attrs]
    keys += [k for k in (*NVME_COUNTERS, "grown_defects") if k in attrs]
    return keys


def attribute_label(key: str) -> str:
    """Where the count comes from, for experts: "SMART 5", "NVMe health log", "SCSI"."""
    if key.isdigit():
        return f"SMART {key}"
    return "NVMe health log" if key in NVME_COUNTERS else "SCSI" if key == "grown_defects" else key


def counted(key: str, value: float) -> str:
    """ "8 reallocated sectors", "1 command timeout"."""
    one, many = MEANING.get(key, (key.replace("_", " "), key.replace("_", " ")))
    return f"{value:g} {one if value == 1 else many}"


def worth_a_notification(reason: str) -> bool:
    """A counter's reason (it starts with its count): the warnings that are sent, not only shown."""
    return reason[:1].isdigit()


def _argv_device(argv: Any) -> str | None:
    if isinstance(argv, list):
        for a in reversed(argv):
            if isinstance(a, str) and a.startswith("/dev/"):
                return a
    return None


def _wwn(w: Any) -> str | None:
    # {"naa": 5, "oui": 5358, "id": 1234567890} -> NAA(4 bits) OUI(24 bits) ID(36 bits)
    if not isinstance(w, dict):
        return None
    try:
        value = (int(w["naa"]) << 60) | (int(w["oui"]) << 36) | int(w["id"])
    except (KeyError, TypeError, ValueError):
        return None
    return f"0x{value:016x}"


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None


def what_it_said(stdout: bytes, stderr: bytes) -> str:
    """Why a run failed, in smartctl's words: its JSON messages (where --json puts even "Permission
    denied"), else the start of its standard error."""
    try:
        meta = finite.loads(stdout).get("smartctl", {})
        words = [str(m.get("string", "")) for m in meta.get("messages", []) if isinstance(m, dict)]
    except (ValueError, AttributeError, TypeError):
        words = []
    return "; ".join(w for w in words if w)[:300] or stderr.decode("utf-8", "replace").strip()[:200] or "no message"
