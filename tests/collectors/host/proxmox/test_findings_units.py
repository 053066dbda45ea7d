"""What is wrong on a Proxmox VE cluster, finding by finding, with the exact words, rule, subject
and labels: a guest that should run and does not (and why it should), a backup failed, failed
verification, missing or too old, quorum lost, a node away, a storage filling, a replication
failing, a token refused; and the tile's sentence."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.findings import BAD, WARN, Judging
from collectors.host.proxmox.findings import DEFAULT_MAX_AGE, all_clear, findings, guest_findings, max_age
from collectors.host.proxmox.state import (
    ProxmoxState,
    PveBackup,
    PveGuest,
    PveNode,
    PveReplication,
    PveStorage,
    PveTask,
)

NOW = 1_800_000_000.0
H = 3600.0


def guest(**change: Any) -> PveGuest:
    return PveGuest(**{"vmid": "101", "name": "nextcloud", "type": "qemu", "node": "pve1", "status": "running",
                       **change})


def words(found: list[Any]) -> list[tuple[str, str, str | None, str]]:
    return [(f.level, f.text, f.rule, f.subject) for f in found]


@pytest.mark.parametrize(("change", "why"), [
    ({"onboot": True}, "set to start at boot"),
    ({"hastate": "started"}, "an HA resource that should be started"),
    ({}, "watched"),
])
def test_a_guest_that_should_run_and_does_not_says_why_it_should(change: dict[str, Any], why: str) -> None:
    g = guest(status="stopped", expected=True, **change)
    assert words(guest_findings(g, NOW, DEFAULT_MAX_AGE)) == [
        (BAD, f"VM 101 (nextcloud) on pve1 is stopped; it is {why}", "pve_guest_down", "101")]
    assert guest_findings(g, NOW, DEFAULT_MAX_AGE)[0].labels == {"vmid": "101", "guest": "nextcloud", "node": "pve1"}


def test_a_stopped_guest_nobody_expects_running_is_fine_and_one_in_ha_error_is_said() -> None:
    assert guest_findings(guest(status="stopped"), NOW, DEFAULT_MAX_AGE) == []
    assert guest_findings(guest(expected=True), NOW, DEFAULT_MAX_AGE) == []
    assert words(guest_findings(guest(type="lxc", hastate="error"), NOW, DEFAULT_MAX_AGE)) == [
        (BAD, "CT 101 (nextcloud) on pve1: the HA manager put it in the error state", None, "")]


def test_a_failed_backup_says_when_and_how_old_the_last_good_one_is() -> None:
    g = guest(backup_failed="job errors", backup_failed_at=NOW - 2 * H, backup_expected=True,
              backup=PveBackup(time=NOW - 5 * H, storage="local"))
    (f,) = guest_findings(g, NOW, DEFAULT_MAX_AGE)
    assert (f.level, f.text, f.rule, f.subject) == (
        BAD, "VM 101 (nextcloud): its backup 2 h ago failed (job errors); its last good backup is 5 h old",
        "pve_backup_failed", "101")
    assert f.labels == {"vmid": "101", "guest": "nextcloud", "node": "pve1", "source": "backups"}


def test_a_failed_backup_of_a_guest_with_none_says_so_and_its_missing_backup_too() -> None:
    g = guest(backup_failed="job errors", backup_failed_at=NOW - 2 * H, backup_expected=True)
    assert words(guest_findings(g, NOW, DEFAULT_MAX_AGE)) == [
        (BAD, "VM 101 (nextcloud): its backup 2 h ago failed (job errors); it has no backup", "pve_backup_failed", "101"),
        (WARN, "VM 101 (nextcloud) on pve1 has no backup on any storage the token may read", "pve_backup_stale", "101")]
    timeless = guest(backup_failed="x", backup_failed_at=NOW - H, backup=PveBackup(time=None, storage="s"))
    assert words(guest_findings(timeless, NOW, DEFAULT_MAX_AGE))[0][1] == "VM 101 (nextcloud): its backup 1 h ago failed (x)"
    assert guest_findings(guest(backup_failed="x"), NOW, DEFAULT_MAX_AGE) == []  # no time: not judged


def test_a_backup_that_failed_verification_names_its_age_and_storage() -> None:
    g = guest(backup=PveBackup(time=NOW - 3 * H, storage="pbs-store", verified="failed"))
    assert words(guest_findings(g, NOW, DEFAULT_MAX_AGE)) == [
        (BAD, "VM 101 (nextcloud): its newest backup (3 h old, on pbs-store) failed verification", "pve_backup_failed",
         "101")]
    g = guest(backup=PveBackup(time=None, storage="pbs-store", verified="failed"))
    assert words(guest_findings(g, NOW, DEFAULT_MAX_AGE))[0][1] == \
        "VM 101 (nextcloud): its newest backup (on pbs-store) failed verification"


def test_a_backup_older_than_max_age_is_stale_and_one_exactly_that_old_is_not() -> None:
    old = guest(backup_expected=True, backup=PveBackup(time=NOW - 30 * H, storage="local"))
    assert words(guest_findings(old, NOW, DEFAULT_MAX_AGE)) == [
        (WARN, "VM 101 (nextcloud) on pve1: its newest backup is 30 h old (on local), older than 26 h", "pve_backup_stale",
         "101")]
    edge = guest(backup_expected=True, backup=PveBackup(time=NOW - 26 * H, storage="local"))
    assert guest_findings(edge, NOW, DEFAULT_MAX_AGE) == []
    assert guest_findings(old, NOW, 31 * H) == []
    unexpected = guest(backup=PveBackup(time=NOW - 300 * H, storage="local"))
    assert guest_findings(unexpected, NOW, DEFAULT_MAX_AGE) == []  # no job covers it: its age is not judged


def test_max_age_is_the_configured_one_or_26_hours() -> None:
    assert max_age(ProxmoxState()) == DEFAULT_MAX_AGE == 26 * H
    assert max_age(ProxmoxState(backup_max_age=7200.0)) == 7200.0


def test_the_clusters_findings_name_quorum_nodes_jobs_storages_replication_and_the_token() -> None:
    s = ProxmoxState(
        cluster="homelab", quorate=False, denied=["the token x lacks Datastore.Audit on /storage, so y cannot be read"],
        nodes=[PveNode(name="pve1", online=True), PveNode(name="pve2", online=False)],
        backup_job_failures=[PveTask(type="vzdump", id="", node="pve2", user="root@pam", start=NOW - 3 * H,
                                     end=NOW - 2 * H, status="job errors"),
                             PveTask(type="vzdump", id="", node="pve3", user="root@pam", status="x")],
        storages=[PveStorage(name="local", node="pve1", total_bytes=100.0, used_bytes=90.0),
                  PveStorage(name="nfs", node="pve1", shared=True, total_bytes=100.0, used_bytes=96.0),
                  PveStorage(name="tiny", node="pve1", total_bytes=100.0, used_bytes=84.9),
                  PveStorage(name="none", node="pve1")],
        replication=[PveReplication(id="101-0", guest="101", target="pve2", fail_count=1),
                     PveReplication(id="102-0", guest="102", target="pve2", fail_count=3, error="no route"),
                     PveReplication(id="103-0", guest="103", target="pve2", fail_count=None, error="odd"),
                     PveReplication(id="104-0", guest="104", target="pve2")])
    found = findings(s, Judging(now=NOW))
    assert words(found) == [
        (WARN, "Proxmox VE: the token x lacks Datastore.Audit on /storage, so y cannot be read", "pve_token_denied",
         "the token x lacks Datastore.Audit on /storage"),
        (BAD, "cluster homelab has lost quorum: its nodes cannot start, stop or change guests", "pve_quorum_lost",
         "homelab"),
        (BAD, "Proxmox node pve2 is offline", "pve_node_offline", "pve2"),
        (BAD, "the backup job on node pve2 3 h ago failed (job errors)", "pve_backup_failed", "job on pve2"),
        (BAD, "the backup job on node pve3 failed (x)", "pve_backup_failed", "job on pve3"),
        (WARN, "storage local (on pve1) is 90% full", "pve_storage_full", "local"),
        (BAD, "storage nfs (shared) is 96% full", "pve_storage_full", "nfs"),
        (WARN, "replication 101-0 of guest 101 to pve2 failed 1 time", "pve_replication_failed", "101-0"),
        (WARN, "replication 102-0 of guest 102 to pve2 failed 3 times: no route", "pve_replication_failed", "102-0"),
        (WARN, "replication 103-0 of guest 103 to pve2 failed: odd", "pve_replication_failed", "103-0")]
    labels = {f.subject: f.labels for f in found}
    assert labels["homelab"] == {"cluster": "homelab"} and labels["pve2"] == {"node": "pve2"}
    assert labels["job on pve2"] == {"node": "pve2", "source": "backups"}
    assert labels["local"] == {"storage": "local"}
    assert labels["102-0"] == {"job": "102-0", "guest": "102", "source": "replication"}


def test_a_quorate_or_single_node_cluster_says_nothing_of_quorum() -> None:
    assert findings(ProxmoxState(cluster="c", quorate=True), Judging(now=NOW)) == []
    assert findings(ProxmoxState(quorate=None), Judging(now=NOW)) == []
    (f,) = findings(ProxmoxState(quorate=False), Judging(now=NOW))
    assert f.subject == "" and f.text.startswith("cluster None has lost quorum")


def test_the_tiles_sentence_counts_running_and_stopped_guests_and_old_backups() -> None:
    j = Judging(now=NOW)
    fresh = PveBackup(time=NOW - H, storage="s")
    old = PveBackup(time=NOW - 30 * H, storage="s")
    assert all_clear(ProxmoxState(), j) is None
    assert all_clear(ProxmoxState(guests=[guest()]), j) == "1 guest running, backups fresh"
    two = [guest(), guest(vmid="102", backup_expected=True, backup=fresh)]
    assert all_clear(ProxmoxState(guests=two), j) == "2 guests running, backups fresh"
    stopped = [guest(), guest(vmid="103", status="stopped", expected=True), guest(vmid="104", status="stopped")]
    assert all_clear(ProxmoxState(guests=stopped), j) == "1 guest running, 2 stopped (1 onboot), backups fresh"
    onboot = [guest(vmid="103", status="stopped", expected=True)]
    assert all_clear(ProxmoxState(guests=onboot), j) == "0 guests running, 1 stopped (onboot), backups fresh"
    plain = [guest(vmid="104", status="stopped")]
    assert all_clear(ProxmoxState(guests=plain), j) == "0 guests running, 1 stopped, backups fresh"
    stale = [guest(backup_expected=True, backup=old), guest(vmid="102", backup_expected=True),
             guest(vmid="105", backup=old)]
    assert all_clear(ProxmoxState(guests=stale), j) == "3 guests running, backups: 2 older than 26 h"
    assert all_clear(ProxmoxState(guests=stale[:1], backup_max_age=31 * H), j) == "1 guest running, backups fresh"


def test_a_clusters_guests_are_judged_after_its_own_findings_each_with_its_labels() -> None:
    from collectors.findings import Finding

    s = ProxmoxState(
        denied=["the token lacks VM.Audit, so guests cannot be read"], quorate=True, backup_max_age=26 * H,
        guests=[guest(vmid="101", status="stopped", expected=True, onboot=True),
                guest(vmid="102", name="db", hastate="error", status="stopped"),
                guest(vmid="103", name="git", backup_expected=True, backup_failed="job errors",
                      backup_failed_at=NOW - H, backup=PveBackup(time=NOW - 30 * H, storage="pbs")),
                guest(vmid="104", name="ci", backup=PveBackup(time=NOW - H, storage="pbs", verified="failed")),
                guest(vmid="105", name="wiki", backup_expected=True)])
    labels = {"vmid": "101", "guest": "nextcloud", "node": "pve1"}

    def backups(vmid: str, name: str) -> dict[str, str]:
        return {"vmid": vmid, "guest": name, "node": "pve1", "source": "backups"}

    assert findings(s, Judging(now=NOW)) == [
        Finding(WARN, "Proxmox VE: the token lacks VM.Audit, so guests cannot be read", "pve_token_denied",
                "the token lacks VM.Audit", {}),
        Finding(BAD, "VM 101 (nextcloud) on pve1 is stopped; it is set to start at boot", "pve_guest_down", "101",
                labels),
        Finding(BAD, "VM 102 (db) on pve1: the HA manager put it in the error state",
                labels={"vmid": "102", "guest": "db", "node": "pve1"}),
        Finding(BAD, "VM 103 (git): its backup 1 h ago failed (job errors); its last good backup is 30 h old",
                "pve_backup_failed", "103", backups("103", "git")),
        Finding(WARN, "VM 103 (git) on pve1: its newest backup is 30 h old (on pbs), older than 26 h",
                "pve_backup_stale", "103", backups("103", "git")),
        Finding(BAD, "VM 104 (ci): its newest backup (1 h old, on pbs) failed verification", "pve_backup_failed",
                "104", backups("104", "ci")),
        Finding(WARN, "VM 105 (wiki) on pve1 has no backup on any storage the token may read", "pve_backup_stale",
                "105", backups("105", "wiki"))]


def test_storage_levels_configured_for_the_rule_set_the_alerts_severity() -> None:
    s = ProxmoxState(storages=[PveStorage(name="local", node="pve1", total_bytes=100.0, used_bytes=75.0),
                               PveStorage(name="nfs", node="pve1", total_bytes=100.0, used_bytes=55.0)])
    found = findings(s, Judging(now=NOW, levels={"pve_storage_full": (50.0, 70.0)}))
    assert [(f.subject, f.level, f.severity) for f in found] == [("local", BAD, "critical"), ("nfs", WARN, "warning")]
    assert [f.severity for f in findings(s, Judging(now=NOW, levels={}))] == []


def test_a_backup_exactly_max_age_old_does_not_count_as_old_on_the_tile() -> None:
    at_limit = [guest(backup_expected=True, backup=PveBackup(time=NOW - 26 * H, storage="s"))]
    assert all_clear(ProxmoxState(guests=at_limit), Judging(now=NOW)) == "1 guest running, backups fresh"
