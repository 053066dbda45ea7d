"""Proxmox VE through its API, answered by a local HTTPS stand-in (app/demo/pve_api.py) from
answers written from the API's schema (tests/fixtures/proxmox/README.md): Proxmox cannot run
here, so the client path is what is real: the token header, TLS with a CA file or a pinned
fingerprint, timeouts, 401, 403 and 5xx."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, NoData
from collectors.findings import BAD, WARN, Judging
from collectors.host.proxmox.collector import ProxmoxCollector
from collectors.host.proxmox.config import ProxmoxConfig
from collectors.host.proxmox.findings import TILE, findings
from collectors.host.proxmox.parse import PveFormatError, parse_backups, parse_resources
from collectors.host.proxmox.state import ProxmoxState
from tests.paths import FIXTURES
from tests.peers import running
from tests.peers.pve import SECRET, TOKEN_ID, PveStandin

NOW = 1795000000.0  # the fixture scene's "now"
H = 3600.0


@pytest.fixture(scope="module")
def pve() -> Iterator[PveStandin]:
    with running(PveStandin, "pve") as peer:
        yield peer


@pytest.fixture
def api(pve: PveStandin, tmp_path: Path) -> Iterator[PveStandin]:
    """The stand-in with the healthy scene, restored after each test."""
    saved = tmp_path / "saved"
    shutil.copytree(pve.answers, saved)
    yield pve
    shutil.rmtree(pve.answers)
    shutil.copytree(saved, pve.answers)


def collector(pve: PveStandin, **cfg: Any) -> ProxmoxCollector:
    settings = {"url": pve.url, "token_id": TOKEN_ID, "token_secret_file": pve.secret_file, "ca_file": pve.ca_file,
                "command_timeout": 5.0, **cfg}
    return ProxmoxCollector(ProxmoxConfig(**settings), clock=lambda: NOW)


def read(pve: PveStandin, **cfg: Any) -> ProxmoxState:
    state = collector(pve, **cfg).collect().state
    assert isinstance(state, ProxmoxState)
    return state


def said(state: ProxmoxState, now: float = NOW, **levels: tuple[float | None, float | None]) -> list[tuple[str | None, str]]:
    return [(f.rule, f.text) for f in findings(state, Judging(host="h", now=now, levels=levels))]


def test_a_healthy_cluster_reads_every_guest_with_its_newest_backup_and_nothing_is_wrong(api: PveStandin) -> None:
    state = read(api)
    assert (state.cluster, state.quorate) == ("homelab", True)
    assert [(n.name, n.online) for n in state.nodes] == [("pve1", True), ("pve2", True)]
    # the template (9000) never runs and is left out; the stopped one comes with its onboot read
    assert [(g.vmid, g.kind, g.name, g.node, g.status) for g in state.guests] == [
        ("100", "VM", "home-assistant", "pve1", "running"), ("101", "VM", "nextcloud", "pve1", "running"),
        ("102", "CT", "pihole", "pve2", "running"), ("103", "VM", "win11", "pve2", "stopped"),
        ("104", "CT", "media", "pve1", "running")]
    by = {int(g.vmid): g for g in state.guests}
    assert by[103].onboot is False and not by[103].expected and not by[103].backup_expected  # excluded from the job
    assert by[100].expected and by[100].hastate == "started"  # an HA resource: should run though not onboot
    assert by[100].backup is not None and by[100].backup.time == NOW - 4 * H + 60
    assert (by[100].backup.storage, by[100].backup.verified) == ("pbs-store", "ok")
    assert all(by[v].backup_expected for v in (100, 101, 102, 104))
    # a shared storage is listed once, a local one per node
    assert [(s.name, s.node, s.shared) for s in state.storages] == [
        ("local", "pve1", False), ("local", "pve2", False), ("local-zfs", "pve1", False), ("local-zfs", "pve2", False),
        ("pbs-store", "pve1", True)]
    assert [(r.id, r.target, r.fail_count) for r in state.replication] == [("101-0", "pve2", 0)]
    assert state.tls == f"certificate verified against {api.ca_file}"
    assert said(state) == []
    assert TILE.all_clear(state, Judging(now=NOW)) == "4 guests running, 1 stopped, backups fresh"


def test_its_samples_carry_each_guests_vmid_name_node_and_type(api: PveStandin) -> None:
    result = collector(api).collect()
    running_ = {dict(s.labels)["guest"]: s.value for s in result.samples if s.metric == "rackpulse_pve_guest_running"}
    assert running_ == {"home-assistant": 1, "nextcloud": 1, "pihole": 1, "win11": 0, "media": 1}
    cpu = [s for s in result.samples if s.metric == "rackpulse_pve_guest_cpu_ratio" and dict(s.labels)["vmid"] == "101"]
    assert [dict(s.labels) for s in cpu] == [{"vmid": "101", "guest": "nextcloud", "node": "pve1", "type": "qemu"}]
    assert [s.value for s in result.samples if s.metric == "rackpulse_pve_cluster_quorate"] == [1]
    assert {(e.kind, e.key) for e in result.entities} >= {("pve_vm", "100"), ("pve_ct", "102")}


def test_a_guest_set_to_start_at_boot_that_is_stopped_is_down_naming_it_and_its_node_and_clears_when_it_runs(
        api: PveStandin) -> None:
    api.write("nodes/pve2/qemu/103/config", {**api.read("nodes/pve2/qemu/103/config"), "onboot": 1})
    state = read(api)
    assert state.guests[0].vmid == "103"  # the one down comes first
    assert ("pve_guest_down", "VM 103 (win11) on pve2 is stopped; it is set to start at boot") in said(state)
    api.edit("cluster/resources", {"vmid": 103}, status="running", uptime=60, cpu=0.5, mem=4 << 30)
    assert [r for r, _ in said(read(api))] == []


def test_a_watched_guest_and_an_ha_guest_are_expected_to_run_though_not_onboot(api: PveStandin) -> None:
    api.edit("cluster/resources", {"vmid": 100}, status="stopped")
    api.write("nodes/pve1/qemu/100/config", {"name": "home-assistant", "onboot": 0})
    state = read(api, watch=["win11"])
    assert [(r, t) for r, t in said(state) if r == "pve_guest_down"] == [
        ("pve_guest_down", "VM 100 (home-assistant) on pve1 is stopped; it is an HA resource that should be started"),
        ("pve_guest_down", "VM 103 (win11) on pve2 is stopped; it is watched")]


def test_backups_older_than_backup_max_age_are_stale_naming_the_guest_its_age_and_storage(api: PveStandin) -> None:
    state = read(api)
    later = NOW + 30 * H
    stale = [t for r, t in said(state, later) if r == "pve_backup_stale"]
    assert len(stale) == 4
    assert "VM 101 (nextcloud) on pve1: its newest backup is 33 h old (on pbs-store), older than 26 h" in stale
    assert TILE.all_clear(state, Judging(now=later)) == "4 guests running, 1 stopped, backups: 4 older than 26 h"
    # a shorter limit of the user's own
    assert len([r for r, _ in said(read(api, backup_max_age=2 * H)) if r == "pve_backup_stale"]) == 4


def test_a_guest_a_job_covers_without_any_backup_is_stale_at_once(api: PveStandin) -> None:
    api.write("nodes/pve1/storage/pbs-store/content",
              [b for b in api.read("nodes/pve1/storage/pbs-store/content") if b["vmid"] != 102])
    assert ("pve_backup_stale", "CT 102 (pihole) on pve2 has no backup on any storage the token may read") in said(read(api))


def test_a_failed_backup_newer_than_the_last_good_one_is_said_with_the_last_good_ones_age(api: PveStandin) -> None:
    tasks = api.read("cluster/tasks")
    tasks.insert(0, {**tasks[0], "upid": "UPID:pve2:0000A000:00000001:6AFF0000:vzdump:102:root@pam:", "node": "pve2",
                     "id": "102", "starttime": NOW - 1 * H, "endtime": NOW - 1 * H + 40,
                     "status": "ERROR: Backup of VM 102 failed - no space left on device"})
    api.write("cluster/tasks", tasks)
    assert ("pve_backup_failed", "CT 102 (pihole): its backup 1 h ago failed (ERROR: Backup of VM 102 failed - no space "
                                 "left on device); its last good backup is 3 h old") in said(read(api))


def test_a_backup_job_over_several_guests_that_failed_names_its_node(api: PveStandin) -> None:
    api.edit("cluster/tasks", {"node": "pve2", "id": ""}, status="job errors")
    assert ("pve_backup_failed", "the backup job on node pve2 4 h ago failed (job errors)") in said(read(api))
    failed = read(api).failed_tasks
    assert [(t.type, t.node, t.status) for t in failed] == [("vzdump", "pve2", "job errors")]


def test_a_newest_backup_that_failed_verification_is_a_failed_backup(api: PveStandin) -> None:
    content = api.read("nodes/pve1/storage/pbs-store/content")
    newest = max((b for b in content if b["vmid"] == 104), key=lambda b: b["ctime"])
    newest["verification"] = {"state": "failed", "upid": "UPID:pbs:..."}
    api.write("nodes/pve1/storage/pbs-store/content", content)
    assert ("pve_backup_failed", "CT 104 (media): its newest backup (3 h old, on pbs-store) failed verification") \
        in said(read(api))


@pytest.mark.parametrize(("used_gib", "level"), [(3060, "warning"), (3500, "critical"), (1200, None)])
def test_a_storage_filling_up_is_full_at_two_levels_and_the_users_own_limits_replace_them(
        api: PveStandin, used_gib: int, level: str | None) -> None:
    api.edit("cluster/resources", {"storage": "pbs-store"}, disk=used_gib << 30)
    found = [f for f in findings(read(api), Judging(now=NOW)) if f.rule == "pve_storage_full"]
    if level is None:
        assert found == []
    else:
        assert [(f.level, f.text) for f in found] == [
            (WARN if level == "warning" else BAD, f"storage pbs-store (shared) is {used_gib / 36:.0f}% full")]
    # [alerts.rules.pve_storage_full] warning = 30: the user's limit, and the alert's severity follows it
    mine = [f for f in findings(read(api), Judging(now=NOW, levels={"pve_storage_full": (30.0, 99.0)}))
            if f.rule == "pve_storage_full" and f.subject == "pbs-store"]
    assert [(f.subject, f.severity) for f in mine] == [("pbs-store", "warning")]


def test_quorum_lost_and_a_node_offline_are_each_said(api: PveStandin) -> None:
    api.edit("cluster/status", {"type": "cluster"}, quorate=0)
    api.edit("cluster/status", {"name": "pve2"}, online=0)
    api.edit("cluster/resources", {"id": "node/pve2"}, status="offline")
    rules = said(read(api))
    assert ("pve_quorum_lost", "cluster homelab has lost quorum: its nodes cannot start, stop or change guests") in rules
    assert ("pve_node_offline", "Proxmox node pve2 is offline") in rules


def test_a_replication_job_that_fails_is_said_with_its_error(api: PveStandin) -> None:
    api.edit("nodes/pve1/replication", {"id": "101-0"}, fail_count=3, error="command 'zfs send' failed: exit code 1")
    assert ("pve_replication_failed", "replication 101-0 of guest 101 to pve2 failed 3 times: command 'zfs send' "
                                      "failed: exit code 1") in said(read(api))


def test_a_token_without_sys_audit_gets_one_finding_naming_the_privilege_and_the_rest_is_read(api: PveStandin) -> None:
    api.misbehave("/cluster/status", status=403, reason="Permission check failed (/, Sys.Audit)")
    api.misbehave("/cluster/backup", status=403, reason="Permission check failed (/, Sys.Audit)")
    state = read(api)
    assert len(state.guests) == 5 and state.quorate is None
    denied = [t for r, t in said(state) if r == "pve_token_denied"]
    assert len(denied) == 2
    assert denied[0] == (f"Proxmox VE: the token {TOKEN_ID} lacks Sys.Audit on /, so /cluster/status cannot be read: "
                         f"give it the PVEAuditor role on / (pveum acl modify / --tokens '{TOKEN_ID}' --roles PVEAuditor)")


def test_a_wrong_secret_is_a_clear_error_that_never_shows_the_secret(api: PveStandin, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.token"
    wrong.write_text("0000-not-it\n")
    with pytest.raises(CollectorError, match="401 authentication failure: the token id or secret is wrong") as exc:
        collector(api, token_secret_file=wrong).collect()
    assert "0000-not-it" not in str(exc.value) and SECRET not in str(exc.value)
    assert SECRET not in repr(collector(api).cfg)


def test_a_certificate_that_does_not_match_the_pinned_fingerprint_is_refused_before_the_token_is_sent(
        api: PveStandin) -> None:
    before = len(api.requests())
    with pytest.raises(CollectorError, match="does not match the pinned fingerprint: refused, the token was not sent"):
        collector(api, ca_file=None, fingerprint="AB" * 32).collect()
    assert len(api.requests()) == before  # no request reached it
    state = read(api, ca_file=None, fingerprint=api.fingerprint)
    assert len(state.guests) == 5 and state.tls == "certificate pinned by its SHA-256 fingerprint"


def test_a_self_signed_certificate_is_refused_unless_trusted_pinned_or_verify_is_off(api: PveStandin) -> None:
    with pytest.raises(CollectorError, match="certificate not trusted .*: set ca_file to the CA that signed it"):
        collector(api, ca_file=None).collect()
    state = read(api, ca_file=None, verify=False)
    assert state.tls == "certificate NOT verified (verify = false)" and len(state.guests) == 5


def test_a_hung_api_fails_the_run_within_the_command_timeout(api: PveStandin) -> None:
    api.misbehave("/cluster/resources", delay=30)
    with pytest.raises(CollectorError, match="GET /cluster/resources: no answer within 1s"):
        collector(api, command_timeout=1.0).collect()


def test_a_server_error_fails_the_run_saying_the_status(api: PveStandin) -> None:
    api.misbehave("/cluster/resources", status=500, reason="internal error")
    with pytest.raises(CollectorError, match="HTTP 500 internal error"):
        collector(api).collect()


def test_a_node_that_is_away_costs_only_what_is_asked_of_it(api: PveStandin) -> None:
    api.misbehave("/nodes/pve2/replication", status=595, reason="no route to host")
    api.misbehave("/nodes/pve2/qemu/103/config", status=595, reason="no route to host")
    state = read(api)
    assert [g.onboot for g in state.guests if g.vmid == "103"] == [None] and len(state.replication) == 1


def test_without_a_url_there_is_no_data_and_without_a_token_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="no Proxmox VE url configured"):
        ProxmoxCollector(ProxmoxConfig()).collect()
    with pytest.raises(CollectorError, match="set token_id"):
        ProxmoxCollector(ProxmoxConfig(url="https://pve1.lan:8006")).collect()
    with pytest.raises(CollectorError, match="token_secret_file: No such file or directory"):
        ProxmoxCollector(ProxmoxConfig(url="https://pve1.lan:8006", token_id=TOKEN_ID,
                                       token_secret_file=tmp_path / "nope")).collect()


@pytest.mark.parametrize(("key", "value", "says"), [
    ("url", "http://pve1.lan:8006", "the API speaks only HTTPS"),
    ("token_id", "monitor@pve", "a token id reads USER@REALM!TOKENID"),
    ("fingerprint", "AB:CD", "64 hex digits"),
])
def test_a_config_that_cannot_work_is_refused_saying_how_to_write_it(key: str, value: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        ProxmoxConfig(**{key: value})


def test_an_answer_that_is_not_the_documented_shape_quotes_it() -> None:
    with pytest.raises(PveFormatError, match="/cluster/resources: expected a list of objects"):
        parse_resources({"data": "nope"})
    with pytest.raises(PveFormatError, match="vmid"):
        parse_resources([{"type": "qemu", "name": "x"}])
    with pytest.raises(PveFormatError, match="ctime='yesterday' is not a number"):
        parse_backups([{"vmid": 100, "ctime": "yesterday"}], "local")


def _break(api: PveStandin, rule: str) -> None:
    """The scene that raises `rule`, each on the healthy one."""
    if rule == "pve_guest_down":
        api.write("nodes/pve2/qemu/103/config", {"name": "win11", "onboot": 1})
    elif rule == "pve_backup_stale":
        api.write("nodes/pve1/storage/pbs-store/content",
                  [b for b in api.read("nodes/pve1/storage/pbs-store/content") if b["vmid"] != 101])
    elif rule == "pve_backup_failed":
        api.edit("cluster/tasks", {"node": "pve1", "id": ""}, status="job errors")
    elif rule == "pve_storage_full":
        api.edit("cluster/resources", {"storage": "pbs-store"}, disk=3500 << 30)
    elif rule == "pve_quorum_lost":
        api.edit("cluster/status", {"type": "cluster"}, quorate=0)
    elif rule == "pve_node_offline":
        api.edit("cluster/resources", {"id": "node/pve2"}, status="offline")
    elif rule == "pve_replication_failed":
        api.edit("nodes/pve1/replication", {"id": "101-0"}, fail_count=1, error="no route to host")
    elif rule == "pve_token_denied":
        api.misbehave("/cluster/tasks", status=403, reason="Permission check failed (/, Sys.Audit)")


SAYS = {
    "pve_guest_down": ("103", "VM 103 (win11) on pve2 is stopped; it is set to start at boot",
                       {"vmid": "103", "guest": "win11", "node": "pve2"}),
    "pve_backup_stale": ("101", "VM 101 (nextcloud) on pve1 has no backup on any storage the token may read",
                         {"vmid": "101", "guest": "nextcloud", "node": "pve1", "source": "backups"}),
    "pve_backup_failed": ("job on pve1", "the backup job on node pve1 4 h ago failed (job errors)",
                          {"node": "pve1", "source": "backups"}),
    "pve_storage_full": ("pbs-store", "storage pbs-store (shared) is 97% full", {"storage": "pbs-store"}),
    "pve_quorum_lost": ("homelab", "cluster homelab has lost quorum: its nodes cannot start, stop or change guests",
                        {"cluster": "homelab"}),
    "pve_node_offline": ("pve2", "Proxmox node pve2 is offline", {"node": "pve2"}),
    "pve_replication_failed": ("101-0", "replication 101-0 of guest 101 to pve2 failed 1 time: no route to host",
                               {"job": "101-0", "guest": "101", "source": "replication"}),
    "pve_token_denied": (f"the token {TOKEN_ID} lacks Sys.Audit on /",
                         f"Proxmox VE: the token {TOKEN_ID} lacks Sys.Audit on /, so /cluster/tasks cannot be read: "
                         f"give it the PVEAuditor role on / (pveum acl modify / --tokens '{TOKEN_ID}' --roles PVEAuditor)",
                         {}),
}


@pytest.mark.parametrize("rule", sorted(SAYS))
def test_each_rule_fires_through_the_alert_engine_naming_what_is_wrong_and_clears_when_it_is_right(
        api: PveStandin, rule: str) -> None:
    import time as clock

    from app.alerting.conditions import Conditions
    from app.scheduler import CollectorStatus, Snapshot
    from collectors.host.proxmox.findings import RULES

    def conditions() -> list[Any]:
        snap = Snapshot(host="pve-watch", states={"proxmox": read(api)})
        snap.statuses = {"proxmox": CollectorStatus("proxmox", 60, 30, up=True, last_run=clock.time(),
                                                    last_success=clock.time())}
        return Conditions().build(snap, now=NOW)

    assert conditions() == []  # the healthy scene
    _break(api, rule)
    (c,) = [c for c in conditions() if c.rule == rule]
    subject, summary, labels = SAYS[rule]
    assert (c.subject, c.summary) == (subject, summary)
    assert {k: v for k, v in c.labels.items() if k != "host"} == labels
    assert rule in {r.name for r in RULES}
    shutil.rmtree(api.answers)
    shutil.copytree(FIXTURES / "proxmox" / "healthy", api.answers)
    assert conditions() == []  # and it clears


def test_with_a_backup_server_too_a_guests_row_shows_its_newest_backup_from_either(api: PveStandin) -> None:
    from collectors.host.pbs.state import PbsGroup, PbsState

    # PVE's storages list no backup of 102 at all; the Backup Server has one, newer than any, failed to verify
    api.write("nodes/pve1/storage/pbs-store/content",
              [b for b in api.read("nodes/pve1/storage/pbs-store/content") if b["vmid"] != 102])
    pbs = PbsState(groups=[PbsGroup(store="offsite", type="ct", id="102", last_backup=NOW - 600, verified="failed"),
                           PbsGroup(store="offsite", type="vm", id="100", last_backup=NOW - 40 * H, verified="ok"),
                           PbsGroup(store="offsite", type="host", id="nas1", last_backup=NOW - 60)])
    c = ProxmoxCollector(collector(api).cfg, clock=lambda: NOW, states={"pbs": pbs})
    state = c.collect().state
    assert isinstance(state, ProxmoxState)
    by = {g.vmid: g for g in state.guests}
    assert by["102"].backup is not None and (by["102"].backup.storage, by["102"].backup.verified) == ("PBS offsite", "failed")
    assert by["100"].backup is not None and by["100"].backup.storage == "pbs-store"  # PVE's own is newer there
    assert ("pve_backup_failed", "CT 102 (pihole): its newest backup (10 min old, on PBS offsite) failed verification") \
        in said(state)


def test_a_cluster_answering_100000_guests_is_read_up_to_max_items_in_bounded_memory(api: PveStandin) -> None:
    """100,000 guests cost 15.7 CPU-s and 1,665 MB in one collection (no cap on the count)."""
    import resource

    items = api.read("/cluster/resources")
    vm = next(x for x in items if x.get("type") == "qemu")
    many = [x for x in items if x.get("type") != "qemu"] + [
        {**vm, "id": f"qemu/{1000 + i}", "vmid": 1000 + i, "name": f"vm{i}", "status": "stopped"} for i in range(100_000)]
    api.write("/cluster/resources", many)
    too_big = len(json.dumps(many)) > 16 * 1024 * 1024
    del many, items
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if too_big:  # the body cap answers first
        with pytest.raises(CollectorError, match="over 16 MiB"):
            read(api, max_items=2000, command_timeout=30.0)
    else:
        state = read(api, max_items=2000, command_timeout=30.0)
        assert len(state.guests) <= 2000
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grew_mb < 200, grew_mb  # was +1,577 MB
    # under the byte cap, past max_items: the first max_items items are read
    api.write("/cluster/resources", [{**vm, "id": f"qemu/{1000 + i}", "vmid": 1000 + i, "name": f"vm{i}"}
                                     for i in range(5_000)])
    state = read(api, max_items=2000, command_timeout=30.0)
    assert len(state.guests) == 2000


@pytest.mark.parametrize("how", [{"status": 403, "reason": "Permission check failed (/storage/pbs-store, Datastore.Audit)"},
                                 {"status": 595, "reason": "no route to host"}, {"delay": 30}],
                         ids=["403", "unreachable", "timeout"])
def test_a_backup_listing_that_cannot_be_read_holds_the_failed_backup_alert_until_it_is_read_again(
        api: PveStandin, how: dict[str, Any]) -> None:
    """PVE: when only a storage's listing answered 403, pve_backup_failed 101 was RESOLVED, then
    fired again as a new episode once readable."""
    from dataclasses import replace

    from app.alerting.conditions import BUILTIN, Conditions
    from app.alerting.engine import evaluate
    from app.scheduler import CollectorStatus, Snapshot

    # The product's own timeout (ProxmoxConfig's), but where the listing is made to hang: there
    # a shorter one, still well past what a small answer on loopback takes (2 s failed at load 20)
    timeout = 5.0 if how.get("delay") else ProxmoxConfig().command_timeout
    assert how.get("delay", 0) > 2 * timeout or not how.get("delay")

    def run(when: float, previous: dict[Any, Any]) -> tuple[dict[Any, Any], list[Any]]:
        snap = Snapshot(host="h")
        snap.states["proxmox"] = collector(api, command_timeout=timeout).collect().state
        snap.statuses["proxmox"] = CollectorStatus("proxmox", 60, 30, up=True, last_run=when, last_success=when)
        return evaluate(Conditions().build(snap, previous=previous, now=when), BUILTIN, previous, when)

    content = api.read("nodes/pve1/storage/pbs-store/content")
    newest = max((b for b in content if b["vmid"] == 104), key=lambda b: b["ctime"])
    newest["verification"] = {"state": "failed", "upid": "UPID:pbs:..."}
    api.write("nodes/pve1/storage/pbs-store/content", content)
    states, _ = run(NOW, {})
    states = {k: replace(s, state="firing", fired_at=NOW, last_notified=NOW) if k[0] == "pve_backup_failed" else s
              for k, s in states.items()}
    assert ("pve_backup_failed", "104") in states

    api.misbehave("/nodes/pve1/storage/pbs-store/content", **how)
    states, events = run(NOW + 60, states)
    assert [e.alert.key for e in events if e.kind == "resolved"] == []
    assert states[("pve_backup_failed", "104")].state == "firing"
    assert "(held: backups cannot be read now)" in states[("pve_backup_failed", "104")].summary

    api.misbehave("/nodes/pve1/storage/pbs-store/content")  # answers again, the backup verified
    newest["verification"] = {"state": "ok", "upid": "UPID:pbs:..."}
    api.write("nodes/pve1/storage/pbs-store/content", content)
    _, events = run(NOW + 120, states)
    assert ("resolved", ("pve_backup_failed", "104")) in [(e.kind, e.alert.key) for e in events]
