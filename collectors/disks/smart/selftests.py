"""The self-test log and the test running now, from ``smartctl --json --all``, for ATA, NVMe and SCSI.

Keys and codes from smartmontools' sources: ataprint.cpp (``ata_smart_self_test_log``, the
status byte's high nibble), nvmeprint.cpp (``nvme_self_test_log``: Device Self-test log page
06h of the NVMe base specification) and scsiprint.cpp (``scsi_self_test_N``: the SCSI self-test
results log page 10h).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors.disks.smart.state import SelfTestRun, SelfTests

# ATA: the self-test type byte (ATA8-ACS, SMART EXECUTE OFF-LINE IMMEDIATE subcommands).
ATA_TYPES = {0: "offline", 1: "short", 2: "long", 3: "conveyance", 4: "selective",
             129: "short", 130: "long", 131: "conveyance", 132: "selective"}
ATA_FAILED = range(3, 9)  # status >> 4: fatal, unknown, electrical, servo, read failure, handling damage
ATA_RUNNING = 15
NVME_TYPES = {1: "short", 2: "long"}
NVME_FAILED = (5, 6, 7)  # fatal error, unknown failed segment, one or more segments failed
NVME_UNUSED = 15
SCSI_TYPES = {1: "short", 2: "long", 5: "short", 6: "long"}  # background and foreground
SCSI_FAILED = range(3, 8)  # unknown error, a failed segment, failed in the 1st, 2nd, a later segment
SCSI_RUNNING = 15
MAX_LOG = 21  # what an ATA drive keeps; NVMe keeps 20, SCSI 20


def parse_selftests(doc: Mapping[str, Any]) -> SelfTests:
    """Whatever of the three forms the document holds (a disk speaks one protocol)."""
    if isinstance(doc.get("nvme_self_test_log"), dict):
        return _nvme(doc["nvme_self_test_log"])
    if any(f"scsi_self_test_{i}" in doc for i in range(20)):
        return _scsi(doc)
    return _ata(doc)


def _ata(doc: Mapping[str, Any]) -> SelfTests:
    log = _obj(_obj(doc, "ata_smart_self_test_log"), "standard")
    if not log:
        log = _obj(_obj(doc, "ata_smart_self_test_log"), "extended")
    runs = []
    for row in _list(log.get("table")):
        kind = _obj(row, "type")
        status = _obj(row, "status")
        code = _int(status.get("value"))
        nibble = None if code is None else code >> 4
        passed = status.get("passed")
        if not isinstance(passed, bool):
            passed = False if nibble in ATA_FAILED else None
        runs.append(SelfTestRun(type=ATA_TYPES.get(_int(kind.get("value")) or -1, _words(kind, "?")),
                                result=_words(status, "?"), passed=passed, hours=_int(row.get("lifetime_hours")),
                                lba=_int(row.get("lba")) if passed is False else None))
    now = _obj(_obj(doc, "ata_smart_data"), "self_test")
    status = _obj(now, "status")
    code = _int(status.get("value"))
    running = code is not None and code >> 4 == ATA_RUNNING
    remaining = _int(status.get("remaining_percent"))
    minutes = {("long" if k == "extended" else k): v for k, v in _obj(now, "polling_minutes").items()
               if isinstance(v, int) and not isinstance(v, bool)}
    return SelfTests(running="test" if running else None,
                     percent_done=100 - remaining if running and remaining is not None else None,
                     log=runs[:MAX_LOG], minutes=minutes)


def _nvme(log: Mapping[str, Any]) -> SelfTests:
    runs = []
    for row in _list(log.get("table")):
        result = _obj(row, "self_test_result")
        code = _int(result.get("value"))
        if code == NVME_UNUSED:
            continue
        passed = True if code == 0 else False if code in NVME_FAILED else None
        kind = _obj(row, "self_test_code")
        lba = _int(row.get("lba")) if "lba" in row else _int(row.get("failing_lba"))
        runs.append(SelfTestRun(type=NVME_TYPES.get(_int(kind.get("value")) or -1, _words(kind, "?").lower()),
                                result=_words(result, "?"), passed=passed, hours=_int(row.get("power_on_hours")),
                                lba=lba if passed is False else None))
    op = _int(_obj(log, "current_self_test_operation").get("value")) or 0
    return SelfTests(running=NVME_TYPES.get(op, "test") if op else None,
                     percent_done=_int(log.get("current_self_test_completion_percent")) if op else None,
                     log=runs[:MAX_LOG])


def _scsi(doc: Mapping[str, Any]) -> SelfTests:
    runs = []
    running = None
    for i in range(20):
        row = _obj(doc, f"scsi_self_test_{i}")
        if not row:
            continue
        result = _obj(row, "result")
        code = _int(result.get("value"))
        kind = SCSI_TYPES.get(_int(_obj(row, "code").get("value")) or -1, _words(_obj(row, "code"), "?").lower())
        if code == SCSI_RUNNING or row.get("self_test_in_progress") is True:
            running = running or kind
            continue
        passed = True if code == 0 else False if code in SCSI_FAILED else None
        hours = _int(_obj(row, "power_on_time").get("hours"))
        lba = _int(_obj(row, "lba_first_failure").get("value"))
        runs.append(SelfTestRun(type=kind, result=_words(result, "?"), passed=passed, hours=hours,
                                lba=lba if passed is False else None))
    seconds = _int(doc.get("scsi_extended_self_test_seconds"))
    return SelfTests(running=running, log=runs[:MAX_LOG], minutes={"long": -(-seconds // 60)} if seconds else {})


KEPT = 60  # entries kept beyond what the drive keeps (its log wraps at about 20)


def with_history(now: SelfTests, before: SelfTests | None) -> SelfTests:
    """The drive's log with the older entries it has since dropped, kept from the last reading
    (the state is stored, so the history outlives the drive's 21 entries and a restart)."""
    if before is None:
        return now
    seen = {(r.type, r.hours, r.result) for r in now.log}
    older = [r for r in before.log if (r.type, r.hours, r.result) not in seen]
    if now.log and older and older[0].hours is not None and now.log[-1].hours is not None \
            and older[0].hours > now.log[-1].hours:
        # The disk's log does not go back that far, yet the older entry is newer: a different
        # disk or a wrapped 16-bit counter. Keep what the drive says now.
        older = [r for r in older if r.hours is None or r.hours <= now.log[-1].hours]
    return now.model_copy(update={"log": (now.log + older)[:KEPT]})


def latest_finished(tests: SelfTests) -> SelfTestRun | None:
    """The newest test that ran to an end (passed or failed): aborted runs say nothing of the disk."""
    return next((r for r in tests.log if r.passed is not None), None)


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _obj(doc: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _list(v: Any) -> list[dict[str, Any]]:
    return [r for r in v if isinstance(r, dict)] if isinstance(v, list) else []


def _words(d: Mapping[str, Any], default: str) -> str:
    s = d.get("string")
    return s.strip() if isinstance(s, str) and s.strip() else default


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None
