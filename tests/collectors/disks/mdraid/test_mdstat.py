"""/proc/mdstat parsing over every real capture we have, plus bad input."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import ParseError
from collectors.disks.mdraid.mdstat import parse_mdstat
from tests.paths import FIXTURES

DIR = FIXTURES / "mdstat"
ALL = sorted(p.name for p in DIR.iterdir())

# name -> {array: (level, missing, failed, spares, sync action or None, sync ratio or waiting)}
EXPECTED = {
    "procfs__mdstat": {
        "md3": ("raid6", 0, 0, 2, None, None),
        "md4": ("raid1", 0, 1, 1, None, None),
        "md6": ("raid1", 1, 1, 1, "recovery", 0.085),
        "md8": ("raid1", 0, 0, 2, "resync", 0.085),
        "md201": ("raid1", 0, 0, 0, "check", 0.057),
        "md7": ("raid6", 1, 1, 0, None, None),
        "md9": ("raid1", 0, 2, 1, "resync", "DELAYED"),
        "md10": ("raid0", 0, 0, 0, None, None),
        "md11": ("raid1", 0, 1, 2, "resync", "PENDING"),
        "md219": (None, 0, 0, 3, None, None),
        "md120": ("linear", 0, 0, 0, None, None),
        "md42": ("raid5", 1, 0, 1, "reshape", 0.561),
    },
    "nagios-plugin-check_raid__mdstat__mdstat-failed": {"md0": ("raid5", 1, 1, 0, None, None)},
    "nagios-plugin-check_raid__mdstat__issue43__recovery": {"md0": ("raid6", 2, 0, 0, "recovery", 0.196)},
    "nagios-plugin-check_raid__mdstat__pr28_2": {
        "md1": ("raid1", 1, 0, 0, "resync", "DELAYED"),
        "md0": ("raid1", 1, 0, 0, "recovery", 0.039),
    },
    "telegraf__proc_mdstat__raid10-check": {"md2": ("raid10", 0, 0, 0, "check", 0.943)},
    "pymdstat__mdstat.13": {"md127": ("raid4", 2, 0, 0, "reshape", 0.021)},
    "pymdstat__mdstat.07": {"md1": ("raid1", 2, 1, 0, None, None)},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_reads_levels_counts_and_sync_state_from_real_captures(name: str) -> None:
    arrays = {a.name: a for a in parse_mdstat((DIR / name).read_text()).arrays}
    for array, (level, missing, failed, spares, action, progress) in EXPECTED[name].items():
        a = arrays[array]
        got = (a.level, a.missing, a.failed, a.spares, a.sync.action if a.sync else None,
               (a.sync.waiting or a.sync.ratio) if a.sync else None)
        assert got == (level, missing, failed, spares, action, progress), array


@pytest.mark.parametrize("name", ALL)
def test_every_capture_parses_without_miscounting(name: str) -> None:
    text = (DIR / name).read_text()
    stat = parse_mdstat(text)
    headers = re.findall(r"^(\S+) : (?:active|inactive)\b(.*)$", text, re.M)
    assert [a.name for a in stat.arrays] == [h[0] for h in headers]
    for a, (_, rest) in zip(stat.arrays, headers, strict=True):
        assert len(a.members) == len(re.findall(r"\[\d+\]", rest))
        assert a.failed == rest.count("(F)")
        if a.slot_map is not None:
            assert a.missing == a.slot_map.count("_")
            assert len(a.slot_map) == a.disks_total


def test_a_capture_with_a_shell_prompt_line_still_parses() -> None:
    stat = parse_mdstat((DIR / "nagios-plugin-check_raid__mdstat__pr28_0").read_text())
    assert [a.name for a in stat.arrays] == ["md1", "md0"]


def test_a_degraded_raid6_needs_a_rebuild_and_a_check_does_not() -> None:
    stat = parse_mdstat((DIR / "procfs__mdstat").read_text())
    arrays = {a.name: a for a in stat.arrays}
    assert arrays["md7"].degraded and not arrays["md201"].degraded
    assert arrays["md201"].sync and arrays["md201"].sync.action == "check"


def test_sync_line_gives_speed_and_time_left() -> None:
    stat = parse_mdstat((DIR / "pymdstat__mdstat.05").read_text())
    s = stat.arrays[0].sync
    assert s is not None
    assert (s.done_blocks, s.total_blocks, s.speed_kib) == (37043392, 292945152, 33440)
    assert s.finish_seconds == pytest.approx(127.5 * 60)


def test_member_flags_are_all_read() -> None:
    text = "Personalities : [raid1]\nmd0 : active raid1 sda1[0](W) sdb1[1](W)(F) sdc1[2](R) sdd1[3](S)\n" \
           "      100 blocks [2/1] [U_]\n"
    m = {x.device: x for x in parse_mdstat(text).arrays[0].members}
    assert m["sda1"].write_mostly and m["sda1"].state == "active"
    assert m["sdb1"].faulty and m["sdb1"].write_mostly and m["sdb1"].state == "failed"
    assert m["sdc1"].state == "replacement"
    assert m["sdd1"].state == "spare"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no 'Personalities :' line"),
        ("/dev/md125:\n        Version : 0.90\n", "not /proc/mdstat"),
        ("\x00\x01\x02garbage", "NUL"),
        ("Personalities : [raid1]\nmd0 : active raid1 sda1[0] sd", "malformed member 'sd'"),
        ("Personalities : [raid1]\nmd0 : active raid1 sda1[0] sdb1[1]\n", "truncated"),
        ("Personalities : [raid1]\nmd0 : active raid1 sda1[0]\n   100 blocks [2/1] [U_U]", "does not have 2 slots"),
        ("Personalities : [raid1]\nmd0 : active raid1 sda1[0]\n   100 blocks [2/1] [U_]\n   [=>..]  recovery = x%",
         "malformed sync line"),
        ("Personalities : [raid1]\n   100 blocks [2/1] [U_]\n", "outside any array"),
    ],
)
def test_bad_input_gets_an_error_that_quotes_it(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_mdstat(text)


def test_mdadm_detail_output_is_refused_as_not_mdstat() -> None:
    other = FIXTURES / "mdadm" / "nagios-plugin-check_raid__mdadm__white-mdadm-125"
    with pytest.raises(ParseError, match="not /proc/mdstat"):
        parse_mdstat(other.read_text())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("md0123 :activeinraid[]()FSWU_/=>.%kblocks\n\tsuperPersonalities")),
               max_size=400))
def test_whatever_it_is_fed_it_answers_arrays_or_a_parse_error(text: str) -> None:
    try:
        got = parse_mdstat("Personalities : [raid1]\n" + text)
    except ParseError as exc:
        assert str(exc)  # an error says what it refused
        return
    for a in got.arrays:
        assert a.name and a.name in text
        assert all(m.device in text and m.role >= 0 for m in a.members)
        assert a.disks_working is None or a.disks_total is None or 0 <= a.disks_working


FILES = sorted(p.name for p in DIR.iterdir() if p.is_file())


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FILES), st.floats(min_value=0, max_value=1))
def test_a_truncated_mdstat_never_reports_more_arrays_or_members_than_the_whole_file(name: str, where: float) -> None:
    """A file read while the kernel rewrites it can be cut anywhere: what the cut part reports
    may be less than the truth, never more (no invented array, member or failed disk)."""
    text = (DIR / name).read_text()
    try:
        whole = {a.name: a for a in parse_mdstat(text).arrays}
    except ParseError:
        return
    try:
        part = parse_mdstat(text[: int(len(text) * where)])
    except ParseError:
        return
    assert len(part.arrays) <= len(whole)
    for a in part.arrays:
        assert a.name in whole
        full = whole[a.name]
        assert {m.device for m in a.members} <= {m.device for m in full.members}
        assert sum(m.faulty for m in a.members) <= sum(m.faulty for m in full.members)
