"""The disk verdict, rule by rule, each at its edge: what makes a disk failing, what only
warns, what is history, and the exact words the page and the alert show for it.
And the smartctl documents at the edge of parsing: errors with their words, NVMe fields,
odd argv, a sleeping disk, failing attributes without a name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from collectors.base import ParseError
from collectors.disks.smart.smartctl import (
    FAILING,
    OK,
    WARNING,
    SmartDisk,
    judge_health,
    parse_smartctl_json,
    parse_smartctl_scan,
)


def disk(exit_status: int = 0, passed: bool | None = True, temperature: float | None = 35,
         failing_now: tuple[str, ...] = (), **attributes: float) -> SmartDisk:
    # a5=... for ATA attribute 5; NVMe and SCSI fields by their own names
    attrs = {k[1:] if k[0] == "a" and k[1:].isdigit() else k: float(v) for k, v in attributes.items()}
    return SmartDisk(device="/dev/sdh", dev_type="sat", protocol="ATA", model="m", serial="s", wwn=None,
                     firmware=None, capacity_bytes=None, form_factor=None, rotation_rpm=None, smart_passed=passed, temperature=temperature,
                     power_on_hours=1, exit_status=exit_status, messages=(), attributes=attrs,
                     ata_failing_now=failing_now)


# (what, disk, judge keyword arguments, level, reasons in order)
CASES: list[tuple[str, SmartDisk, dict[str, Any], int, list[str]]] = [
    ("a healthy disk", disk(), {}, OK, []),
    ("smart status failed", disk(passed=False), {}, FAILING, ["SMART overall health: FAILED"]),
    ("exit bit 3 alone (status check said failing)", disk(exit_status=8), {}, FAILING,
     ["SMART overall health: FAILED"]),
    ("exit bit 4 without the attribute named", disk(exit_status=16), {}, FAILING,
     ["at or below its failure threshold now: an attribute"]),
    ("attributes failing now are named", disk(failing_now=("5 Reallocated_Sector_Ct", "197 Current_Pending_Sector")),
     {}, FAILING, ["at or below its failure threshold now: reallocated sectors (SMART 5), pending sectors (SMART 197)"]),
    ("exit bit 5 (failed in the past) is history", disk(exit_status=32), {}, OK, []),
    ("exit bit 6 (error log) alone is not judged", disk(exit_status=64), {}, OK, []),
    ("exit bit 7: self-test errors warn", disk(exit_status=128), {}, WARNING, ["self-test log contains errors"]),
    ("NVMe critical warning: temperature only warns", disk(critical_warning=0x02), {}, WARNING,
     ["NVMe critical_warning: temperature"]),
    ("NVMe critical warning: spare below threshold fails", disk(critical_warning=0x01), {}, FAILING,
     ["NVMe critical warning: spare below threshold (0x01)"]),
    ("NVMe critical warning: temperature with another bit fails", disk(critical_warning=0x03), {}, FAILING,
     ["NVMe critical warning: spare below threshold, temperature (0x03)"]),
    ("NVMe critical warning: read-only media", disk(critical_warning=0x08), {}, FAILING,
     ["NVMe critical warning: read-only (0x08)"]),
    ("NVMe spare at its threshold is fine", disk(available_spare=10, available_spare_threshold=10), {}, OK, []),
    ("NVMe spare below its threshold fails", disk(available_spare=9, available_spare_threshold=10), {}, FAILING,
     ["NVMe available spare 9% below threshold 10%"]),
    ("NVMe spare without a threshold is not judged", disk(available_spare=0), {}, OK, []),
    ("NVMe threshold without a spare is not judged", disk(available_spare_threshold=10), {}, OK, []),
    ("NVMe wear 99 % is fine", disk(percentage_used=99), {}, OK, []),
    ("NVMe wear 100 % warns", disk(percentage_used=100), {}, WARNING, ["NVMe wear 100% used"]),
    ("NVMe wear past 100 % warns", disk(percentage_used=104), {}, WARNING, ["NVMe wear 104% used"]),
    ("NVMe media errors warn", disk(media_errors=1), {}, WARNING, ["1 NVMe media error (NVMe health log)"]),
    ("SCSI grown defects warn", disk(grown_defects=3), {}, WARNING, ["3 grown defects (SCSI)"]),
    ("a reallocated sector warns", disk(a5=1), {}, WARNING, ["1 reallocated sector (SMART 5)"]),
    ("an accepted count is fine", disk(a5=3), {"accepted": {"5": 3}}, OK, []),
    ("a count above the accepted one warns and says so", disk(a5=4), {"accepted": {"5": 3}}, WARNING,
     ["4 reallocated sectors, 3 accepted (SMART 5)"]),
    ("an accepted count that stands still is fine", disk(a5=3), {"accepted": {"5": 3}, "previous": {"5": 3}}, OK, []),
    ("a count that rose warns even when accepted", disk(a5=3), {"accepted": {"5": 3}, "previous": {"5": 2}}, WARNING,
     ["3 reallocated sectors, up from 2, 3 accepted (SMART 5)"]),
    ("a count that fell (disk swapped) is not a rise", disk(a197=1), {"accepted": {"197": 5}, "previous": {"197": 8}},
     OK, []),
    ("pending and offline-uncorrectable both named", disk(a197=2, a198=2), {}, WARNING,
     ["2 sectors pending reallocation (SMART 197)", "2 offline uncorrectable sectors (SMART 198)"]),
    ("UDMA CRC standing still is history", disk(a199=10), {"previous": {"199": 10}}, OK, []),
    ("UDMA CRC with nothing to compare is history", disk(a199=10), {}, OK, []),
    ("UDMA CRC that rose names the bay to check", disk(a199=10), {"previous": {"199": 9}, "where": "shelf 1, bay 3"},
     WARNING, ["10 CRC errors, up from 9: check the cable/backplane of shelf 1, bay 3"]),
    ("UDMA CRC that rose names the device without a bay", disk(a199=10), {"previous": {"199": 9}}, WARNING,
     ["10 CRC errors, up from 9: check the cable/backplane of /dev/sdh"]),
    ("counters after UDMA CRC are still judged", disk(a199=10, grown_defects=2), {}, WARNING, ["2 grown defects (SCSI)"]),
    ("49.9 °C is not hot", disk(temperature=49.9), {}, OK, []),
    ("50 °C is hot", disk(temperature=50), {}, WARNING, ["temperature 50 °C >= 50 °C"]),
    ("the hot line can be moved", disk(temperature=50), {"temp_warning": 55}, OK, []),
    ("an unknown temperature is not judged", disk(temperature=None), {}, OK, []),
    ("failing reasons come first, then the warnings", disk(passed=False, temperature=61, exit_status=128), {}, FAILING,
     ["SMART overall health: FAILED", "self-test log contains errors", "temperature 61 °C >= 50 °C"]),
]


@pytest.mark.parametrize("what, d, kwargs, level, reasons", CASES, ids=[c[0] for c in CASES])
def test_the_verdict_and_its_words(what: str, d: SmartDisk, kwargs: dict[str, Any], level: int,
                                   reasons: list[str]) -> None:
    assert judge_health(d, **kwargs) == (level, reasons)


def doc(**fields: Any) -> str:
    base: dict[str, Any] = {"smartctl": {"exit_status": 0}, "device": {"name": "/dev/sdb", "protocol": "NVMe"}}
    base.update(fields)
    return json.dumps(base)


@pytest.mark.parametrize("exit_status, messages, message", [
    (1, [], "smartctl /dev/sdb: command line did not parse (exit status 1)"),
    (2, [], "smartctl /dev/sdb: device open failed or device in low-power mode (exit status 2)"),
    (3, [], "smartctl /dev/sdb: device open failed or device in low-power mode (exit status 3)"),
    (2, ["Smartctl open device: /dev/sdb failed: No such device", "try -d"],
     "smartctl /dev/sdb: Smartctl open device: /dev/sdb failed: No such device; try -d (exit status 2)"),
])
def test_a_disk_it_cannot_read_is_an_error_in_smartctls_words(exit_status: int, messages: list[str],
                                                             message: str) -> None:
    text = doc(smartctl={"exit_status": exit_status, "messages": [{"string": m} for m in messages]})
    with pytest.raises(ParseError) as err:
        parse_smartctl_json(text)
    assert str(err.value) == message


@pytest.mark.parametrize("identity", [{"serial_number": "ZA1"}, {"model_name": "WDC"}])
def test_a_command_failure_with_the_identity_read_is_still_a_disk(identity: dict[str, str]) -> None:
    d = parse_smartctl_json(doc(smartctl={"exit_status": 2}, **identity))
    assert (d.serial, d.model, d.exit_bits) == (identity.get("serial_number"), identity.get("model_name"), (1,))


@pytest.mark.parametrize("text", ["Device is in SLEEP mode, exit(2)", "Device is in STANDBY mode, exit(2)"])
def test_a_sleeping_disk_in_either_word_is_standby(text: str) -> None:
    d = parse_smartctl_json(doc(smartctl={"exit_status": 2, "messages": [{"string": text}]}))
    assert d.standby


@pytest.mark.parametrize("text", ["STANDBY", "mode page unsupported", "Device is in IDLE mode"])
def test_other_messages_are_not_standby(text: str) -> None:
    assert not parse_smartctl_json(doc(messages=[{"string": text}], model_name="x")).standby


def test_a_message_without_text_is_kept_empty() -> None:
    d = parse_smartctl_json(doc(smartctl={"exit_status": 0, "messages": [{"severity": "warning"}, "odd"]}))
    assert d.messages == ("",)


def test_the_device_comes_from_argv_when_the_device_object_is_missing() -> None:
    d = parse_smartctl_json(json.dumps({"smartctl": {"exit_status": 0, "argv": ["smartctl", "-a", "/dev/sdc",
                                                                                "--json"]}}))
    assert d.device == "/dev/sdc"
    d = parse_smartctl_json(json.dumps({"smartctl": {"exit_status": 0, "argv": ["smartctl", 5]}}))
    assert d.device == "?"


def test_nvme_temperature_and_hours_come_from_the_health_log_when_the_top_level_lacks_them() -> None:
    d = parse_smartctl_json(doc(nvme_smart_health_information_log={"temperature": 41, "power_on_hours": 1234,
                                                                     "critical_warning": 0}))
    assert (d.temperature, d.power_on_hours, d.attributes) == (41, 1234, {"critical_warning": 0})


def test_the_top_level_temperature_and_hours_win() -> None:
    d = parse_smartctl_json(doc(temperature={"current": 38}, power_on_time={"hours": 7},
                                nvme_smart_health_information_log={"temperature": 41, "power_on_hours": 1234}))
    assert (d.temperature, d.power_on_hours) == (38, 7)


def test_an_odd_smart_status_is_unknown() -> None:
    assert parse_smartctl_json(doc(smart_status={"passed": "yes"})).smart_passed is None
    assert parse_smartctl_json(doc(smart_status={"passed": False})).smart_passed is False


def test_a_return_code_overrides_the_documents_exit_status() -> None:
    assert parse_smartctl_json(doc(model_name="x"), returncode=64).exit_bits == (6,)
    assert parse_smartctl_json(doc(smartctl={"exit_status": 64}, model_name="x")).exit_bits == (6,)


def test_failing_attributes_are_named_even_in_an_odd_table() -> None:
    table = [{"id": 5, "name": "Reallocated_Sector_Ct", "when_failed": "now", "raw": {"value": 9}},
             "junk", {"name": "no id"}, {"id": 9, "when_failed": "now"},
             {"id": 197, "name": "Current_Pending_Sector", "when_failed": "", "raw": {"value": 2}}]
    d = parse_smartctl_json(doc(ata_smart_attributes={"table": table}))
    assert d.ata_failing_now == ("5 Reallocated_Sector_Ct", "9")
    assert d.attributes == {"5": 9, "197": 2}


def test_output_that_is_not_json_is_quoted_up_to_80_characters() -> None:
    for data in ("x" * 100, b"x" * 100):
        with pytest.raises(ParseError) as err:
            parse_smartctl_json(data)
        assert str(err.value).endswith(f"{'x' * 80!r}") and str(err.value).startswith("smartctl output is not JSON (")


def test_a_document_without_a_smartctl_object_says_what_it_expected() -> None:
    with pytest.raises(ParseError) as err:
        parse_smartctl_json("{}")
    assert str(err.value) == "smartctl JSON has no 'smartctl' object (is this smartctl --json output?)"


def test_scan_defaults_the_type_and_skips_entries_without_a_name() -> None:
    got = parse_smartctl_scan(json.dumps({"devices": [{"name": "/dev/sda"}, {"type": "sat"}, "x",
                                                      {"name": "/dev/sdb", "type": "nvme"}]}))
    assert got == [("/dev/sda", "auto"), ("/dev/sdb", "nvme")]


# What smartctl 7.3 prints for `--scan --json` on a machine without a disk it can see (a VM, a
# container): no "devices" key at all (smartctl.cpp scan_devices fills jglb["devices"][i] per
# device). Written from smartmontools' source, in the shape of its other JSON output.
SCAN_NO_DEVICES = json.dumps({
    "json_format_version": [1, 0],
    "smartctl": {"version": [7, 3], "svn_revision": "5338", "platform_info": "x86_64-linux-6.1.0-13-amd64",
                 "build_info": "(local build)", "argv": ["smartctl", "--scan", "--json"], "exit_status": 0},
})


def test_a_scan_that_found_no_disk_is_no_disks_not_an_error() -> None:
    assert parse_smartctl_scan(SCAN_NO_DEVICES) == []
    assert parse_smartctl_scan('{"devices": []}') == []


def test_a_scan_without_devices_that_smartctl_explains_says_why() -> None:
    doc = json.loads(SCAN_NO_DEVICES)
    doc["smartctl"]["messages"] = [{"string": "Scan of /dev failed: Permission denied", "severity": "error"}]
    with pytest.raises(ParseError) as err:
        parse_smartctl_scan(json.dumps(doc))
    assert str(err.value) == "smartctl --scan: Scan of /dev failed: Permission denied"


@pytest.mark.parametrize("text, message", [
    ("nope", "smartctl --scan output is not JSON: "),
    ("[]", "smartctl --scan JSON is not an object: '[]'"),
    ('{"devices": 3}', "smartctl --scan JSON: 'devices' is not a list: '3'"),
])
def test_scan_errors_say_what_was_wrong(text: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_smartctl_scan(text)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(("attributes", "expected"), [
    ({}, []),
    ({"9": 1200.0}, []),  # power-on hours: not one of the five
    ({"5": 0.0}, [("5", False, "zero, like 98.9 % of working drives")]),
    ({"5": 8.0, "198": 0.0}, [("5", True, "above zero, like 42.2 % of the drives that failed and only 1.1 % of "
                                           "those still working"),
                              ("198", False, "zero, like 99.7 % of working drives")]),
    ({"188": 3.0}, [("188", True, "above zero, like 44.5 % of the drives that failed and only 4.8 % of those "
                                  "still working")]),
])
def test_a_disk_stands_against_the_published_failure_statistics_attribute_by_attribute(
        attributes: dict[str, float], expected: list[tuple[str, bool, str]]) -> None:
    from collectors.disks.smart.failure_stats import standing

    assert [(r.id, r.above_zero, r.words) for r in standing(attributes)] == expected


@pytest.mark.parametrize(("raw", "said"), [
    ("5 Reallocated_Sector_Ct", "reallocated sectors (SMART 5)"),
    ("199 UDMA_CRC_Error_Count", "UDMA CRC errors (SMART 199)"),
    ("250 Vendor_Specific_Thing", "Vendor Specific Thing (SMART 250)"),
    ("250", "attribute (SMART 250)"),
    ("Reallocated_Sector_Ct", "Reallocated Sector Ct"),
])
def test_an_attribute_is_named_in_words_with_its_id(raw: str, said: str) -> None:
    from collectors.disks.smart.words import attribute_words

    assert attribute_words(raw) == said
