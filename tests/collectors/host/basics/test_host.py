"""Host basics: the /proc parsers over real captures and the formats older kernels wrote, and
the collector over a fixture tree and over this machine's own /proc, across polls."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, NoData, ParseError
from collectors.findings import BAD, WARN, Judging
from collectors.host.basics.collector import HostCollector, statvfs_within
from collectors.host.basics.config import HostConfig
from collectors.host.basics.findings import all_clear, findings
from collectors.host.basics.procfs import (
    Mount,
    busy_ratio,
    memory_available,
    parse_diskstats,
    parse_loadavg,
    parse_meminfo,
    parse_mounts,
    parse_net_dev,
    parse_pressure,
    parse_stat_cpu,
)
from tests.paths import FIXTURES

FIX = FIXTURES / "host"
MACHINE = FIX / "this-machine"


def test_this_machines_proc_files_parse_whole() -> None:
    cpu = parse_stat_cpu((MACHINE / "proc/stat").read_text())
    assert list(cpu) == ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"]
    assert cpu["user"] == 230140 and cpu["idle"] == 537851
    mem = parse_meminfo((MACHINE / "proc/meminfo").read_text())
    assert mem["MemTotal"] == int((MACHINE / "proc/meminfo").read_text().split()[1]) * 1024
    assert memory_available(mem) == mem["MemAvailable"] and "HugePages_Total" in mem
    assert len(parse_loadavg((MACHINE / "proc/loadavg").read_text())) == 3
    mounts = {m.mountpoint: m for m in parse_mounts((MACHINE / "proc/mounts").read_text())}
    assert mounts["/"].fstype == "overlay" or mounts["/"].device.startswith("/dev/")
    assert "/proc" in mounts and mounts["/proc"].fstype == "proc"
    disks = parse_diskstats((MACHINE / "proc/diskstats").read_text())
    assert "loop0" in disks and all(d.read_bytes % 512 == 0 for d in disks.values())
    psi = parse_pressure((MACHINE / "proc/pressure/cpu").read_text())
    assert set(psi) == {"some", "full"} and set(psi["some"]) == {"avg10", "avg60", "avg300", "total"}


@pytest.mark.parametrize(("name", "expected"), [
    ("procfs__proc__net__dev", {"vethf345468": (648, 438, 0, 0), "lo": (1664039048, 1664039048, 0, 0),
                                "docker0": (2568, 438, 0, 0), "eth0": (874354587, 563352563, 0, 0)}),
    ("jc__proc_net_dev", {"lo": (13222, 13222, 0, 0), "ens33": (60600053, 44256546, 0, 0)}),
])
def test_net_dev_captures_give_every_interface_and_its_counters(name: str, expected: dict[str, Any]) -> None:
    got = parse_net_dev((FIX / name).read_text())
    assert {k: (v["rx_bytes"], v["tx_bytes"], v["rx_errs"], v["tx_drop"]) for k, v in got.items()} == expected


@pytest.mark.parametrize(("text", "expected"), [
    # Linux 2.6.11-2.6.23: no guest columns yet; 2.6.0: no steal either.
    ("cpu  100 0 50 800 10 0 5 2\n", {"user": 100, "nice": 0, "system": 50, "idle": 800, "iowait": 10, "irq": 0,
                                     "softirq": 5, "steal": 2}),
    ("cpu  100 1 50 800\ncpu0 100 1 50 800\n", {"user": 100, "nice": 1, "system": 50, "idle": 800}),
])
def test_older_stat_formats_with_fewer_columns_still_parse(text: str, expected: dict[str, int]) -> None:
    assert parse_stat_cpu(text) == expected


@pytest.mark.parametrize(("before", "after", "ratio"), [
    ({"user": 0, "idle": 0}, {"user": 50, "idle": 50}, 0.5),
    ({"user": 0, "idle": 0, "iowait": 0}, {"user": 25, "idle": 50, "iowait": 25}, 0.25),  # waiting is not busy
    ({"user": 0, "idle": 0, "guest": 0}, {"user": 50, "idle": 50, "guest": 50}, 0.5),  # guest is inside user
    ({"user": 10, "idle": 10}, {"user": 10, "idle": 10}, None),  # no time passed
    ({"user": 10, "idle": 10}, {"user": 5, "idle": 5}, None),  # counters went back (a reboot)
])
def test_busy_ratio_is_the_share_not_idle_between_two_readings(before: dict[str, int], after: dict[str, int],
                                                               ratio: float | None) -> None:
    assert busy_ratio(before, after) == ratio


def test_meminfo_before_linux_3_14_estimates_what_is_available() -> None:
    mem = parse_meminfo("MemTotal:  1000 kB\nMemFree:  100 kB\nBuffers:  20 kB\nCached:  300 kB\n")
    assert memory_available(mem) == 420 * 1024
    assert memory_available({}) is None


def test_mount_points_with_spaces_come_back_unescaped_and_the_last_mount_wins() -> None:
    text = ("/dev/sdb1 /mnt/My\\040Disk ext4 rw 0 0\n/dev/md0 /srv ext4 ro,relatime 0 0\n"
            "/dev/md1 /srv xfs rw,noatime 0 0\n")
    assert parse_mounts(text) == [Mount("/dev/sdb1", "/mnt/My Disk", "ext4", ("rw",)),
                                  Mount("/dev/md1", "/srv", "xfs", ("rw", "noatime"))]
    assert Mount("a", "/b", "ext4", ("ro", "relatime")).readonly


@pytest.mark.parametrize("fields", [14, 18, 20])  # before 4.18, with discards, with flushes
def test_diskstats_of_every_kernel_generation_give_bytes_and_busy_time(fields: int) -> None:
    values = [str(v) for v in (8, 0, "sda", 10, 0, 2048, 5, 20, 0, 4096, 9, 0, 1234, 99)]
    values += ["0"] * (fields - 14)
    (d,) = parse_diskstats(" ".join(values) + "\n").values()
    assert (d.read_bytes, d.written_bytes, d.io_ms) == (2048 * 512, 4096 * 512, 1234)


@pytest.mark.parametrize(("parse", "text", "quoted"), [
    (parse_stat_cpu, "intr 1 2 3\n", "no 'cpu' line"),
    (parse_stat_cpu, "cpu  1 x 3\n", "'cpu  1 x 3'"),
    (parse_loadavg, "0.5 0.4\n", "'0.5 0.4'"),
    (parse_meminfo, "MemTotal 1000 kB\n", "'MemTotal 1000 kB'"),
    (parse_meminfo, "MemTotal: many kB\n", "'MemTotal: many kB'"),
    (parse_mounts, "/dev/sda1 /\n", "'/dev/sda1 /'"),
    (parse_net_dev, "h1\nh2\n  eth0: 1 2 3\n", "'  eth0: 1 2 3'"),
    (parse_net_dev, "h1\nh2\n  eth0: " + " ".join(["x"] * 16) + "\n", "eth0"),
    (parse_diskstats, "8 0 sda 1 2 3\n", "'8 0 sda 1 2 3'"),
    (parse_diskstats, "8 0 sda " + " ".join(["y"] * 11) + "\n", "sda"),
    (parse_pressure, "some avg10=x total=1\n", "'some avg10=x total=1'"),
    (parse_pressure, "most avg10=1 total=1\n", "'most avg10=1 total=1'"),
])
def test_a_truncated_or_garbled_file_is_a_parse_error_quoting_the_line(parse: Any, text: str, quoted: str) -> None:
    with pytest.raises(ParseError, match=quoted.replace("(", r"\(").replace(")", r"\)")):
        parse(text)


# -- the collector ---------------------------------------------------------------------

class Tree:
    """A host tree whose files a test rewrites between polls, with sizes for its filesystems."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sizes: dict[str, tuple[int, int, bool]] = {}  # mountpoint -> (size, avail, read-only flag)
        self.clock = 1000.0

    def write(self, path: str, text: str) -> None:
        p = self.root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    def statvfs(self, path: Path, timeout: float) -> os.statvfs_result:
        size, avail, ro = self.sizes["/" + str(path.relative_to(self.root)).strip(".")]
        block = 4096
        return os.statvfs_result((block, block, size // block, avail // block, avail // block, 1000, 400, 400,
                                  os.ST_RDONLY if ro else 0, 255))

    def collector(self, **cfg: Any) -> HostCollector:
        return HostCollector(self.root, HostConfig(**cfg), statvfs=self.statvfs, clock=lambda: self.clock)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    t = Tree(tmp_path)
    shutil.copytree(MACHINE / "proc", tmp_path / "proc")
    t.write("/proc/mounts", "/dev/md0 /srv ext4 rw 0 0\n/dev/sda1 /boot/efi vfat ro 0 0\n"
            "tmpfs /run tmpfs rw 0 0\nproc /proc proc rw 0 0\n/dev/sdc1 /mnt/nas nfs4 rw 0 0\n")
    t.sizes = {"/srv": (1000 * 4096 * 1000, 400 * 4096 * 1000, False), "/boot/efi": (4096 * 100, 4096 * 50, True),
               "/mnt/nas": (4096 * 10, 4096 * 5, False)}
    t.write("/proc/diskstats", "8 0 sda 10 0 2048 5 20 0 4096 9 0 1000 99\n8 1 sda1 1 0 8 1 1 0 8 1 0 1 1\n")
    t.write("/sys/class/net/eth0/operstate", "up\n")
    t.write("/sys/class/net/eth0/speed", "1000\n")
    return t


