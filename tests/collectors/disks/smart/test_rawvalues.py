"""Vendor-aware raw values: a Seagate's packed 48 bits decode to what smartctl's -v presets print,
and a healthy Seagate is judged healthy."""

from __future__ import annotations

import json

import pytest

from collectors.disks.smart.rawvalues import decode, vendor_of
from collectors.disks.smart.smartctl import OK, judge_health, parse_smartctl_json
from tests.paths import FIXTURES

DIR = FIXTURES / "smartctl"
SEAGATES = ("smartctl_exporter__ST3500418AS_12.json", "smartctl_exporter__ST3200820AS_16.json",
            "telegraf__smartctl__megaraid__response.json")


def rows(name: str) -> dict[int, tuple[float | None, str | None, str | None]]:
    d = parse_smartctl_json((DIR / name).read_text())
    return {r.id: (r.decoded, r.shown, r.packed) for r in d.table.ata if r.id is not None}


# What `smartctl -A -v 1,raw24/raw32 -v 7,raw24/raw32 -v 188,raw16 -v 195,raw24/raw32` prints for
# these drives: the top 16 of the 48 bits (errors) "/" the low 32 (operations); 188 as three words.
@pytest.mark.parametrize(("name", "attr", "expected"), [
    ("smartctl_exporter__ST3500418AS_12.json", 1, (0.0, "0/234151754", "raw24/raw32")),
    ("smartctl_exporter__ST3500418AS_12.json", 7, (2988.0, "2988/853696525", "raw24/raw32")),  # 12834215976973
    ("smartctl_exporter__ST3500418AS_12.json", 195, (0.0, "0/234151754", "raw24/raw32")),
    ("smartctl_exporter__ST3500418AS_12.json", 188, (0.0, "0 0 0", "raw16")),
    ("smartctl_exporter__ST3200820AS_16.json", 7, (0.0, "0/184476319", "raw24/raw32")),
    # smartctl knew this one (drivedb: Seagate Enterprise Capacity) and printed 188 decoded itself
    ("telegraf__smartctl__megaraid__response.json", 188, (0.0, "0 0 0", "raw16")),
    ("telegraf__smartctl__megaraid__response.json", 240, (44299.0, "44299h+04m+54.612s", "msec24hour32")),
    # temperatures with min/max packed above the current one: the current one
    ("smartctl_exporter__ST3500418AS_12.json", 194, (33.0, "33", "tempminmax")),
    ("smartctl_exporter__ST3200820AS_16.json", 190, (33.0, "33", "tempminmax")),
])
def test_seagate_packed_raws_decode_as_smartctl_prints_them(name: str, attr: int, expected: tuple) -> None:  # type: ignore[type-arg]
    assert rows(name)[attr] == expected


@pytest.mark.parametrize("name", SEAGATES)
def test_a_seagate_with_large_raw_read_seek_and_ecc_values_is_healthy(name: str) -> None:
    d = parse_smartctl_json((DIR / name).read_text())
    big = [r for r in d.table.ata if r.id in (1, 7, 195) and (r.raw or 0) > 10_000_000]
    assert big, "the capture holds the large packed raws this is about"
    level, reasons = judge_health(d)
    # ST3500418AS has 304 reallocated sectors, a real warning; nothing else may be said of it
    assert level == OK or reasons == ["304 reallocated sectors (SMART 5)"]
    assert not any("timeout" in r or "Raw_Read" in r or "Seek" in r for r in reasons)


def test_a_packed_command_timeout_counts_its_timeouts_not_its_48_bits() -> None:
    doc = json.loads((DIR / "smartctl_exporter__ST3500418AS_12.json").read_text())
    for row in doc["ata_smart_attributes"]["table"]:
        if row["id"] == 188:  # three 16-bit counters of 1, 1 and 1: 4295032833 as 48 bits
            row["raw"] = {"value": (1 << 32) | (1 << 16) | 1, "string": str((1 << 32) | (1 << 16) | 1)}
    d = parse_smartctl_json(json.dumps(doc))
    assert d.attributes["188"] == 1
    assert "1 command timeout (SMART 188)" in judge_health(d)[1]


def test_another_vendors_raw_values_are_taken_as_they_are() -> None:
    assert decode(7, 12834215976973, "12834215976973", "wdc") == decode(7, 12834215976973, None, "")
    assert decode(7, 12834215976973, None, "").value == 12834215976973  # type: ignore[union-attr]
    assert decode(5, 8, "8", "seagate").value == 8  # type: ignore[union-attr]
    assert decode(5, None, None) is None


def test_forms_smartctl_printed_are_read_before_the_bits() -> None:
    assert decode(9, 167031278144165, "2725 (151 234 0)").value == 2725  # type: ignore[union-attr]
    assert decode(173, 1114162, "50 (Average 17)").value == 50  # type: ignore[union-attr]
    assert decode(194, 81604378657, "33 (0 19 0 0 0)").shown == "33"  # type: ignore[union-attr]
    assert decode(194, 81604378657, None).value == 33  # type: ignore[union-attr]  # not printed: low byte


@pytest.mark.parametrize(("model", "family", "vendor"), [
    ("ST3500418AS", "Seagate Barracuda 7200.12", "seagate"), ("ST8000VN004-2M2101", None, "seagate"),
    ("SEAGATE ST1200MM0088", None, "seagate"), ("WDC WD20EFRX-68EUZN0", "Western Digital Red", "wdc"),
    ("TOSHIBA MG08ACA16TE", None, "toshiba"), ("HGST HUS724020ALE640", "Hitachi/HGST Ultrastar 7K4000", "hgst"),
    ("Samsung SSD 970 EVO 500GB", None, ""),
])
def test_the_vendor_comes_from_the_model_and_its_family(model: str, family: str | None, vendor: str) -> None:
    assert vendor_of(model, family) == vendor
