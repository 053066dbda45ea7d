"""Proxmox Backup Server's answers read as typed records and judged, without a server: the written
fixtures of tests/fixtures/proxmox/pbs (pbs-api-types, kebab-case as on the wire) and the edges
(-1 for "could not be read", a snapshot without verification, a job that never ran), and each
finding's exact words, rule and subject."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collectors.findings import BAD, WARN, Judging
from collectors.host.pbs import parse
from collectors.host.pbs.findings import JOB_WORDS, TILE, all_clear, findings
from collectors.host.pbs.state import PbsDatastore, PbsGroup, PbsJob, PbsState
from collectors.proxmoxapi import ApiFormatError

PBS = Path(__file__).resolve().parents[3] / "fixtures" / "proxmox" / "pbs"
NOW = 1795000000.0
H = 3600.0


def answer(path: str) -> Any:
    return json.loads((PBS / path).read_text())


def test_the_datastores_usage_with_its_fill_date_and_last_garbage_collection() -> None:
    store1, offsite = parse.parse_usage(answer("status/datastore-usage.json"))
    assert store1 == PbsDatastore(name="store1", total_bytes=4e12, used_bytes=1.9e12, avail_bytes=2.1e12,
                                  estimated_full=1812280000.0, gc_removed_bytes=4.1e10, gc_pending_bytes=1.2e10)
    assert (offsite.name, offsite.gc_removed_bytes, offsite.error) == ("offsite", None, None)


def test_minus_one_is_the_apis_could_not_be_read_and_an_error_is_kept() -> None:
    (d,) = parse.parse_usage([{"store": "x", "total": -1, "used": 0, "avail": -1, "error": "not mounted",
                               "gc-status": "odd"}])
    assert (d.total_bytes, d.used_bytes, d.avail_bytes, d.error, d.gc_pending_bytes) == (None, 0.0, None, "not mounted", None)
    with pytest.raises(ApiFormatError, match=r"a datastore without store: \{'total': 1\}"):
        parse.parse_usage([{"total": 1}])


def test_each_backup_group_with_its_newest_time_count_owner_and_comment() -> None:
    groups = parse.parse_groups(answer("admin/datastore/store1/groups.json"), "store1")
    assert [(g.name, g.last_backup, g.count, g.owner, g.comment) for g in groups] == [
        ("vm/100", 1794985660.0, 3, "backup@pbs!pve", "home-assistant"),
        ("vm/101", 1794985720.0, 3, "backup@pbs!pve", "nextcloud"),
        ("ct/102", 1794985780.0, 3, "backup@pbs!pve", "pihole"),
        ("ct/104", 1794985840.0, 3, "backup@pbs!pve", "media"),
        ("host/nas1", 1794985900.0, 3, "root@pam", "")]
    (bare,) = parse.parse_groups([{"backup-type": "vm", "backup-id": 7}], "s")
    assert (bare.id, bare.count, bare.last_backup, bare.owner) == ("7", None, None, "")
    with pytest.raises(ApiFormatError, match=r"^a group without backup-type or backup-id: "):
        parse.parse_groups([{"backup-type": "vm"}], "s")
    with pytest.raises(ApiFormatError, match=r"^a group without backup-type or backup-id: "):
        parse.parse_groups([{"backup-id": "7"}], "s")


def test_the_newest_snapshot_of_each_group_with_its_verify_state_and_size() -> None:
    newest = parse.newest_snapshots(answer("admin/datastore/store1/snapshots.json"), "store1")
    assert newest[("vm", "100")] == (1794985660.0, "ok", 34000000000.0)
    assert len(newest) == 5
    got = parse.newest_snapshots([
        {"backup-type": "vm", "backup-id": "1", "backup-time": 10, "verification": {"state": "ok"}, "size": 1},
        {"backup-type": "vm", "backup-id": "1", "backup-time": 30, "verification": {"state": "failed"}},
        {"backup-type": "vm", "backup-id": "1", "backup-time": 20, "size": 2},
        {"backup-type": "ct", "backup-id": "2", "backup-time": 5, "verification": {"state": ""}},
        {"backup-type": "ct", "backup-id": "3", "backup-time": 5, "verification": "ok"}], "s")
    assert got == {("vm", "1"): (30.0, "failed", None), ("ct", "2"): (5.0, None, None), ("ct", "3"): (5.0, None, None)}
    with pytest.raises(ApiFormatError, match=r"^a snapshot without backup-time: "):
        parse.newest_snapshots([{"backup-type": "vm"}], "s")


def test_the_jobs_with_their_last_run_and_gc_named_by_its_datastore() -> None:
    (verify,) = parse.parse_jobs(answer("admin/verify.json"), "verify")
    assert verify == PbsJob(kind="verify", id="v-3f9c2a1b", store="store1", last_state="OK", last_end=1794989200.0,
                            next_run=1795072000.0)
    gcs = parse.parse_jobs(answer("admin/gc.json"), "gc")
    assert [(j.id, j.store, j.last_state, j.last_end) for j in gcs] == [("store1", "store1", "OK", 1794928900.0),
                                                                        ("offsite", "offsite", None, None)]
    with pytest.raises(ApiFormatError, match=r"^/admin/sync: expected a list of objects"):
        parse.parse_jobs({"data": []}, "sync")


@pytest.mark.parametrize(("state", "failed"), [(None, False), ("", False), ("OK", False), ("WARNINGS: 2", False),
                                               ("TASK ERROR: verification failed", True)])
def test_a_job_failed_only_when_its_last_run_said_an_error(state: str | None, failed: bool) -> None:
    assert PbsJob(kind="verify", id="v", store="s", last_state=state).failed is failed


# -- findings ---------------------------------------------------------------------------------------


def state(**change: Any) -> PbsState:
    base: dict[str, Any] = {"datastores": [PbsDatastore(name="store1", total_bytes=100.0, used_bytes=50.0)],
                            "groups": [PbsGroup(store="store1", type="vm", id="100", last_backup=NOW - 2 * H,
                                                verified="ok")]}
    return PbsState(**{**base, **change})


def said(s: PbsState) -> list[tuple[str, str, str | None, str]]:
    return [(f.level, f.text, f.rule, f.subject) for f in findings(s, Judging(now=NOW))]


def test_a_healthy_server_has_nothing_to_say_and_its_tile_counts_groups_and_stores() -> None:
    assert said(state()) == []
    assert all_clear(state(), Judging(now=NOW)) == "1 backup group on 1 datastore, newest 2 h ago"
    two = state(datastores=[PbsDatastore(name="a"), PbsDatastore(name="b")],
                groups=[PbsGroup(store="a", type="vm", id="1", last_backup=NOW - H),
                        PbsGroup(store="b", type="vm", id="2")])
    assert all_clear(two, Judging(now=NOW)) == "2 backup groups on 2 datastores, newest 1 h ago"
    assert all_clear(state(groups=[PbsGroup(store="store1", type="vm", id="1")]), Judging(now=NOW)) == \
        "1 backup group on 1 datastore"
    assert all_clear(PbsState(), Judging(now=NOW)) is None
    assert TILE.title == "Backups"


def test_a_datastore_that_cannot_be_read_is_said_and_not_judged_further() -> None:
    s = state(datastores=[PbsDatastore(name="store1", error="not mounted", total_bytes=100.0, used_bytes=99.0)])
    assert said(s) == [(BAD, "datastore store1 cannot be read: not mounted", None, "")]


@pytest.mark.parametrize(("used", "level"), [(84.0, None), (85.0, WARN), (94.9, WARN), (95.0, BAD), (99.0, BAD)])
def test_a_datastore_fills_to_a_warning_at_85_and_critical_at_95(used: float, level: str | None) -> None:
    found = [f for f in said(state(datastores=[PbsDatastore(name="store1", total_bytes=100.0, used_bytes=used)]))]
    assert [f[0] for f in found] == ([level] if level else [])
    if level:
        assert found[0][1:] == (f"datastore store1 is {used:.0f}% full", "pbs_datastore_full", "store1")


def test_a_filling_datastore_says_when_it_is_full_at_this_pace_but_not_a_date_gone_by() -> None:
    ahead = PbsDatastore(name="store1", total_bytes=100.0, used_bytes=85.0, estimated_full=NOW + 3 * 86400)
    (f,) = said(state(datastores=[ahead]))
    assert f[1].startswith("datastore store1 is 85% full, full by ") and f[1].endswith(" at this pace")
    past = PbsDatastore(name="store1", total_bytes=100.0, used_bytes=85.0, estimated_full=NOW - 1)
    assert said(state(datastores=[past]))[0][1] == "datastore store1 is 85% full"


def test_a_failed_verification_and_a_stale_snapshot_name_the_group_and_its_store() -> None:
    s = state(groups=[PbsGroup(store="store1", type="vm", id="100", last_backup=NOW - 30 * H, verified="failed"),
                      PbsGroup(store="store1", type="ct", id="9", verified="failed")])
    assert said(s) == [
        (BAD, "backup vm/100 on store1: its newest snapshot (30 h old) failed verification", "pbs_verify_failed",
         "store1/vm/100"),
        (WARN, "backup vm/100 on store1: its newest snapshot is 30 h old, older than 26 h", "pbs_snapshot_stale",
         "store1/vm/100"),
        (BAD, "backup ct/9 on store1: its newest snapshot failed verification", "pbs_verify_failed", "store1/ct/9")]


def test_a_snapshot_exactly_max_age_old_is_not_stale_yet() -> None:
    s = state(snapshot_max_age=6 * H, groups=[PbsGroup(store="store1", type="vm", id="1", last_backup=NOW - 6 * H)])
    assert said(s) == []


def test_ignored_groups_are_not_judged_by_name_or_by_store_and_name() -> None:
    groups = [PbsGroup(store="store1", type="vm", id="1", verified="failed"),
              PbsGroup(store="store1", type="ct", id="2", verified="failed"),
              PbsGroup(store="offsite", type="ct", id="2", verified="failed")]
    assert [f[3] for f in said(state(groups=groups, ignore=["vm/*", "offsite/*"]))] == ["store1/ct/2"]


def test_a_failed_job_says_what_it_is_where_and_when() -> None:
    jobs = [PbsJob(kind="verify", id="v1", store="store1", last_state="TASK ERROR: x", last_end=NOW - 3 * H),
            PbsJob(kind="gc", id="store1", store="store1", last_state="TASK ERROR: y"),
            PbsJob(kind="odd", id="o", store="s", last_state="bad"),
            PbsJob(kind="sync", id="s1", store="offsite", last_state="WARNINGS: 1")]
    found = [f for f in findings(state(jobs=jobs), Judging(now=NOW))]
    assert [(f.text, f.rule, f.subject, f.labels) for f in found] == [
        ("verify job v1 on store1 failed 3 h ago: TASK ERROR: x", "pbs_job_failed", "verify/v1",
         {"kind": "verify", "job": "v1", "store": "store1"}),
        ("garbage collection on store1 failed: TASK ERROR: y", "pbs_job_failed", "gc/store1",
         {"kind": "gc", "job": "store1", "store": "store1"}),
        ("odd job o on s failed: bad", "pbs_job_failed", "odd/o", {"kind": "odd", "job": "o", "store": "s"})]
    assert JOB_WORDS["prune"] == "prune job"


def test_a_refused_token_is_a_warning_naming_the_first_part_as_its_subject() -> None:
    s = state(denied=["/admin/datastore/store1/groups: 403 permission check failed, add Datastore.Audit"])
    (f,) = findings(s, Judging(now=NOW))
    assert (f.level, f.rule, f.subject) == (WARN, "pbs_token_denied",
                                            "/admin/datastore/store1/groups: 403 permission check failed")
    assert f.text.startswith("Proxmox Backup Server: /admin/datastore/store1/groups: 403")


@pytest.mark.parametrize(("seconds", "words"), [(0, "0 min"), (59, "0 min"), (3599, "59 min"), (3600, "1 h"),
                                                (48 * H - 1, "47 h"), (48 * H, "2 days"), (-5, "0 min")])
def test_an_age_is_said_in_minutes_hours_or_days(seconds: float, words: str) -> None:
    from collectors.proxmoxapi import age

    assert age(seconds) == words


def test_each_finding_carries_the_labels_its_page_row_and_alert_route_by() -> None:
    s = state(denied=["/admin/datastore/store1/groups: 403 permission check failed, add Datastore.Audit"],
              datastores=[PbsDatastore(name="gone", error="not mounted"),
                          PbsDatastore(name="store1", total_bytes=100.0, used_bytes=90.0)],
              groups=[PbsGroup(store="store1", type="vm", id="100", last_backup=NOW - 30 * H, verified="failed")],
              jobs=[PbsJob(kind="prune", id="p1", store="store1", last_state="TASK ERROR: x")])
    found = findings(s, Judging(now=NOW))
    group = {"store": "store1", "group": "vm/100"}
    assert [(f.level, f.rule, f.labels, f.severity) for f in found] == [
        (WARN, "pbs_token_denied", {}, None),
        (BAD, None, {"store": "gone"}, None),  # a store that cannot be read stops only its own judging
        (WARN, "pbs_datastore_full", {"store": "store1"}, None),
        (BAD, "pbs_verify_failed", group, None),
        (WARN, "pbs_snapshot_stale", group, None),
        (WARN, "pbs_job_failed", {"kind": "prune", "job": "p1", "store": "store1"}, None)]


def test_a_datastore_levels_configured_for_the_rule_set_the_alerts_severity() -> None:
    judging = Judging(now=NOW, levels={"pbs_datastore_full": (50.0, 70.0)})
    full = [f for f in findings(state(datastores=[PbsDatastore(name="store1", total_bytes=100.0, used_bytes=75.0)]),
                                judging)]
    assert [(f.level, f.severity) for f in full] == [(BAD, "critical")]
    assert [f.severity for f in findings(state(datastores=[PbsDatastore(name="store1", total_bytes=100.0,
                                                                        used_bytes=60.0)]), judging)] == ["warning"]


def test_the_day_a_datastore_fills_is_its_local_calendar_date_and_now_is_no_longer_ahead() -> None:
    import datetime

    when = NOW + 3 * 86400
    day = datetime.datetime.fromtimestamp(when).strftime("%Y-%m-%d")
    ahead = PbsDatastore(name="store1", total_bytes=100.0, used_bytes=85.0, estimated_full=when)
    assert said(state(datastores=[ahead]))[0][1] == f"datastore store1 is 85% full, full by {day} at this pace"
    today = PbsDatastore(name="store1", total_bytes=100.0, used_bytes=85.0, estimated_full=NOW)
    assert said(state(datastores=[today]))[0][1] == "datastore store1 is 85% full"


def test_the_section_draws_each_group_store_and_job_at_the_level_of_its_own_findings() -> None:
    from collectors.findings import OK
    from collectors.host.pbs.findings import view

    s = state(datastores=[PbsDatastore(name="store1", total_bytes=100.0, used_bytes=96.0),
                          PbsDatastore(name="offsite", total_bytes=100.0, used_bytes=10.0)],
              groups=[PbsGroup(store="store1", type="vm", id="100", last_backup=NOW - 30 * H),
                      PbsGroup(store="offsite", type="vm", id="100", last_backup=NOW - H),
                      PbsGroup(store="offsite", type="ct", id="7", last_backup=NOW - H, verified="failed")],
              jobs=[PbsJob(kind="sync", id="s1", store="offsite", last_state="TASK ERROR: x"),
                    PbsJob(kind="verify", id="s1", store="offsite", last_state="OK")])
    shown = view(s, findings(s, Judging(now=NOW)))
    # offsite's own row stays ok: its failed group and job are their own rows' business
    assert shown["store_level"] == {"store1": BAD, "offsite": OK}
    assert shown["group_level"] == {"store1/vm/100": WARN, "offsite/vm/100": OK, "offsite/ct/7": BAD}
    assert shown["job_level"] == {"sync/s1": WARN, "verify/s1": OK}
    assert shown["datastores"] == s.datastores and shown["groups"] == s.groups


@pytest.mark.parametrize(("read", "path"), [
    (parse.parse_usage, "/status/datastore-usage"), (lambda bad: parse.parse_groups(bad, "s1"), "datastore s1 groups"),
    (lambda bad: parse.newest_snapshots(bad, "s1"), "datastore s1 snapshots"),
    (lambda bad: parse.parse_jobs(bad, "sync"), "/admin/sync")])
def test_every_reader_names_the_path_whose_answer_is_not_a_list(read: Any, path: str) -> None:
    with pytest.raises(ApiFormatError, match=f"^{path}: expected a list of objects"):
        read({"data": []})


def test_fields_an_answer_leaves_out_read_as_empty_and_the_first_of_two_equal_snapshots_stays() -> None:
    assert parse.newest_snapshots([{"backup-time": 5}], "s1") == {("", ""): (5.0, None, None)}
    two = [{"backup-type": "vm", "backup-id": "1", "backup-time": 5, "verification": {"state": "ok"}},
           {"backup-type": "vm", "backup-id": "1", "backup-time": 5}]
    assert parse.newest_snapshots(two, "s1") == {("vm", "1"): (5.0, "ok", None)}
    (job,) = parse.parse_jobs([{"id": "s-1"}], "sync")
    assert (job.id, job.store) == ("s-1", "")