def metrics(result: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.metric, s.labels): s.value for s in result.samples}


def test_a_host_without_proc_stat_is_a_source_absent_not_a_failure(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="proc/stat absent"):
        HostCollector(tmp_path).collect()


def test_the_collector_gives_the_metrics_the_dashboards_and_rules_read(tree: Tree) -> None:
    c = tree.collector(expect_readonly=["/boot/efi"])
    first = c.collect()
    tree.write("/proc/stat", "cpu  1000 0 500 8500 0 0 0 0 0 0\n")
    tree.write("/proc/diskstats", "8 0 sda 10 0 4096 5 20 0 8192 9 0 1750 99\n")
    tree.clock += 1.5
    c.collect()
    tree.write("/proc/stat", "cpu  1300 0 600 8600 0 0 0 0 0 0\n")
    tree.write("/proc/diskstats", "8 0 sda 10 0 4096 5 20 0 8192 9 0 2500 99\n")
    tree.clock += 1.5
    r = c.collect()
    m = metrics(r)
    srv = (("device", "/dev/md0"), ("fstype", "ext4"), ("mountpoint", "/srv"))
    assert m[("rackpulse_cpu_busy_ratio", ())] == 0.8  # 400 of 500 ticks not idle
    assert m[("rackpulse_blockdev_busy_ratio", (("device", "sda"),))] == 0.5  # 750 ms busy in 1.5 s
    assert ("rackpulse_blockdev_busy_ratio", ()) not in metrics(first)
    assert m[("rackpulse_filesystem_size_bytes", srv)] == 4096 * 1000 * 1000
    assert m[("rackpulse_filesystem_avail_bytes", srv)] == 4096 * 400 * 1000
    assert m[("rackpulse_filesystem_readonly", (("device", "/dev/sda1"), ("fstype", "vfat"),
                                                 ("mountpoint", "/boot/efi")))] == 1
    assert m[("rackpulse_network_speed_bytes", (("interface", "eth0"),))] == 125_000_000
    assert {k[0] for k in m} >= {"rackpulse_load", "rackpulse_memory_total_bytes", "rackpulse_memory_available_bytes",
                                 "rackpulse_network_receive_bytes_total", "rackpulse_network_transmit_bytes_total",
                                 "rackpulse_network_transmit_drops_total", "rackpulse_pressure_ratio",
                                 "rackpulse_cpu_seconds_total", "rackpulse_swap_used_bytes"}
    assert set(c.metrics) >= {k[0] for k in m}
    # Pseudo filesystems and partitions are left out; lo is not an interface people watch.
    assert [f.mountpoint for f in r.state.filesystems] == ["/srv", "/boot/efi", "/mnt/nas"]
    assert [d.name for d in r.state.blockdevs] == ["sda"]
    assert "lo" not in [i.name for i in r.state.interfaces]
    assert findings(r.state, Judging(host="nas")) == []  # /boot/efi is read-only on purpose


