"""Proxmox VE's API answers read as typed records, without a server: the written fixtures of
tests/fixtures/proxmox/healthy (see its README: from pve-manager's and pve-storage's schemas) and
the edges the schema allows: a template, a shared storage listed per node, a guest without vmid,
flags as 1, "1" or true, a job that excludes or names a pool, a task still running."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collectors.host.proxmox import parse
from collectors.host.proxmox.state import PveBackup, PveGuest, PveReplication
from collectors.proxmoxapi import ApiFormatError

HEALTHY = Path(__file__).resolve().parents[3] / "fixtures" / "proxmox" / "healthy"


def answer(path: str) -> Any:
    return json.loads((HEALTHY / path).read_text())


def test_the_cluster_status_names_the_cluster_its_quorum_and_each_nodes_state() -> None:
    assert parse.parse_cluster_status(answer("cluster/status.json")) == ("homelab", True, {"pve1": True, "pve2": True})


@pytest.mark.parametrize(("items", "expected"), [
    ([{"type": "node", "name": "solo", "online": 1}], (None, None, {"solo": True})),  # a node of no cluster
    ([{"type": "cluster", "name": "c", "quorate": 0}, {"type": "node", "name": "a", "online": "0"}],
     ("c", False, {"a": False})),
    ([{"type": "cluster", "name": None, "quorate": "1"}, {"type": "node", "name": "b"}], ("", True, {"b": False})),
])
def test_the_cluster_status_of_edge_answers(items: list[dict[str, Any]], expected: tuple[Any, ...]) -> None:
    assert parse.parse_cluster_status(items) == expected


def test_resources_are_nodes_guests_without_templates_and_each_shared_storage_once() -> None:
    nodes, guests, storages = parse.parse_resources(answer("cluster/resources.json"))
    assert [(n.name, n.online, n.cores, n.cpu, n.memory_bytes, n.uptime) for n in nodes] == [
        ("pve1", True, 8, 0.0712, 15032385536.0, 1209600.0), ("pve2", True, 4, 0.0305, 6442450944.0, 604800.0)]
    assert [(g.vmid, g.name, g.type, g.node, g.status, g.hastate) for g in guests] == [
        ("100", "home-assistant", "qemu", "pve1", "running", "started"), ("101", "nextcloud", "qemu", "pve1", "running", None),
        ("102", "pihole", "lxc", "pve2", "running", None), ("103", "win11", "qemu", "pve2", "stopped", None),
        ("104", "media", "lxc", "pve1", "running", None)]
    assert [(s.name, s.node, s.type, s.shared, s.active) for s in storages] == [
        ("local", "pve1", "dir", False, True), ("local", "pve2", "dir", False, True),
        ("local-zfs", "pve1", "zfspool", False, True), ("local-zfs", "pve2", "zfspool", False, True),
        ("pbs-store", "pve1", "pbs", True, True)]
    assert storages[0].content == ["backup", "iso", "vztmpl"]
    assert (storages[4].used_bytes, storages[4].total_bytes) == (1288490188800.0, 3865470566400.0)


def test_a_guests_figures_are_read_field_by_field() -> None:
    (_, (g,), _) = parse.parse_resources([{
        "type": "qemu", "vmid": 107, "node": "pve1", "status": "paused", "uptime": 5, "cpu": 0.5, "maxcpu": 2,
        "mem": 10, "maxmem": 20, "netin": 1, "netout": 2, "diskread": 3, "diskwrite": 4, "lock": "backup"}])
    assert g == PveGuest(vmid="107", name="qemu107", type="qemu", node="pve1", status="paused", uptime=5.0, cpu=0.5,
                         cpus=2.0, memory_bytes=10.0, memory_total_bytes=20.0, net_in_bytes=1.0, net_out_bytes=2.0,
                         disk_read_bytes=3.0, disk_write_bytes=4.0, hastate=None, lock="backup")


def test_a_node_offline_a_storage_inactive_and_a_guest_of_unknown_state() -> None:
    nodes, guests, storages = parse.parse_resources([
        {"type": "node", "id": "node/pve3", "status": "offline"},
        {"type": "lxc", "vmid": "9", "template": 0},
        {"type": "storage", "storage": "nfs", "node": "pve3", "status": "unknown", "shared": 1, "content": ""},
        {"type": "storage", "storage": "nfs", "node": "pve4", "status": "available", "shared": 1},
        {"type": "sdn", "sdn": "localnetwork"}])
    assert [(n.name, n.online, n.cores) for n in nodes] == [("pve3", False, None)]
    assert [(g.vmid, g.name, g.status, g.node) for g in guests] == [("9", "lxc9", "unknown", "")]
    assert [(s.name, s.node, s.active, s.content) for s in storages] == [("nfs", "pve3", False, [])]


@pytest.mark.parametrize("template", [1, "1", True, "true", "yes"])
def test_a_template_is_left_out_however_its_flag_is_written(template: object) -> None:
    assert parse.parse_resources([{"type": "qemu", "vmid": 900, "template": template}])[1] == []


def test_a_guest_without_vmid_is_an_error_quoting_it() -> None:
    with pytest.raises(ApiFormatError, match=r"a guest without vmid: \{'type': 'qemu', 'name': 'x'\}"):
        parse.parse_resources([{"type": "qemu", "name": "x"}])


def test_tasks_come_newest_first_and_one_still_running_has_no_end_or_status() -> None:
    tasks = parse.parse_tasks(answer("cluster/tasks.json"))
    assert [(t.type, t.id, t.node, t.start, t.status) for t in tasks] == [
        ("qmstart", "103", "pve2", 1794992800.0, "OK"), ("vzdump", "", "pve1", 1794985600.0, "OK"),
        ("vzdump", "", "pve2", 1794985600.0, "OK"), ("vzdump", "101", "pve1", 1794892000.0, "OK")]
    (running,) = parse.parse_tasks([{"type": "vzdump", "id": "5", "starttime": 10, "user": "u", "node": "n"}])
    assert (running.end, running.status, running.user) == (None, "", "u")


def test_a_task_without_a_start_is_an_error_quoting_it() -> None:
    with pytest.raises(ApiFormatError, match=r"a task without starttime: \{'type': 'vzdump'\}"):
        parse.parse_tasks([{"type": "vzdump"}])


def test_each_guests_newest_backup_on_a_storage_with_its_verification() -> None:
    got = parse.parse_backups(answer("nodes/pve1/storage/pbs-store/content.json"), "pbs-store")
    assert got["100"] == PveBackup(time=1794985660.0, storage="pbs-store", verified="ok", size_bytes=10737418240.0)
    assert sorted(got) == ["100", "101", "102", "104"]


def test_the_newest_of_several_archives_wins_and_other_content_or_foreign_archives_are_left_out() -> None:
    got = parse.parse_backups([
        {"content": "backup", "vmid": 5, "ctime": 100, "size": 1},
        {"content": "backup", "vmid": "5", "ctime": 300, "size": 3, "verification": {"state": "failed"}},
        {"vmid": 5, "ctime": 200},  # no content key: a backup listing's item
        {"content": "iso", "vmid": 6, "ctime": 900},
        {"content": "backup", "ctime": 50},  # a hand-copied archive: no guest
        {"content": "backup", "vmid": 7},
        {"content": "backup", "vmid": 8, "ctime": 10, "verification": "odd"}], "local")
    assert got == {"5": PveBackup(time=300.0, storage="local", verified="failed", size_bytes=3.0),
                   "8": PveBackup(time=10.0, storage="local", verified=None, size_bytes=None)}


def test_a_nodes_replication_jobs_and_one_never_synced() -> None:
    assert parse.parse_replication(answer("nodes/pve1/replication.json"), "pve1") == [
        PveReplication(id="101-0", guest="101", target="pve2", source="pve1", last_sync=1794999400.0, fail_count=0)]
    (never,) = parse.parse_replication([{"id": "9-1", "guest": 9, "target": "b", "last_sync": 0, "fail_count": 3,
                                         "error": "no route"}], "a")
    assert (never.source, never.last_sync, never.fail_count, never.error) == ("a", None, 3, "no route")


def guests(*ids: str) -> list[PveGuest]:
    return [PveGuest(vmid=i, name=f"g{i}", type="qemu", node="n", status="running") for i in ids]


def test_the_healthy_clusters_job_covers_every_guest_but_the_excluded() -> None:
    _, gs, _ = parse.parse_resources(answer("cluster/resources.json"))
    pools = parse.guest_pools(answer("cluster/resources.json"))
    assert pools == {"104": "media"}
    assert parse.backup_covered(answer("cluster/backup.json"), gs, pools) == {"100", "101", "102", "104"}


@pytest.mark.parametrize(("jobs", "covered"), [
    ([{"all": 1, "exclude": "2, 3"}], {"1", "4"}),
    ([{"all": "1", "exclude": "2,x"}], {"1", "3", "4"}),
    ([{"all": 1, "enabled": 0}], set()),
    ([{"all": 1, "enabled": "1"}], {"1", "2", "3", "4"}),
    ([{"vmid": "1, 3,bad"}], {"1", "3"}),
    ([{"pool": "media"}], {"2", "4"}),
    ([{"pool": "media", "exclude": "4"}], {"2"}),
    ([{"vmid": ""}], set()),
])
def test_a_backup_job_covers_all_a_list_or_a_pool(jobs: list[dict[str, Any]], covered: set[str]) -> None:
    assert parse.backup_covered(jobs, guests("1", "2", "3", "4"), {"2": "media", "4": "media", "3": "other"}) == covered


def test_a_guests_pool_needs_a_guest_with_a_vmid_and_a_pool() -> None:
    assert parse.guest_pools([{"type": "qemu", "vmid": 1, "pool": "p"}, {"type": "lxc", "vmid": 2},
                              {"type": "storage", "vmid": 3, "pool": "p"}, {"type": "qemu", "pool": "q"}]) == {"1": "p"}


@pytest.mark.parametrize("bad", [None, {"data": []}, [1, 2], "text"])
def test_an_answer_that_is_not_a_list_of_objects_is_an_error_naming_the_path(bad: object) -> None:
    with pytest.raises(ApiFormatError, match=r"^/cluster/resources: expected a list of objects"):
        parse.parse_resources(bad)


def test_fields_an_answer_leaves_out_read_as_empty_never_as_the_word_none() -> None:
    nodes, _, storages = parse.parse_resources([
        {"type": "node", "id": "node/pve3", "maxmem": 64},  # no "node" key: named by its id
        {"type": "node", "node": "pve4", "id": "node/other"},
        {"type": "node"},
        {"type": "storage"},
        {"type": "storage", "storage": "x", "node": "pve1", "shared": 0},
        {"type": "storage", "storage": "x", "node": "pve2", "shared": 1},  # shared, named as a local one was
        {"type": "storage", "storage": "y", "node": "pve1", "shared": 1},
        {"type": "storage", "storage": "y", "node": "pve2", "shared": 1},
        {"type": "storage", "storage": "z", "node": "pve1"}])
    assert [(n.name, n.memory_total_bytes) for n in nodes] == [("pve3", 64.0), ("pve4", None), ("", None)]
    assert [(s.name, s.node, s.type, s.content) for s in storages] == [
        ("", "", "", []), ("x", "pve1", "", []), ("x", "pve2", "", []), ("y", "pve1", "", []), ("z", "pve1", "", [])]
    (task,) = parse.parse_tasks([{"starttime": 5, "endtime": 9}])
    assert (task.type, task.id, task.node, task.user, task.end) == ("", "", "", "", 9.0)
    (job,) = parse.parse_replication([{}], "pve1")
    assert (job.id, job.guest, job.target, job.source) == ("", "0", "", "pve1")
    (moved,) = parse.parse_replication([{"id": "1-0", "guest": 1, "source": "pve2"}], "pve1")
    assert moved.source == "pve2"


def test_an_archive_listed_without_its_content_key_is_a_backup() -> None:
    assert parse.parse_backups([{"vmid": 5, "ctime": 200}], "pbs") == {"5": PveBackup(time=200.0, storage="pbs")}


@pytest.mark.parametrize(("read", "path"), [
    (parse.parse_cluster_status, "/cluster/status"), (parse.parse_tasks, "/cluster/tasks"),
    (parse.guest_pools, "/cluster/resources"), (lambda bad: parse.parse_backups(bad, "local"), "storage local content"),
    (lambda bad: parse.parse_replication(bad, "pve1"), "/nodes/pve1/replication"),
    (lambda bad: parse.backup_covered(bad, [], {}), "/cluster/backup")])
def test_every_reader_names_the_path_whose_answer_is_not_a_list(read: Any, path: str) -> None:
    with pytest.raises(ApiFormatError, match=f"^{path}: expected a list of objects"):
        read({"data": []})


def test_the_cluster_status_reads_a_node_absent_from_the_answer_as_unknown() -> None:
    assert parse.parse_cluster_status([{"type": "cluster", "quorate": 1}]) == ("", True, {})
