"""The storage domain's alert rules (ZFS, btrfs, MegaRAID, Ceph) fire on their condition, stay
quiet on the nearest healthy state, say which bay, and the overview tile agrees. States start
from what the real collectors produced for the healthy demo host."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from app import views
from app.alerting.conditions import Conditions
from app.judge import Judge
from app.scheduler import Snapshot
from tests.alerting.test_builtin_rules import fired, tile, with_states

States = dict[str, Any]
H = {"host": "demo-nas"}


@pytest.fixture(scope="module")
def healthy() -> Snapshot:
    from tests.alerting.test_builtin_rules import healthy as base

    return base.__wrapped__()  # type: ignore[attr-defined,no-any-return]


def pool(s: States) -> dict[str, Any]:
    return s["zfs"]["pools"][0]


def zfs_disk(s: States, i: int = 2) -> dict[str, Any]:
    return pool(s)["vdevs"][i]  # 0 is mirror-0; 2 is WD-WCC7K6RR9KXB in shelf 2, bay 1


def zfs_faulted(s: States) -> None:
    pool(s)["state"] = "DEGRADED"
    zfs_disk(s, 0)["state"] = "DEGRADED"
    zfs_disk(s).update(state="FAULTED", note="too many errors")


def zfs_scrubbing(s: States) -> None:
    pool(s)["scan"].update(state="scanning", ratio=0.4, errors=None)


def zfs_spare(s: States, state: str) -> None:
    pool(s)["vdevs"].append({**zfs_disk(s), "name": "sdf", "state": state, "group": "spares", "depth": 0,
                             "parent": None, "serial": "WD-WX11D1234567", "bay": "shelf 2, bay 3",
                             "model": "WDC WD40EFRX-68N32N0"})


def btrfs(s: States, devices: list[dict[str, Any]] | None = None, **attrs: Any) -> None:
    dev = {"devid": 1, "path": "/dev/sdk", "missing": False, "size": 4e12, "used": 1e12, "disk": "sdk",
           "serial": "ZA1063KK", "model": "ST8000VN004-2M2101", "wwn": None, "bay": "shelf 1, bay 10",
           "errors": {"write": 0, "read": 0, "flush": 0, "corruption": 0, "generation": 0}}
    dev2 = {**dev, "devid": 2, "path": "/dev/sdl", "disk": "sdl", "serial": "ZA1070LK", "bay": "shelf 1, bay 11"}
    fs = {"name": "media", "uuid": "2c680ff8-9687-4356-87db-e48d23749d80", "label": "media", "mount": "/media",
          "used": 2e12, "total_devices": 2, "devices": devices or [dev, dev2], "missing": 0, "unlisted_missing": 0,
          "allocation": [], "scrub": {"status": "finished", "started": "Sun Nov  8 03:00:00 2026",
                                      "duration_seconds": 3600, "errors": {}, "uncorrectable": 0, "corrected": 0,
                                      "bytes_scrubbed": 2e12, "ratio": 1.0}}
    fs.update(attrs)
    s["btrfs"] = {"filesystems": [fs]}


def btrfs_missing(s: States) -> None:
    btrfs(s)
    fs = s["btrfs"]["filesystems"][0]
    fs["devices"][1].update(missing=True)
    fs["missing"] = 1


def btrfs_scrub(s: States, uncorrectable: int, corrected: int) -> None:
    btrfs(s)
    s["btrfs"]["filesystems"][0]["scrub"].update(uncorrectable=uncorrectable, corrected=corrected,
                                                 errors={"csum": uncorrectable + corrected})


def ctl(s: States) -> dict[str, Any]:
    return s["megaraid"]["controllers"][0]


def pd(s: States, i: int = 3) -> dict[str, Any]:
    return ctl(s)["pds"][i]  # 252:3, shelf 3, bay 3


def vd_degraded(s: States) -> None:
    ctl(s)["vds"][0]["state"] = "Dgrd"
    pd(s).update(state="UBad", dg="-")


def pd_failed_spare_took_over(s: States) -> None:
    pd(s).update(state="UBad", dg="-")


def cluster(s: States) -> dict[str, Any]:
    return s["ceph"]["clusters"][0]


def check(s: States, name: str, severity: str, summary: str, muted: bool = False) -> None:
    c = cluster(s)
    c["checks"].append({"name": name, "severity": severity, "summary": summary, "count": 1, "muted": muted})
    c["health"] = severity if not muted else c["health"]


def osd(s: States, i: int = 5, **attrs: Any) -> None:
    cluster(s)["osds"][i].update(attrs)


CASES: dict[str, tuple[Callable[[States], None], Callable[[States], None], str]] = {
    # rule: (make it fire, the nearest healthy state, the overview tile that must not be ok)
    "zfs_pool_degraded": (zfs_faulted, zfs_scrubbing, "ZFS"),
    "zfs_device_faulted": (lambda s: zfs_spare(s, "FAULTED"), lambda s: zfs_spare(s, "AVAIL"), "ZFS"),
    "zfs_scrub_errors": (lambda s: pool(s)["scan"].update(errors=2),
                         lambda s: zfs_disk(s).update(checksum_errors=0), "ZFS"),
    "btrfs_device_missing": (btrfs_missing, btrfs, "btrfs"),
    "btrfs_scrub_errors": (lambda s: btrfs_scrub(s, 3, 0), lambda s: btrfs_scrub(s, 0, 3), "btrfs"),
    "megaraid_vd_degraded": (vd_degraded, lambda s: pd(s).update(state="GHS", dg="-"), "RAID controller"),
    "megaraid_pd_failed": (pd_failed_spare_took_over, lambda s: pd(s).update(state="UGood", dg="-"),
                           "RAID controller"),
    "megaraid_controller": (lambda s: ctl(s).update(status="Needs Attention"), lambda s: ctl(s).update(status="OK"),
                            "RAID controller"),
    "megaraid_bbu": (lambda s: ctl(s)["bbu"].update(state="Degraded"), lambda s: ctl(s)["bbu"].update(state="Optimal"),
                     "RAID controller"),
    "ceph_health_err": (lambda s: check(s, "PG_DAMAGED", "HEALTH_ERR", "Possible data damage: 1 pg inconsistent"),
                        lambda s: check(s, "PG_DAMAGED", "HEALTH_ERR", "Possible data damage: 1 pg inconsistent",
                                        muted=True), "Ceph"),
    "ceph_health_warn": (lambda s: check(s, "MON_CLOCK_SKEW", "HEALTH_WARN", "clock skew detected on mon.ceph-b"),
                         lambda s: check(s, "MON_CLOCK_SKEW", "HEALTH_WARN", "clock skew detected on mon.ceph-b",
                                         muted=True), "Ceph"),
    "ceph_osd_down": (lambda s: osd(s, up=False), lambda s: osd(s, up=True, **{"in": False}), "Ceph"),
}
# rule: (the counter to raise, the tile that shows standing errors). ZFS and btrfs counters are
# reset by the user (`zpool clear`, `btrfs device stats -z`), so standing ones are worth a
# warning; a RAID drive's media error count never resets, so only its rise is news.
RISING = {
    "zfs_errors_rising": (lambda s, n: zfs_disk(s).update(checksum_errors=n), "ZFS"),
    "btrfs_errors_rising": (lambda s, n: (btrfs(s), s["btrfs"]["filesystems"][0]["devices"][1]["errors"].update(
        corruption=n)), "btrfs"),
    "megaraid_pd_errors": (lambda s, n: pd(s).update(media_errors=n), None),
}
RULES = set(CASES) | set(RISING)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_storage_rule_fires_on_its_condition_and_the_tile_agrees(healthy: Snapshot, rule: str) -> None:
    bad, _, title = CASES[rule]
    snap = with_states(healthy, bad)
    assert rule in fired(snap)
    assert tile(snap, title) != views.OK


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_storage_rule_stays_quiet_on_the_nearest_healthy_state(healthy: Snapshot, rule: str) -> None:
    _, near, _ = CASES[rule]
    assert rule not in fired(with_states(healthy, near))


ZFS_BAY1 = {**H, "pool": "tank", "device": "ata-WDC_WD40EFRX-68N32N0_WD-WCC7K6RR9KXB-part1",
            "serial": "WD-WCC7K6RR9KXB", "bay": "shelf 2, bay 1", "model": "WDC WD40EFRX-68N32N0"}
SLOT3 = {**H, "controller": "c0", "slot": "252:3", "serial": "ZL2PV003", "bay": "shelf 3, bay 3",
         "model": "ST16000NM001G-2KK103"}
SAYS = {
    "zfs_pool_degraded": ("tank", "ZFS pool tank degraded: shelf 2, bay 1, WDC WD40EFRX-68N32N0 serial WD-WCC7K6RR9KXB "
                          "faulted (zpool: ata-WDC_WD40EFRX-68N32N0_WD-WCC7K6RR9KXB-part1)", ZFS_BAY1),
    "zfs_device_faulted": ("tank:sdf", "ZFS pool tank: shelf 2, bay 3, WDC WD40EFRX-68N32N0 serial WD-WX11D1234567 "
                           "faulted (zpool: sdf)", {**ZFS_BAY1, "device": "sdf", "serial": "WD-WX11D1234567",
                                                "bay": "shelf 2, bay 3"}),
    "zfs_scrub_errors": ("tank", "ZFS pool tank: scrub found 2 errors", {**H, "pool": "tank"}),
    "btrfs_device_missing": ("media", "btrfs media on /media: 1 device(s) missing: devid 2 (shelf 1, bay 11, "
                             "ST8000VN004-2M2101 serial ZA1070LK, was /dev/sdl)",
                             {**H, "fs": "media", "device": "/dev/sdl", "serial": "ZA1070LK", "bay": "shelf 1, bay 11",
                              "model": "ST8000VN004-2M2101"}),
    "btrfs_scrub_errors": ("media", "btrfs media: scrub found 3 uncorrectable errors", {**H, "fs": "media"}),
    "megaraid_vd_degraded": ("c0/0/0", "MegaRAID c0 VD 0/0 (RAID6 'vault') degraded: drive 252:3 unconfigured bad "
                             "(shelf 3, bay 3, ST16000NM001G-2KK103 serial ZL2PV003)", {**SLOT3, "vd": "0/0"}),
    "megaraid_pd_failed": ("c0/252:3", "MegaRAID c0: drive 252:3 unconfigured bad (shelf 3, bay 3, "
                           "ST16000NM001G-2KK103 serial ZL2PV003)", SLOT3),
    "megaraid_controller": ("c0", "MegaRAID c0 (MegaRAID 9560-8i 4GB) Needs Attention", {**H, "controller": "c0"}),
    "megaraid_bbu": ("c0", "MegaRAID c0: CacheVault CVPM05 Degraded", {**H, "controller": "c0"}),
    "ceph_health_err": ("PG_DAMAGED", "Ceph health error: Possible data damage: 1 pg inconsistent",
                        {**H, "check": "PG_DAMAGED", "severity": "HEALTH_ERR"}),
    "ceph_health_warn": ("MON_CLOCK_SKEW", "Ceph health warning: clock skew detected on mon.ceph-b",
                         {**H, "check": "MON_CLOCK_SKEW", "severity": "HEALTH_WARN"}),
    "ceph_osd_down": ("osd.5", "Ceph osd.5 down on ceph-c (ceph-c, bay 1, ST12000VN0008-2YS101 serial ZRT005K5)",
                      {**H, "osd": "osd.5", "ceph_host": "ceph-c", "serial": "ZRT005K5", "bay": "ceph-c, bay 1"}),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_storage_alert_says_which_bay_and_what_is_wrong(healthy: Snapshot, rule: str) -> None:
    bad, _, _ = CASES[rule]
    got = [(c.subject, c.summary, dict(c.labels)) for c in Conditions().build(with_states(healthy, bad))
           if c.rule == rule]
    assert got == [SAYS[rule]]


@pytest.mark.parametrize("rule", sorted(RISING))
def test_error_counters_fire_when_they_rise_and_not_while_they_stand(healthy: Snapshot, rule: str) -> None:
    raise_to, title = RISING[rule]
    t0 = 1_790_000_000.0
    for later, fires in ((7, False), (9, True)):
        judge = Judge(healthy.host)  # one host, two collections
        first = Conditions().build(with_states(healthy, lambda s: raise_to(s, 7), judge), now=t0)
        assert rule not in {c.rule for c in first}  # errors found at start: shown, not alerted
        snap = with_states(healthy, lambda s, n=later: raise_to(s, n), judge)
        assert (rule in {c.rule for c in Conditions().build(snap, now=t0 + 60)}) is fires
        if title:
            assert tile(snap, title) != views.OK  # standing errors still show on the tile


def test_a_ceph_osd_down_is_said_once_with_its_bay_not_again_as_cephs_own_check(healthy: Snapshot) -> None:
    def down(s: States) -> None:
        osd(s, up=False)
        check(s, "OSD_DOWN", "HEALTH_WARN", "1 osds down")

    rules = sorted(c.rule for c in Conditions().build(with_states(healthy, down)))
    assert rules == ["ceph_osd_down"]


def test_a_pulled_raid_drive_keeps_its_bay_in_the_alert(healthy: Snapshot) -> None:
    def pulled(s: States) -> None:
        ctl(s)["vds"][0]["state"] = "Dgrd"
        pd(s).update(state="Msng", media_errors=None, other_errors=None, temperature=None)

    (c,) = [c for c in Conditions().build(with_states(healthy, pulled)) if c.rule == "megaraid_vd_degraded"]
    assert "drive 252:3 missing (shelf 3, bay 3, ST16000NM001G-2KK103 serial ZL2PV003)" in c.summary


def test_the_storage_tiles_say_what_is_fine_in_words(healthy: Snapshot) -> None:
    tiles = {t.title: t for t in views.overview(healthy).tiles}
    assert tiles["ZFS"].level == views.OK and "1 pool online" in str(tiles["ZFS"])
    assert "1 virtual drive optimal" in str(tiles["RAID controller"])
    assert "healthy, 6/6 OSDs up, 512/512 PGs clean" in str(tiles["Ceph"])
    assert "btrfs" not in tiles  # nothing mounted: no tile
