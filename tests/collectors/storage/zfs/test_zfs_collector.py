"""The ZFS collector over real zpool captures: which disk and bay each device is, what the
pool reports, and every way zpool can fail to answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData, ParseError
from collectors.findings import Judging
from collectors.location import BayRule
from collectors.storage.zfs import findings
from collectors.storage.zfs.collector import ZfsCollector
from collectors.storage.zfs.zpool_text import LIST_COLUMNS
from tests.collectors.storage_helpers import fixture, host_tree, runner

STATUS = "status -p"
JSON = "status -p -j --json-int"
LIST = "list -Hp -o " + ",".join(LIST_COLUMNS)
NO_JSON = (2, b"", b"invalid option 'j'\nusage:\n\tstatus [-c [script1,script2,...]] ...\n")
TOSHIBA = {"ata-TOSHIBA_MG09ACA18TE_82X0A0QMFJDH": "sda", "ata-TOSHIBA_MG09ACA18TE_82J0A00FFJDH": "sdb",
           "ata-TOSHIBA_MG09ACA18TE_82X0A0QPFJDH": "sdc"}
PORTS = {"pci-0000:03:00.0-sas-phy0-lun-0": "sda", "pci-0000:03:00.0-sas-phy1-lun-0": "sdb",
         "pci-0000:03:00.0-sas-phy2-lun-0": "sdc"}
BAYS = [BayRule(f"shelf 1, bay {i}", path=f"pci-0000:03:00.0-sas-phy{i}-lun-0") for i in range(3)]


def collector(tmp_path: Path, answers: dict, **kw) -> ZfsCollector:  # type: ignore[no-untyped-def,type-arg]
    host_tree(tmp_path, TOSHIBA, PORTS)
    return ZfsCollector(tmp_path, bays=BAYS, runner=runner(answers), **kw)


def test_each_device_of_a_raidz_has_its_serial_and_the_bay_of_its_controller_port(tmp_path: Path) -> None:
    c = collector(tmp_path, {JSON: NO_JSON, STATUS: (0, fixture("zpool", "node-exporter-textfile-collector-scripts__"
                                                                          "zpool_status_-p"), b""),
                             LIST: (0, b"pool0\t53687091200000\t1647130456064\t52039960743936\t3\t3\t1.00\tONLINE\n"
                                       b"pool1\t496000000000\t1\t0\t-\t0\t1.00\tONLINE\n", b"")})
    res = c.collect()
    pool0 = res.state.pools[0]
    disks = [(v.serial, v.bay) for v in pool0.vdevs if v.leaf]
    assert disks == [("82X0A0QMFJDH", "shelf 1, bay 0"), ("82J0A00FFJDH", "shelf 1, bay 1"),
                     ("82X0A0QPFJDH", "shelf 1, bay 2")]
    assert pool0.size == 53687091200000 and pool0.fragmentation == 0.03
    metrics = {(s.metric, dict(s.labels).get("state")): s.value for s in res.samples
               if dict(s.labels).get("pool") == "pool0"}
    assert metrics[("rackpulse_zfs_pool_state", "ONLINE")] == 1 and metrics[("rackpulse_zfs_pool_state", "DEGRADED")] == 0
    assert metrics[("rackpulse_zfs_scan_completed_ratio", None)] == 1.0
    # the NVMe mirror's partitions name their disks too, though none is on this host
    pool1 = res.state.pools[1]
    assert [v.serial for v in pool1.vdevs if v.leaf] == ["S64DNL0T824602E", "S64DNL0T824555Z"]


def test_zpool_without_json_is_asked_once_and_then_only_for_the_text(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    c = ZfsCollector(tmp_path, runner=runner({JSON: NO_JSON, STATUS: (0, b"no pools available\n", b""),
                                              LIST: (0, b"no pools available\n", b"")}, calls))
    c.collect()
    c.collect()
    asked = [" ".join(a[1:]) for a in calls]
    assert asked.count(JSON) == 1 and asked.count(STATUS) == 2


def test_zpool_status_json_is_read_where_zpool_has_it(tmp_path: Path) -> None:
    c = collector(tmp_path, {JSON: (0, fixture("zpool", "status-j-healthy-raidz.json"), b""), LIST: (0, b"", b"")})
    pool = c.collect().state.pools[0]
    leaves = [(v.serial, v.group, v.bay, v.checksum_errors) for v in pool.vdevs if v.leaf]
    assert leaves == [("82X0A0QMFJDH", "data", "shelf 1, bay 0", 0), ("82J0A00FFJDH", "data", "shelf 1, bay 1", 2),
                      ("82X0A0QPFJDH", "data", "shelf 1, bay 2", 0), ("S64DNL0T824602E", "logs", None, 0),
                      (None, "spares", None, 0)]
    # checksum errors that stand are shown, not alerted until they rise
    assert [f.rule for f in findings.pool_findings(pool, Judging())] == [None]


def test_a_device_zfs_can_no_longer_open_is_named_by_its_was_path_and_remembered(tmp_path: Path) -> None:
    status = fixture("zpool", "node-exporter-textfile-collector-scripts__zpool_status_-p_logs")
    c = collector(tmp_path, {JSON: NO_JSON, STATUS: (0, status, b""), LIST: (0, b"", b"")})
    pool = c.collect().state.pools[0]
    gone = next(v for v in pool.vdevs if v.state == "UNAVAIL")
    assert gone.name == "9669136929555758172" and gone.path == "/dev/dsk/c0t5000C5006349E003d0s0"
    (finding,) = [f for f in findings.pool_findings(pool, Judging()) if f.rule == "zfs_pool_degraded"]
    # nothing known of it but zpool's guid and the path it had: said as such, no "bay unknown, model unknown"
    assert finding.text.startswith("ZFS pool zones degraded: 9669136929555758172 unavailable "
                                   "(was /dev/dsk/c0t5000C5006349E003d0s0)")


def test_a_pulled_disk_keeps_its_serial_and_bay_after_a_restart(tmp_path: Path) -> None:
    healthy = b"""  pool: tank
 state: ONLINE