def test_a_filesystem_filling_fast_is_found_before_it_is_full(tree: Tree) -> None:
    c = tree.collector()
    for minute in range(0, 31, 5):  # 2 GB free of 4 GB, losing 20 MB a minute: 1.4 GB left, 1.2 GB an hour
        tree.sizes["/srv"] = (4096 * 1_000_000, 2_000_000_000 - minute * 20_000_000, False)
        r = c.collect()
        tree.clock += 300
    srv = r.state.filesystems[0]
    assert 1.1 < srv.hours_to_full < 1.2 and srv.used_ratio < 0.9
    (f,) = [f for f in findings(r.state, Judging()) if f.rule == "filesystem_full"]
    assert f.text.startswith("/srv full within 1 h at the current rate (1.4 GB free)") and f.level == WARN


@pytest.mark.parametrize(("avail_share", "level"), [(0.11, None), (0.10, WARN), (0.05, WARN), (0.01, BAD)])
def test_a_filesystem_is_full_at_ninety_percent_and_failing_near_the_end(tree: Tree, avail_share: float,
                                                                        level: str | None) -> None:
    size = 4096 * 1_000_000
    tree.sizes["/srv"] = (size, int(size * avail_share), False)
    r = tree.collector().collect()
    got = [f.level for f in findings(r.state, Judging()) if f.rule == "filesystem_full"]
    assert got == ([level] if level else [])


