"""Where a data set lives and how many more disks its array can lose, read from the storage
plug-ins' states: md from a real /proc/mdstat capture (procfs's, 18 arrays), ZFS from real
`zpool status` outputs (jc, node-exporter-textfile-collector-scripts) and OpenZFS 2.3's JSON as
zpool-status(8) documents it (tests/fixtures/zpool/README.md: written, no capture exists),
btrfs from its typed state (no btrfs here: the profiles as `btrfs filesystem df` names them)."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from app.data.homes import Home, home_of, mount_of
from collectors.disks.mdraid.collector import MdraidCollector
from collectors.host.basics.state import Filesystem, HostState
from collectors.storage.zfs.state import PoolView, ScanView, VdevView, ZfsState
from collectors.storage.zfs.zpool_json import parse_zpool_status_json
from collectors.storage.zfs.zpool_text import parse_zpool_status
from tests.collectors.disks.mdraid.test_mdraid_collector import real_capture_host
from tests.paths import FIXTURES
from tests.states import one


def on(device: str, fstype: str = "ext4", mountpoint: str = "/srv") -> HostState:
    return HostState(filesystems=[Filesystem(mountpoint="/", device="/dev/sda2", fstype="ext4"),
                                  Filesystem(mountpoint=mountpoint, device=device, fstype=fstype)])


@pytest.fixture(scope="module")
def md(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return MdraidCollector(real_capture_host(tmp_path_factory.mktemp("md")), detail=False).collect().state


@pytest.mark.parametrize(("array", "left", "tolerance", "words"), [
    ("md3", 2, 2, "RAID6 on md3, 2 of 2 parity disks left"),
    ("md127", 1, 1, "RAID1 on md127, 1 of 1 mirror disk left"),
    ("md9", 3, 3, "RAID1 on md9, 3 of 3 mirror disks left"),  # a four-way mirror
    ("md6", 0, 1, "RAID1 on md6, 0 of 1 mirror disk left while md6 rebuilds (8%)"),
    ("md7", 0, 2, "RAID6 on md7, not running (inactive): its data cannot be read"),
    ("md4", 0, 1, "RAID1 on md4, not running (inactive): its data cannot be read"),
    ("md42", 0, 1, "RAID5 on md42, 0 of 1 parity disk left while md42 reshapes (56%)"),
    ("md10", 0, 0, "RAID0 on md10: no redundancy (a disk lost is the array lost)"),
    ("md120", 0, 0, "LINEAR on md120: no redundancy (a disk lost is the array lost)"),
])
def test_an_md_arrays_redundancy_left_is_its_levels_less_the_disks_missing(md, array: str, left: int,  # type: ignore[no-untyped-def]
                                                                          tolerance: int, words: str) -> None:
    h = home_of("/srv/photos", on(f"/dev/{array}"), md, None, None)
    assert (h.kind, h.array, h.mountpoint, h.left, h.tolerance, h.words) == ("md", array, "/srv", left, tolerance, words)


def pools(name: str) -> ZfsState:
    text = (FIXTURES / "zpool" / name).read_text()
    parsed = parse_zpool_status_json(text) if name.endswith(".json") else parse_zpool_status(text)
    return ZfsState(pools=[PoolView(name=p.name, state=p.state, scan=ScanView(**asdict(p.scan)) if p.scan else None,
                                    vdevs=[VdevView(**asdict(v)) for v in p.vdevs]) for p in parsed])


@pytest.mark.parametrize(("fixture", "pool", "left", "words"), [
    ("node-exporter-textfile-collector-scripts__zpool_status_-p", "pool0", 1, "ZFS RAIDZ1 pool pool0, 1 of 1 parity disk left"),
    ("node-exporter-textfile-collector-scripts__zpool_status_-p", "pool1", 1, "ZFS mirror pool pool1, 1 of 1 mirror disk left"),
    ("jc__zpool-status-v2.out", "tank", 0, "ZFS mirror pool tank, 0 of 1 mirror disk left"),
    ("jc__zpool-status-v3.out", "tank", 0, "ZFS pool tank is UNAVAIL"),
    ("node-exporter-textfile-collector-scripts__zpool_status_-p_logs", "zones", 0,
     "ZFS mirror pool zones, 0 of 1 mirror disk left"),  # mirror-0 lost a side; mirror-1 whole: the weakest counts
    # the new disk of replacing-1 is still resilvering: it holds no copy yet
    ("status-j-int-resilvering.json", "backup", 0, "ZFS mirror pool backup, 0 of 1 mirror disk left while it resilvers (36%)"),
])
def test_a_zfs_pools_redundancy_left_is_its_weakest_vdevs(fixture: str, pool: str, left: int, words: str) -> None:
    h = home_of("/tank/photos", on(f"{pool}/photos", "zfs", "/tank/photos"), None, pools(fixture), None)
    assert (h.kind, h.array, h.left, h.words) == ("zfs", pool, left, words)


@pytest.mark.parametrize(("profiles", "missing", "left", "words"), [
    (("raid1", "raid1"), 0, 1, "btrfs raid1 on pool, 1 of 1 redundant disk left"),
    (("raid1", "raid1"), 1, 0, "btrfs raid1 on pool, 0 of 1 redundant disk left, 1 device missing"),
    (("raid6", "raid1c3"), 0, 2, "btrfs raid1c3/raid6 on pool, 2 of 2 redundant disks left"),
    (("single", "dup"), 0, 0, "btrfs dup/single on pool: no redundancy (a disk lost is data lost)"),
])
def test_a_btrfs_filesystem_is_as_redundant_as_its_weakest_profile(profiles: tuple[str, str], missing: int, left: int,
                                                                   words: str) -> None:
    btrfs = one("btrfs", {"filesystems": [{"name": "pool", "mount": "/srv", "missing": missing, "allocation": [
        {"type": "data", "profile": profiles[0]}, {"type": "metadata", "profile": profiles[1]}]}]})
    h = home_of("/srv/photos", on("/dev/sdb", "btrfs"), None, None, btrfs)  # type: ignore[arg-type]
    assert (h.kind, h.left, h.words) == ("btrfs", left, words)


def test_the_longest_mount_point_wins_and_a_sibling_with_the_same_prefix_does_not() -> None:
    fss = [Filesystem(mountpoint=m) for m in ("/", "/srv", "/srv/photos", "/srv/photos2")]
    assert [mount_of(p, fss).mountpoint for p in ("/srv/photos/2024", "/srv/photo", "/srv/photos2/x", "/etc")] == [
        "/srv/photos", "/srv", "/srv/photos2", "/"]


def test_what_rackpulse_cannot_see_beneath_is_not_known_and_a_plain_disk_has_no_redundancy() -> None:
    lvm = home_of("/srv/x", on("/dev/mapper/vg0-data"), None, None, None)
    assert (lvm.left, lvm.words) == (None, "/dev/mapper/vg0-data (ext4): rackpulse does not see the disks beneath it")
    disk = home_of("/srv/x", on("/dev/sdb1"), None, None, None)
    assert (disk.kind, disk.left) == ("disk", 0)
    # behind a MegaRAID controller /dev/sdb may be a RAID6 virtual drive: not called a single disk
    assert home_of("/srv/x", on("/dev/sdb1"), None, None, None, behind_controller=True).left is None
    assert home_of("/srv/x", None, None, None, None) == Home("/srv/x", words=(
        "its mount is not known yet (the host collector reads the filesystems)"))


def test_an_array_its_plug_in_has_not_read_yet_is_not_known() -> None:
    h = home_of("/srv/x", on("/dev/md0"), None, None, None)
    assert (h.kind, h.left, h.words) == ("md", None, "md array md0, not read yet (the mdraid collector)")
