"""Proxmox Backup Server through its API, answered by the local HTTPS stand-in (app/demo/pve_api.py)
from answers written from pbs-api-types (tests/fixtures/proxmox/README.md): PBS cannot run here,
so what is real is the client path: the PBSAPIToken header, TLS, 403s and errors."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, NoData
from collectors.findings import BAD, WARN, Judging
from collectors.host.pbs.collector import PbsCollector
from collectors.host.pbs.config import PbsConfig
from collectors.host.pbs.findings import RULES, TILE, findings
from collectors.host.pbs.parse import PbsFormatError, newest_snapshots, parse_usage
from collectors.host.pbs.state import PbsState
from tests.paths import FIXTURES
from tests.peers import running
from tests.peers.pve import PBS_TOKEN_ID, SECRET, PbsStandin

NOW = 1795000000.0
H = 3600.0


@pytest.fixture(scope="module")
def server() -> Iterator[PbsStandin]:
    with running(PbsStandin, "pbs") as peer:
        yield peer


@pytest.fixture
def pbs(server: PbsStandin) -> Iterator[PbsStandin]:
    """The stand-in with the healthy scene, restored after each test."""
    yield server
    shutil.rmtree(server.answers)
    shutil.copytree(FIXTURES / "proxmox" / "pbs", server.answers)


def collector(pbs: PbsStandin, **cfg: Any) -> PbsCollector:
    return PbsCollector(PbsConfig(**{"url": pbs.url, "token_id": PBS_TOKEN_ID, "token_secret_file": pbs.secret_file,
                                     "ca_file": pbs.ca_file, "command_timeout": 5.0, **cfg}))


def read(pbs: PbsStandin, **cfg: Any) -> PbsState:
    state = collector(pbs, **cfg).collect().state
    assert isinstance(state, PbsState)
    return state


def said(state: PbsState, now: float = NOW) -> list[tuple[str | None, str]]:
    return [(f.rule, f.text) for f in findings(state, Judging(host="h", now=now))]


def test_a_healthy_server_reads_its_datastores_groups_with_their_newest_snapshot_and_jobs(pbs: PbsStandin) -> None:
    state = read(pbs)
    assert [(d.name, d.used_percent) for d in state.datastores] == [("store1", 47.5), ("offsite", 40.0)]
    assert state.datastores[0].estimated_full == NOW + 200 * 24 * H
    assert state.datastores[0].gc_removed_bytes == 41e9
    assert [(g.store, g.name, g.count, g.verified) for g in state.groups] == [
        ("offsite", "vm/101", 3, "ok"), ("store1", "ct/102", 3, "ok"), ("store1", "ct/104", 3, "ok"),
        ("store1", "host/nas1", 3, "ok"), ("store1", "vm/100", 3, "ok"), ("store1", "vm/101", 3, "ok")]
    assert [(j.kind, j.id, j.store, j.last_state) for j in state.jobs] == [
        ("verify", "v-3f9c2a1b", "store1", "OK"), ("sync", "s-7a1c0d2e", "offsite", "OK"),
        ("prune", "p-store1", "store1", "OK"), ("gc", "store1", "store1", "OK"), ("gc", "offsite", "offsite", None)]
    assert said(state) == []
    assert TILE.all_clear(state, Judging(now=NOW)) == "6 backup groups on 2 datastores, newest 2 h ago"


def test_a_datastore_filling_up_says_when_it_will_be_full(pbs: PbsStandin) -> None:
    usage = pbs.read("status/datastore-usage")
    usage[0].update(used=3_500_000_000_000, avail=500_000_000_000, **{"estimated-full-date": int(NOW + 20 * 24 * H)})
    pbs.write("status/datastore-usage", usage)
    found = [f for f in findings(read(pbs), Judging(now=NOW)) if f.rule == "pbs_datastore_full"]
    assert [(f.level, f.subject) for f in found] == [(WARN, "store1")]
    assert found[0].text.startswith("datastore store1 is 88% full, full by 2026-12-0")


def test_a_newest_snapshot_that_failed_verification_is_said_naming_its_group_and_datastore(pbs: PbsStandin) -> None:
    snaps = pbs.read("admin/datastore/store1/snapshots")
    newest = max((s for s in snaps if s["backup-id"] == "101"), key=lambda s: s["backup-time"])
    newest["verification"] = {"state": "failed", "upid": "UPID:pbs:..."}
    pbs.write("admin/datastore/store1/snapshots", snaps)
    assert ("pbs_verify_failed", "backup vm/101 on store1: its newest snapshot (3 h old) failed verification") \
        in said(read(pbs))


def test_a_group_without_a_recent_snapshot_is_stale_unless_ignored(pbs: PbsStandin) -> None:
    later = NOW + 30 * H
    stale = [t for r, t in said(read(pbs), later) if r == "pbs_snapshot_stale"]
    assert len(stale) == 6
    assert "backup host/nas1 on store1: its newest snapshot is 33 h old, older than 26 h" in stale
    quiet = [t for r, t in said(read(pbs, ignore=["host/*", "offsite/*"]), later) if r == "pbs_snapshot_stale"]
    assert len(quiet) == 4 and not [t for t in quiet if "host/nas1" in t or "offsite" in t]


def test_a_job_whose_last_run_failed_is_said_with_its_error(pbs: PbsStandin) -> None:
    pbs.edit("admin/sync", {"id": "s-7a1c0d2e"}, **{"last-run-state": "remote 'pbs-main' unreachable"})
    pbs.edit("admin/gc", {"store": "store1"}, **{"last-run-state": "WARNINGS: 2"})  # done, with warnings: fine
    assert [(r, t) for r, t in said(read(pbs)) if r == "pbs_job_failed"] == [
        ("pbs_job_failed", "sync job s-7a1c0d2e on offsite failed 28 min ago: remote 'pbs-main' unreachable")]


def test_a_datastore_that_cannot_be_read_is_said_and_the_others_are_read(pbs: PbsStandin) -> None:
    usage = pbs.read("status/datastore-usage")
    usage[1] = {"store": "offsite", "error": "datastore is not mounted"}
    pbs.write("status/datastore-usage", usage)
    state = read(pbs)
    assert (BAD, "datastore offsite cannot be read: datastore is not mounted") in \
        [(f.level, f.text) for f in findings(state, Judging(now=NOW))]
    assert {g.store for g in state.groups} == {"store1"}


def test_a_token_refused_a_list_is_said_once_naming_the_role_and_the_rest_is_read(pbs: PbsStandin) -> None:
    pbs.misbehave("/admin/sync", status=403, reason="permission check failed")
    state = read(pbs)
    assert len(state.groups) == 6
    assert [t for r, t in said(state) if r == "pbs_token_denied"] == [
        f"Proxmox Backup Server: the token {PBS_TOKEN_ID} was refused (permission check failed), so /admin/sync "
        f"cannot be read: give it the Audit role on / (proxmox-backup-manager acl update / Audit --auth-id "
        f"'{PBS_TOKEN_ID}')"]


def test_an_older_server_without_the_gc_job_list_is_read_without_it(pbs: PbsStandin) -> None:
    pbs.misbehave("/admin/gc", status=501, reason="Method 'GET /admin/gc' not implemented")
    assert {j.kind for j in read(pbs).jobs} == {"verify", "sync", "prune"}


def test_the_pve_token_header_is_refused_by_pbs_with_a_clear_error_without_the_secret(pbs: PbsStandin,
                                                                                     tmp_path: Path) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_text("nope\n")
    with pytest.raises(CollectorError, match="401 authentication failure") as exc:
        collector(pbs, token_secret_file=wrong).collect()
    assert "nope" not in str(exc.value) and SECRET not in str(exc.value)


def test_a_pinned_fingerprint_that_does_not_match_is_refused_and_one_that_does_reads(pbs: PbsStandin) -> None:
    with pytest.raises(CollectorError, match="does not match the pinned fingerprint"):
        collector(pbs, ca_file=None, fingerprint="CD" * 32).collect()
    assert len(read(pbs, ca_file=None, fingerprint=pbs.fingerprint).groups) == 6


def test_a_hung_server_fails_the_run_within_the_command_timeout(pbs: PbsStandin) -> None:
    pbs.misbehave("/status/datastore-usage", delay=30)
    with pytest.raises(CollectorError, match="no answer within 1s"):
        collector(pbs, command_timeout=1.0).collect()


def test_without_a_url_there_is_no_data() -> None:
    with pytest.raises(NoData, match="no Proxmox Backup Server url configured"):
        PbsCollector(PbsConfig()).collect()


def test_answers_not_in_the_documented_shape_quote_the_item() -> None:
    with pytest.raises(PbsFormatError, match="a datastore without store"):
        parse_usage([{"total": 1}])
    with pytest.raises(PbsFormatError, match="a snapshot without backup-time"):
        newest_snapshots([{"backup-type": "vm", "backup-id": "1"}], "s")
    # -1 is the API's "could not be read": unknown, not a negative size
    assert parse_usage([{"store": "s", "total": -1, "used": -1, "avail": -1}])[0].total_bytes is None


def _break(pbs: PbsStandin, rule: str) -> None:
    if rule == "pbs_datastore_full":
        pbs.edit("status/datastore-usage", {"store": "offsite"}, used=1_950_000_000_000)
    elif rule == "pbs_verify_failed":
        snaps = pbs.read("admin/datastore/offsite/snapshots")
        max(snaps, key=lambda s: s["backup-time"])["verification"] = {"state": "failed", "upid": "UPID:pbs:x"}
        pbs.write("admin/datastore/offsite/snapshots", snaps)
    elif rule == "pbs_job_failed":
        pbs.edit("admin/verify", {"id": "v-3f9c2a1b"}, **{"last-run-state": "verification failed - please check the log"})
    elif rule == "pbs_snapshot_stale":
        pbs.edit("admin/datastore/store1/groups", {"backup-id": "nas1"}, **{"last-backup": int(NOW - 40 * H)})
    elif rule == "pbs_token_denied":
        pbs.misbehave("/admin/prune", status=403, reason="permission check failed")


SAYS = {
    "pbs_datastore_full": ("offsite", "datastore offsite is 98% full", {"store": "offsite"}),
    "pbs_verify_failed": ("offsite/vm/101", "backup vm/101 on offsite: its newest snapshot (2 h old) failed verification",
                          {"store": "offsite", "group": "vm/101"}),
    "pbs_job_failed": ("verify/v-3f9c2a1b", "verify job v-3f9c2a1b on store1 failed 3 h ago: verification failed - "
                                            "please check the log", {"kind": "verify", "job": "v-3f9c2a1b", "store": "store1"}),
    "pbs_snapshot_stale": ("store1/host/nas1", "backup host/nas1 on store1: its newest snapshot is 40 h old, older than "
                                               "26 h", {"store": "store1", "group": "host/nas1"}),
    "pbs_token_denied": (f"the token {PBS_TOKEN_ID} was refused (permission check failed)",
                         f"Proxmox Backup Server: the token {PBS_TOKEN_ID} was refused (permission check failed), so "
                         f"/admin/prune cannot be read: give it the Audit role on / (proxmox-backup-manager acl update / "
                         f"Audit --auth-id '{PBS_TOKEN_ID}')", {}),
}


@pytest.mark.parametrize("rule", sorted(SAYS))
def test_each_rule_fires_through_the_alert_engine_naming_what_is_wrong_and_clears_when_it_is_right(
        pbs: PbsStandin, rule: str) -> None:
    import time as clock

    from app.alerting.conditions import Conditions
    from app.scheduler import CollectorStatus, Snapshot

    def conditions() -> list[Any]:
        snap = Snapshot(host="backup", states={"pbs": read(pbs)})
        snap.statuses = {"pbs": CollectorStatus("pbs", 300, 60, up=True, last_run=clock.time(), last_success=clock.time())}
        return Conditions().build(snap, now=NOW)

    assert conditions() == []
    _break(pbs, rule)
    (c,) = [c for c in conditions() if c.rule == rule]
    assert (c.subject, c.summary) == SAYS[rule][:2]
    assert {k: v for k, v in c.labels.items() if k != "host"} == SAYS[rule][2]
    assert rule in {r.name for r in RULES}
    shutil.rmtree(pbs.answers)
    shutil.copytree(FIXTURES / "proxmox" / "pbs", pbs.answers)
    assert conditions() == []
