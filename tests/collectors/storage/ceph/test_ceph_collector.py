"""The Ceph collector over real `ceph -f json` captures: health checks in Ceph's words, OSDs
up/in per host with the disk behind each, PGs by state, and what a host that is no client says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData, ParseError
from collectors.location import BayRule
from collectors.storage.ceph import findings
from collectors.storage.ceph.collector import CephCollector
from tests.collectors.storage_helpers import fixture, host_tree, runner

STATUS = "--connect-timeout 10 status -f json"
TREE = "--connect-timeout 10 osd tree -f json"
META = "--connect-timeout 10 osd metadata -f json"
WARN = {"health": {"status": "HEALTH_WARN", "checks": {
    "OSD_DOWN": {"severity": "HEALTH_WARN", "summary": {"message": "1 osds down", "count": 1}, "muted": False},
    "PG_DEGRADED": {"severity": "HEALTH_WARN", "summary": {"message": "Degraded data redundancy: 90/270 objects "
                                                                      "degraded (33.333%), 32 pgs degraded",
                                                           "count": 32}, "muted": False}}},
    "osdmap": {"num_osds": 6, "num_up_osds": 5, "num_in_osds": 6},
    "pgmap": {"pgs_by_state": [{"state_name": "active+undersized+degraded", "count": 32},
                               {"state_name": "active+clean", "count": 64}], "num_pgs": 96}}
META_JSON = json.dumps([{"id": 4, "hostname": "localhost", "devices": "sdc",
                         "device_ids": "sdc=ATA_ST4000DM004-2CV104_ZFN0KLY2"}]).encode()


def test_a_healthy_cluster_from_a_real_capture(tmp_path: Path) -> None:
    res = CephCollector(tmp_path, runner=runner({
        STATUS: (0, fixture("ceph", "telegraf__ceph_status__pacific_HEALTH_OK.json"), b""),
        TREE: (0, fixture("ceph", "insights-core__ceph_osd_tree__osd4-down.json"), b""), META: (0, b"[]", b"")})
                        ).collect()
    c = res.state.clusters[0]
    assert (c.health, c.num_osds, c.pgs_by_state["active+backfilling"]) == ("HEALTH_OK", 24, 5)
    pgs = {dict(s.labels)["state"]: s.value for s in res.samples if s.metric == "rackpulse_ceph_pgs"}
    assert pgs == {"active+clean": 2560, "active+scrubbing": 10, "active+backfilling": 5}
    # the tree is another cluster's capture: osd.4 is down there
    assert [o.name for o in c.osds if not o.up] == ["osd.4"]


def test_an_osd_down_names_its_host_disk_and_bay_and_cephs_own_check_is_not_repeated(tmp_path: Path) -> None:
    host_tree(tmp_path, {"ata-ST4000DM004-2CV104_ZFN0KLY2": "sdc"}, {"pci-0000:00:17.0-ata-3": "sdc"})
    c = CephCollector(tmp_path, host="localhost", bays=[BayRule("front bay 3", path="pci-0000:00:17.0-ata-3")],
                      runner=runner({STATUS: (0, json.dumps(WARN).encode(), b""),
                                     TREE: (0, fixture("ceph", "insights-core__ceph_osd_tree__osd4-down.json"), b""),
                                     META: (0, META_JSON, b"")})).collect().state.clusters[0]
    texts = [(f.rule, f.text) for f in findings.cluster_findings(c)]
    assert texts == [
        ("ceph_health_warn", "Ceph health warning: Degraded data redundancy: 90/270 objects degraded (33.333%), 32 pgs "
                             "degraded"),
        ("ceph_osd_down", "Ceph osd.4 down on localhost (front bay 3, ST4000DM004-2CV104 serial ZFN0KLY2)")]


def test_a_jewel_cluster_says_its_health_the_old_way(tmp_path: Path) -> None:
    old = {"health": {}, "overall_status": "HEALTH_WARN",
           "summary": [{"severity": "HEALTH_WARN", "summary": "too many PGs per OSD (352 > max 300)"}]}
    c = CephCollector(tmp_path, runner=runner({STATUS: (0, json.dumps(old).encode(), b""),
                                               TREE: (0, b'{"nodes": [], "stray": []}', b"")})).collect()
    (f,) = findings.cluster_findings(c.state.clusters[0])
    assert (f.rule, f.text) == ("ceph_health_warn", "Ceph health warning: too many PGs per OSD (352 > max 300)")


def test_a_host_that_is_no_ceph_client_reports_no_data(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="not installed"):
        CephCollector(tmp_path, runner=runner({})).collect()
    said = b"Error initializing cluster client: ObjectNotFound('RADOS object not found (error calling conf_read_file)')\n"
    with pytest.raises(NoData, match="not a Ceph client"):
        CephCollector(tmp_path, runner=runner({STATUS: (1, b"", said)})).collect()


def test_unreachable_monitors_are_an_error_in_cephs_words(tmp_path: Path) -> None:
    said = b"[errno 110] RADOS timed out (error connecting to the cluster)\n"
    with pytest.raises(CollectorError, match="RADOS timed out"):
        CephCollector(tmp_path, runner=runner({STATUS: (1, b"", said)})).collect()


def test_the_osd_tree_failing_keeps_the_health_and_warns(tmp_path: Path) -> None:
    res = CephCollector(tmp_path, runner=runner({STATUS: (0, json.dumps(WARN).encode(), b""),
                                                 TREE: (1, b"", b"Error EACCES: access denied\n")})).collect()
    c = res.state.clusters[0]
    assert c.health == "HEALTH_WARN" and c.osds == [] and not c.osd_tree
    assert res.warnings == ["OSD tree unknown: ceph osd tree: Error EACCES: access denied"]
    # without the tree, Ceph's own OSD_DOWN check is what says an OSD is down
    assert "Ceph health warning: 1 osds down" in [f.text for f in findings.cluster_findings(c)]


def test_status_that_is_not_json_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="not JSON"):
        CephCollector(tmp_path, runner=runner({STATUS: (0, b'{"health": {"status": "HEALTH_', b"")})).collect()


def test_osd_metadata_is_asked_again_only_when_the_osds_change(tmp_path: Path) -> None:
    tree = json.loads(fixture("ceph", "insights-core__ceph_osd_tree__osd4-down.json"))
    answers = {STATUS: (0, json.dumps(WARN).encode(), b""), TREE: (0, json.dumps(tree).encode(), b""),
               META: (0, META_JSON, b"")}
    calls: list[list[str]] = []
    c = CephCollector(tmp_path, runner=runner(answers, calls))
    c.collect()
    c.collect()
    tree["nodes"].append({"id": 6, "name": "osd.6", "type": "osd", "status": "up", "reweight": 1.0})
    answers[TREE] = (0, json.dumps(tree).encode(), b"")
    c.collect()
    assert [" ".join(a[1:]) for a in calls].count(META) == 2
