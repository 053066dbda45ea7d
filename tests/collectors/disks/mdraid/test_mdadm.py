"""`mdadm --detail` parsing over real captures."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import ParseError
from collectors.disks.mdraid.mdadm import parse_mdadm_detail
from tests.paths import FIXTURES

DIR = FIXTURES / "mdadm"
ALL = sorted(p.name for p in DIR.iterdir())

# file -> (level, uuid, state words, events, [(raid_device, role, device)])
EXPECTED = {
    "jc__mdadm-query-raid1-faulty-with-spare.out": (
        "raid1", "e054553a:fbccdcfe:0ae80bc8:9379377a", ("clean", "degraded", "recovering"), "57",
        [(0, "active", "/dev/vda1"), (1, "rebuilding", "/dev/vda4"), (None, "failed", "/dev/vda2")],
    ),
    "jc__mdadm-query-raid1-faulty-and-removed.out": (
        "raid1", "e054553a:fbccdcfe:0ae80bc8:9379377a", ("clean", "degraded"), "31",
        [(0, "active", "/dev/vda1"), (1, "missing", None)],
    ),
    "jc__mdadm-query-raid1-ok-spare.out": (
        "raid1", "e054553a:fbccdcfe:0ae80bc8:9379377a", ("clean",), "52",
        [(0, "active", "/dev/vda1"), (1, "active", "/dev/vda2"), (None, "spare", "/dev/vda4")],
    ),
    "jc__mdadm-query-raid1-ok-0-9.out": (
        "raid1", "3f720601:29af5283:96fc04a8:108a4af7", ("clean",), "0.18",
        [(0, "active", "/dev/vda1"), (1, "active", "/dev/vda2")],
    ),
    "nagios-plugin-check_raid__mdadm__white-mdadm-126": (
        "raid1", "efd17549:2c32fcf9:8f51c79c:001ace3c", ("clean", "degraded", "recovering"), "0.16542390",
        [(0, "rebuilding", "/dev/sda2"), (1, "active", "/dev/sdb2")],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_reads_uuid_state_events_and_member_rows(name: str) -> None:
    d = parse_mdadm_detail((DIR / name).read_text())
    level, uuid, state, events, rows = EXPECTED[name]
    assert (d.level, d.uuid, d.state, d.events) == (level, uuid, state, events)
    assert [(x.raid_device, x.role, x.device) for x in d.devices] == rows


@pytest.mark.parametrize("name", ALL)
def test_every_capture_parses_and_counts_match_the_header(name: str) -> None:
    d = parse_mdadm_detail((DIR / name).read_text())
    total = d.count("Total Devices")
    if total is not None and d.level != "container":
        # Total Devices counts disks present; "removed" rows are empty slots.
        assert sum(1 for x in d.devices if x.role != "missing") == total
    failed = d.count("Failed Devices")
    if failed is not None:
        assert sum(1 for x in d.devices if x.role == "failed") == failed


def test_a_reshape_with_a_spare_has_twenty_one_active_members() -> None:
    d = parse_mdadm_detail((DIR / "insights-core__mdadm_detail__raid5-reshaping-spare").read_text())
    assert sum(1 for x in d.devices if x.role == "active") == 21
    assert [x.device for x in d.devices if x.role == "spare"] == ["/dev/sda1"]
    assert "reshaping" in d.state


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not mdadm --detail output"),
        ("mdadm: cannot open /dev/md9: No such file or directory\n", "mdadm reported"),
        ("Personalities : [raid1]\n", "not mdadm --detail output"),
        ("/dev/md0:\n", "no 'key : value' lines"),
        ("/dev/md0:\n   Version : 1.2\n", "no 'Raid Level'"),
        ("/dev/md0:\n  Raid Level : raid1\n    Number   Major   Minor   RaidDevice State\n   zero one\n",
         "malformed device row"),
        ("\x00\xff", "NUL"),
    ],
)
def test_bad_output_gets_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_mdadm_detail(text)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=1500))
def test_any_truncation_parses_or_errors_cleanly(cut: int) -> None:
    text = (DIR / "jc__mdadm-query-raid1-faulty-with-spare.out").read_text()[:cut]
    try:
        parse_mdadm_detail(text)
    except ParseError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_no_text_crashes_the_parser(text: str) -> None:
    try:
        parse_mdadm_detail("/dev/md0:\n" + text)
    except ParseError:
        pass


def test_raid10_set_names_and_write_mostly_flags_are_part_of_the_state() -> None:
    text = """/dev/md2:
        Raid Level : raid10
             State : clean
    Number   Major   Minor   RaidDevice State
       0       8        1        0      active sync set-A   /dev/sda1
       1       8       17        1      active sync set-B   /dev/sdb1
       2       8       33        2      active sync writemostly   /dev/sdc1
       -       0        0        3      removed
"""
    d = parse_mdadm_detail(text)
    assert [x.state for x in d.devices] == [("active", "sync", "set-A"), ("active", "sync", "set-B"),
                                            ("active", "sync", "writemostly"), ("removed",)]
    assert [x.role for x in d.devices] == ["active", "active", "active", "missing"]