config:

\tNAME        STATE     READ WRITE CKSUM
\ttank        ONLINE       0     0     0
\t  mirror-0  ONLINE       0     0     0
\t    sda     ONLINE       0     0     0
\t    sdb     ONLINE       0     0     0

errors: No known data errors
"""
    pulled = healthy.replace(b"ONLINE       0     0     0\n\t    sdb     ONLINE", b"ONLINE       0     0     0\n\t"
                             b"    sdb     REMOVED").replace(b" state: ONLINE", b" state: DEGRADED")
    first = collector(tmp_path, {JSON: NO_JSON, STATUS: (0, healthy, b""), LIST: (0, b"", b"")})
    state = first.collect().state
    # rackpulse restarts while sdb is out of the machine: its by-id link is gone too
    (tmp_path / "dev/disk/by-id/ata-TOSHIBA_MG09ACA18TE_82J0A00FFJDH").unlink()
    (tmp_path / "dev/disk/by-path/pci-0000:03:00.0-sas-phy1-lun-0").unlink()
    again = ZfsCollector(tmp_path, bays=BAYS, runner=runner({JSON: NO_JSON, STATUS: (0, pulled, b""),
                                                              LIST: (0, b"", b"")}))
    again.restore(state)
    pool = again.collect().state.pools[0]
    sdb = next(v for v in pool.vdevs if v.name == "sdb")
    assert (sdb.state, sdb.serial, sdb.bay) == ("REMOVED", "82J0A00FFJDH", "shelf 1, bay 1")


def test_no_zpool_command_means_zfs_is_not_used_here(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="not installed"):
        ZfsCollector(tmp_path, runner=runner({})).collect()


def test_zfs_module_not_loaded_is_no_data_too(tmp_path: Path) -> None:
    msg = (1, b"", b"The ZFS modules are not loaded.\nTry running '/sbin/modprobe zfs' as root to load them.\n")
    with pytest.raises(NoData, match="ZFS not loaded"):
        ZfsCollector(tmp_path, runner=runner({JSON: msg, STATUS: msg, LIST: msg})).collect()


def test_a_hung_zpool_is_an_error_that_names_the_command(tmp_path: Path) -> None:
    hung = CollectorError("command timed out after 10s: zpool status -p")
    with pytest.raises(CollectorError, match="timed out"):
        ZfsCollector(tmp_path, fmt="text", runner=runner({STATUS: hung, LIST: (0, b"", b"")})).collect()


def test_truncated_status_output_is_a_parse_error_quoting_the_line(tmp_path: Path) -> None:
    text = fixture("zpool", "jc__zpool-status-v2.out")
    cut = text[:text.index(b"c1t1d0  UNAVAIL") + 8]  # "c1t1d0  " and no state
    with pytest.raises(ParseError, match="c1t1d0"):
        ZfsCollector(tmp_path, fmt="text", runner=runner({STATUS: (0, cut, b""), LIST: (0, b"", b"")})).collect()


def test_zpool_list_failing_still_gives_the_pools_health_with_a_warning(tmp_path: Path) -> None:
    status = fixture("zpool", "jc__zpool-status-v4.out")
    res = ZfsCollector(tmp_path, fmt="text", runner=runner({STATUS: (0, status, b""),
                                                            LIST: (1, b"", b"cannot open 'x'\n")})).collect()
    assert res.state.pools[0].state == "ONLINE" and res.state.pools[0].size is None
    assert res.warnings == ["zpool list: cannot open 'x'"]


def test_json_that_is_not_zpools_is_an_error_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="pools"):
        ZfsCollector(tmp_path, runner=runner({JSON: (0, b'{"output_version": {}}', b""),
                                              LIST: (0, b"", b"")})).collect()