def test_a_filesystem_remounted_read_only_is_critical_and_says_what_to_do(tree: Tree) -> None:
    tree.sizes["/srv"] = (*tree.sizes["/srv"][:2], True)  # the kernel's errors=remount-ro
    r = tree.collector(expect_readonly=["/boot/efi"]).collect()
    (f,) = findings(r.state, Judging())
    assert (f.rule, f.level, f.subject) == ("filesystem_readonly", BAD, "/srv")
    assert "expect_readonly" in f.text


def test_memory_low_uses_the_configured_share(tree: Tree) -> None:
    tree.write("/proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 90000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n")
    assert [f.rule for f in findings(tree.collector(expect_readonly=["/boot/efi"]).collect().state, Judging())] == [
        "memory_low"]
    assert findings(tree.collector(expect_readonly=["/boot/efi"], memory_low_ratio=0.05).collect().state,
                    Judging()) == []


def test_interface_errors_are_found_when_they_keep_coming(tree: Tree) -> None:
    c = tree.collector(expect_readonly=["/boot/efi"])
    judging = Judging(now=0.0)
    header = "h1\nh2\n"
    for minute, errs in ((0, 0), (10, 4), (20, 12)):
        tree.write("/proc/net/dev", header + f"  eth0: 1 1 {errs} 0 0 0 0 0 1 1 0 0 0 0 0 0\n")
        judging.now = minute * 60.0
        found = findings(c.collect().state, judging)
    assert [(f.rule, f.text) for f in found] == [("interface_errors", "interface eth0: 12 errors in the last hour")]


def test_one_broken_file_is_a_warning_and_the_rest_is_still_read(tree: Tree) -> None:
    tree.write("/proc/diskstats", "8 0 sda 1 2\n")
    r = tree.collector().collect()
    assert r.warnings == ["blockdevs: /proc/diskstats: expected at least 14 fields in '8 0 sda 1 2'"]
    assert r.state.blockdevs == [] and r.state.memory.total


def test_a_hung_network_mount_costs_its_timeout_and_not_the_other_filesystems(tree: Tree) -> None:
    release = threading.Event()

    def statvfs(path: Path, timeout: float) -> os.statvfs_result:
        if path.name == "nas":  # an NFS server that went away: statvfs blocks in the kernel
            return statvfs_within(path, timeout, stat=lambda p: release.wait(30) and os.statvfs(p))
        return tree.statvfs(path, timeout)

    c = HostCollector(tree.root, HostConfig(command_timeout=0.3), statvfs=statvfs)
    started = time.monotonic()
    r = c.collect()
    release.set()
    assert time.monotonic() - started < 5
    nas = [f for f in r.state.filesystems if f.mountpoint == "/mnt/nas"][0]
    assert nas.error.endswith("statvfs did not answer within 0.3s")
    assert [f.mountpoint for f in r.state.filesystems if f.size is not None] == ["/srv", "/boot/efi"]
    assert any("did not answer" in w for w in r.warnings)


