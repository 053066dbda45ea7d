"""smartctl --json parsing and the ok / warning / failing verdict."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import ParseError
from collectors.disks.smart.smartctl import (
    FAILING,
    OK,
    WARNING,
    judge_health,
    parse_smartctl_json,
    parse_smartctl_scan,
)
from tests.paths import FIXTURES

DIR = FIXTURES / "smartctl"
DEVICE_FILES = sorted(p.name for p in DIR.iterdir() if "scan" not in p.name and p.name != "scrutiny__smart-fail.json")


def load(name: str):  # type: ignore[no-untyped-def]
    return parse_smartctl_json((DIR / name).read_text())


# file -> (protocol, model, serial, wwn, temperature, power-on hours, health)
EXPECTED = {
    "scrutiny__smart-ata.json": ("ATA", "WDC WD140EDFZ-11A0VA0", "9RK1XXXX", "0x5000cca264eb01d7", 32, 1730, OK),
    "scrutiny__smart-fail2.json": ("ATA", "Hitachi HDS721050DLE630", "MSK423Y20S3HBC", "0x5000cca37fca81a8", 25,
                                   65592, FAILING),
    "scrutiny__smart-megaraid1.json": ("ATA", "WD4000FYYX", "XXXXXXXXXXXX", "0x50014ee2b6578d5f", 36, 37788, WARNING),
    "scrutiny__smart-nvme-failed.json": ("NVMe", "Samsung SSD 970 EVO 500GB", "S466NX0M776250H", None, 35, 12798,
                                         WARNING),
    "scrutiny__smart-scsi2.json": ("SCSI", "SEAGATE ST1200MM0088", "Z4028VRY0000C810BZXB", None, 31, 5675, OK),
    "smartctl_exporter__SEAGATE_ST373453LC_26.json": ("SCSI", "SEAGATE ST373453LC", "REDACTED", None, 33, 102880,
                                                      WARNING),
    "smartctl_exporter__nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json": (
        "NVMe", "SAMSUNG MZWLL3T2HAJQ-00005", "REDACTED", None, 40, 18376, FAILING),
    "telegraf__smartctl__usb-sat__response.json": ("ATA", "SanDisk pSSD", "06c9f4c44", "0x5001b4409f6c444c", None,
                                                   11, OK),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_reads_identity_temperature_hours_and_judges_health(name: str) -> None:
    d = load(name)
    level, _ = judge_health(d)
    assert (d.protocol, d.model, d.serial, d.wwn, d.temperature, d.power_on_hours, level) == EXPECTED[name]


@pytest.mark.parametrize("name", DEVICE_FILES)
def test_every_capture_parses(name: str) -> None:
    d = load(name)
    assert d.device.startswith("/dev/")
    assert judge_health(d)[0] in (OK, WARNING, FAILING)


def test_failing_disk_says_why() -> None:
    level, reasons = judge_health(load("scrutiny__smart-fail2.json"))
    assert level == FAILING
    assert "SMART overall health: FAILED" in reasons
    assert any("reallocated sectors (SMART 5)" in r for r in reasons)


def test_nvme_attributes_are_read() -> None:
    d = load("scrutiny__smart-nvme-failed.json")
    assert d.attributes["media_errors"] == 7
    assert d.attributes["available_spare"] == 99
    assert d.attributes["percentage_used"] == 3


def test_scsi_grown_defects_are_read() -> None:
    assert load("smartctl_exporter__SEAGATE_ST373453LC_26.json").attributes["grown_defects"] == 260


def test_accepting_the_current_value_clears_the_warning_until_it_rises_again() -> None:
    d = load("scrutiny__smart-megaraid1.json")  # 387 reallocated sectors
    assert judge_health(d)[0] == WARNING
    assert judge_health(d, accepted={"5": 387})[0] == OK
    level, reasons = judge_health(d, accepted={"5": 380})
    assert level == WARNING and "387 reallocated sectors, 380 accepted (SMART 5)" in reasons


def test_an_increase_is_a_warning_even_when_below_the_accepted_value() -> None:
    d = load("scrutiny__smart-megaraid1.json")
    level, reasons = judge_health(d, accepted={"5": 1000}, previous={"5": 300})
    assert level == WARNING
    assert reasons == ["387 reallocated sectors, up from 300, 1000 accepted (SMART 5)"]  # below the accepted 1000, but it rose


def test_a_hot_disk_is_a_warning() -> None:
    level, reasons = judge_health(load("scrutiny__smart-ata.json"), temp_warning=30)
    assert level == WARNING and reasons == ["temperature 32 °C >= 30 °C"]


def test_exit_status_bits_are_decoded() -> None:
    d = load("scrutiny__smart-fail2.json")  # exit 216 = bits 3, 4, 6, 7
    assert d.exit_bits == (3, 4, 6, 7)


def test_an_open_failure_is_an_error_naming_the_device() -> None:
    with pytest.raises(ParseError, match=r"/dev/sda: .*Open failed.*exit status 2"):
        parse_smartctl_json((DIR / "scrutiny__smart-fail.json").read_text())


def test_a_sleeping_disk_is_reported_as_standby_not_as_an_error() -> None:
    doc = {"smartctl": {"exit_status": 2, "messages": [{"string": "Device is in STANDBY mode, exit(2)",
                                                        "severity": "information"}]},
           "device": {"name": "/dev/sdc", "type": "sat", "protocol": "ATA"}}
    d = parse_smartctl_json(json.dumps(doc))
    assert d.standby and d.device == "/dev/sdc"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("", "not JSON"),
        ('{"smartctl": {"exit_status": 0}, "model_name": "x"', "not JSON"),
        ("[1, 2]", "no 'smartctl' object"),
        ('{"error": "boom"}', "no 'smartctl' object"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not JSON"),
    ],
)
def test_bad_output_gets_a_clear_error(data: str | bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_smartctl_json(data)


def test_scan_lists_devices_and_types() -> None:
    got = parse_smartctl_scan((DIR.parent.parent.parent / "tests" / "fixtures" / "smartctl" /
                               "scrutiny__smartctl_scan_megaraid.json").read_text())
    assert got and all(name.startswith("/dev/") for name, _ in got)
    assert any("megaraid" in t for _, t in got)


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(
                        ["smartctl", "exit_status", "device", "name", "temperature", "current", "serial_number",
                         "ata_smart_attributes", "table", "id", "raw", "value", "wwn", "naa", "oui",
                         "nvme_smart_health_information_log", "smart_status", "passed", "messages"]), c, max_size=5),
                    max_leaves=20))
def test_no_json_shape_crashes_the_parser(doc: object) -> None:
    try:
        d = parse_smartctl_json(json.dumps({"smartctl": doc} if not isinstance(doc, dict) else doc))
        judge_health(d)
    except ParseError:
        pass


def test_a_standing_udma_crc_count_is_history_not_a_warning() -> None:
    # 108 CRC errors on an otherwise healthy disk: the cable was bad once, the disk is fine.
    d = load("scrutiny__smart-ata-failed-scrutiny.json")
    assert d.attributes["199"] == 108
    assert judge_health(d, previous={"199": 108}) == (OK, [])
    assert judge_health(d) == (OK, [])


def test_a_rising_udma_crc_count_says_which_cable_to_check() -> None:
    d = load("smartctl_exporter__HGST_HUS724020ALE640_28.json")
    level, reasons = judge_health(d, previous={"199": 9}, where="shelf 1, bay 3")
    assert (level, reasons) == (WARNING, ["12 CRC errors, up from 9: check the cable/backplane of shelf 1, bay 3"])
    _, reasons = judge_health(d, previous={"199": 9})
    assert reasons == [f"12 CRC errors, up from 9: check the cable/backplane of {d.device}"]