def test_statvfs_errors_are_collector_errors(tmp_path: Path) -> None:
    with pytest.raises(CollectorError, match="No such file"):
        statvfs_within(tmp_path / "gone", 1.0)


def test_this_machines_own_proc_is_read_across_two_polls() -> None:
    c = HostCollector(Path("/"))
    c.collect()
    time.sleep(0.2)
    r = c.collect()
    assert r.state.cpu.cores >= 1 and r.state.memory.total > 0
    assert r.state.cpu.busy_ratio is None or 0 <= r.state.cpu.busy_ratio <= 1
    assert all(f.mountpoint.startswith("/") for f in r.state.filesystems)
    assert all_clear(r.state, Judging()) is not None


def test_the_hottest_hwmon_temperatures_are_on_the_host_state_and_tile(tree: Tree) -> None:
    from collectors.host.basics.findings import all_clear

    tree.write("/sys/class/hwmon/hwmon0/name", "k10temp\n")
    tree.write("/sys/class/hwmon/hwmon0/temp1_input", "52125\n")
    tree.write("/sys/class/hwmon/hwmon0/temp1_label", "Tctl\n")
    tree.write("/sys/class/hwmon/hwmon0/temp1_max", "70000\n")
    tree.write("/sys/class/hwmon/hwmon1/name", "nvme\n")
    tree.write("/sys/class/hwmon/hwmon1/temp1_input", "38850\n")
    tree.write("/sys/class/hwmon/hwmon1/temp1_crit", "84850\n")
    tree.write("/sys/class/hwmon/hwmon1/in0_input", "1200\n")  # a voltage: not a temperature
    state = tree.collector().collect().state
    assert [t.model_dump() for t in state.temperatures] == [
        {"chip": "k10temp", "sensor": "Tctl", "celsius": 52.1, "max": 70.0, "crit": None},
        {"chip": "nvme", "sensor": "temp1", "celsius": 38.9, "max": None, "crit": 84.9}]
    assert (all_clear(state, Judging()) or "").endswith("hottest k10temp Tctl 52.1 °C")


def test_a_host_without_hwmon_has_no_temperatures_and_no_warning(tree: Tree) -> None:
    result = tree.collector().collect()
    assert result.state.temperatures == [] and not any("temperatures" in w for w in result.warnings)


def test_cpu_counters_that_went_back_are_a_restart_not_a_busy_cpu() -> None:
    from collectors.host.basics.procfs import busy_ratio

    before = {"user": 5000, "system": 3000, "idle": 90000, "iowait": 100}
    assert busy_ratio(before, {"user": 5100, "system": 3100, "idle": 90800, "iowait": 100}) == pytest.approx(0.2)
    assert busy_ratio(before, {"user": 10, "system": 5, "idle": 200, "iowait": 0}) is None


def test_the_demo_hosts_cpu_and_load_tell_the_same_story(tmp_path: Path) -> None:
    from collectors.host.basics.demo import write_scene

    clock = [0.0]
    c = HostCollector(tmp_path, clock=lambda: clock[0])
    seen = {}
    for t in (90.0, 100.0, 150.0, 160.0):  # quiet, then md0 rebuilding
        write_scene(tmp_path, t)
        clock[0] = t
        seen[t] = c.collect().state
    quiet, busy = seen[100.0], seen[160.0]
    assert quiet.cpu.busy_ratio is not None and quiet.cpu.busy_ratio < 0.15 and quiet.load["1m"] < 0.5
    assert busy.cpu.busy_ratio == pytest.approx(0.55) and 1.0 < busy.load["1m"] < 2.0
    assert (all_clear(busy, Judging()) or "").startswith("CPU 55% busy, load 1.60")
