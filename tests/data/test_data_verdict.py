"""Each data set judged in words and by the two rules, with a real restic repository (Debian's
restic, made in the test's folder, snapshots dated with `restic backup --time`) and typed states
for the rest: what counts as a copy, what is off site, what dies with the array, and what holds."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.alerting.conditions import BUILTIN
from app.alerting.engine import evaluate
from app.data.config import DataConfig, DataSet
from app.data.watch import DataWatch
from app.scheduler import Snapshot
from app.snapshot import CollectorStatus
from collectors.host.restic.state import ResticState
from tests.collectors.host.restic.test_restic import Repo, collector
from tests.states import one

H = 3600.0


def nas(missing: int = 0, level: str = "raid6") -> Snapshot:
    snap = Snapshot(host="nas")
    snap.states["host"] = one("host", {"filesystems": [{"mountpoint": "/", "device": "/dev/sda2", "fstype": "ext4"},
                                                       {"mountpoint": "/srv", "device": "/dev/md0", "fstype": "ext4"},
                                                       {"mountpoint": "/mnt/usb", "device": "/dev/sdm1"}]})
    snap.states["mdraid"] = one("mdraid", {"arrays": [{"name": "md0", "level": level, "disks_total": 12,
                                                       "missing": missing, "sync_action": "recovery" if missing else "idle",
                                                       "sync_ratio": 0.4 if missing else None}]})
    for name in ("host", "mdraid", "restic", "borg"):
        snap.statuses[name] = CollectorStatus(name=name, interval=60.0, timeout=20.0, up=True)
    return snap


def borg(newest_ago: float | None, now: float, error: str | None = None) -> object:
    groups = [] if newest_ago is None else [{"host": "nas", "paths": ["/srv"], "newest": now - newest_ago, "count": 9}]
    return one("borg", {"repos": [{"name": "offsite", "location": "ssh://backup@far.example/./borg", "offsite": True,
                                   "groups": groups, "error": error}]})


PHOTOS = DataConfig(sets=[DataSet(name="photos", path="/srv/photos", offsite_required=True)])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("RESTIC_CACHE_DIR", str(tmp_path / "cache"))
    return Repo(tmp_path)


def restic_state(repo: Repo) -> ResticState:
    state = collector(repo).collect().state
    assert isinstance(state, ResticState)
    return state


def photos_set(repo: Repo, **kw: object) -> DataConfig:
    return DataConfig(sets=[DataSet(name="photos", path=str(repo.data), **kw)])  # type: ignore[arg-type]


def mounted_at_srv(snap: Snapshot, repo: Repo) -> None:
    """The test's folder stands for /srv on md0 (the repository's snapshots name its real path)."""
    host = snap.states["host"]
    snap.states["host"] = type(host).model_validate({**host.model_dump(), "filesystems": [
        *host.model_dump()["filesystems"], {"mountpoint": str(repo.data.parent), "device": "/dev/md0", "fstype": "ext4"}]})


def test_a_fresh_real_restic_snapshot_protects_the_set_and_a_three_day_old_one_does_not(repo: Repo) -> None:
    repo.backup(days_ago=0.1)
    snap, w, now = nas(), DataWatch(), time.time()
    mounted_at_srv(snap, repo)
    snap.states["restic"] = restic_state(repo)
    assert w.update(snap, photos_set(repo), now) == []
    v = w.verdicts[0]
    assert v.headline == "photos: 1 copy, none off site; the newest is 2 h old"
    assert v.unprotected is False and v.at_risk is False
    assert v.lost == ["if md0 died now: what changed in the last 2 h (since restic nas-local)",
                      "if the building burned: all of it (no copy off site)"]

    repo.restic("forget", *(s["id"] for s in json.loads(repo.restic("snapshots", "--json").stdout)))
    repo.backup(days_ago=3)
    snap.states["restic"] = restic_state(repo)
    conds = w.update(snap, photos_set(repo), time.time())
    assert [(c.rule, c.subject, c.summary) for c in conds] == [(
        "data_unprotected", "photos", f"photos ({repo.data}) is not protected: the newest copy (restic nas-local) "
                                      "is 3 days old, older than 26 h")]
    assert w.verdicts[0].headline == ("photos: 1 copy, none off site; the newest copy (restic nas-local) is 3 days "
                                      "old, older than 26 h")
    assert w.level_of("photos") == "warning"


def test_an_off_site_copy_a_day_too_old_leaves_a_set_that_needs_one_unprotected() -> None:
    snap, w, now = nas(missing=1), DataWatch(), time.time()
    snap.states["restic"] = one("restic", {"repos": [{"name": "nas-local", "location": "/mnt/usb/restic", "groups": [
        {"host": "nas", "paths": ["/srv"], "newest": now - 2 * H, "count": 30}]}]})
    snap.states["borg"] = borg(50 * H, now)
    conds = w.update(snap, PHOTOS, now)
    assert [(c.rule, c.summary) for c in conds] == [("data_unprotected", "photos (/srv/photos) is not protected: "
                                                     "the off-site copy (borg offsite) is 2 days old, older than 26 h")]
    v = w.verdicts[0]
    assert v.headline == "photos: 2 copies, 1 off site; the off-site copy (borg offsite) is 2 days old, older than 26 h"
    assert v.home.words == "RAID6 on md0, 1 of 2 parity disks left while md0 rebuilds (40%)"
    assert v.at_risk is False  # one more disk may go: redundancy is reduced, not gone
    assert v.lost[1] == "if the building burned: what changed in the last 2 days (since borg offsite)"
    metrics = "".join(body for _, body in snap.blocks["data"].values())
    assert 'rackpulse_data_copies{host="nas",offsite="true",set="photos"} 1' in metrics
    assert 'rackpulse_data_protected{host="nas",set="photos"} 0' in metrics
    assert 'rackpulse_data_redundancy_left{host="nas",set="photos"} 1' in metrics


def test_no_redundancy_left_and_no_fresh_copy_is_data_at_risk_critical() -> None:
    snap, w, now = nas(missing=2), DataWatch(), time.time()
    snap.states["borg"] = borg(50 * H, now)
    conds = w.update(snap, PHOTOS, now)
    assert sorted(c.rule for c in conds) == ["data_at_risk", "data_unprotected"]
    risk = next(c for c in conds if c.rule == "data_at_risk")
    assert risk.summary == ("photos (/srv/photos) is at risk: no redundancy left under it (RAID6 on md0, 0 of 2 parity "
                            "disks left while md0 rebuilds (40%)); the newest copy (borg offsite) is 2 days old, older "
                            "than 26 h; the off-site copy (borg offsite) is 2 days old, older than 26 h")
    states, _ = evaluate(conds, BUILTIN, {}, now)
    assert {k: s.severity for k, s in states.items()} == {("data_at_risk", "photos"): "critical",
                                                         ("data_unprotected", "photos"): "warning"}
    assert w.level_of("photos") == "critical"


def test_a_copy_on_the_same_array_is_listed_and_not_counted() -> None:
    snap, w, now = nas(), DataWatch(), time.time()
    snap.states["restic"] = one("restic", {"repos": [{"name": "on-md0", "location": "/srv/backup/restic", "groups": [
        {"host": "nas", "paths": ["/srv/photos"], "newest": now - H}]}]})
    conds = w.update(snap, DataConfig(sets=[DataSet(name="photos", path="/srv/photos")]), now)
    assert [c.rule for c in conds] == ["data_unprotected"]
    v = w.verdicts[0]
    assert v.headline == "photos: 0 copies (and 1 on the same array, lost with it); no copy off md0 at all"
    assert v.reasons == ["no copy off md0 at all"]


def test_a_repository_that_will_not_open_holds_the_sets_alert_and_a_new_one_says_nothing() -> None:
    snap, w, now = nas(), DataWatch(), time.time()
    snap.states["borg"] = borg(50 * H, now)
    firing = w.update(snap, PHOTOS, now)
    states, _ = evaluate(firing, BUILTIN, {}, now)
    snap.states["borg"] = borg(None, now, error="passphrase supplied in BORG_PASSPHRASE is incorrect")
    held = w.update(snap, PHOTOS, now + 60)
    assert held == firing  # not resolved: nothing read says the copy is fresh now
    assert w.verdicts[0].unknown == ["borg offsite: passphrase supplied in BORG_PASSPHRASE is incorrect"]
    _, events = evaluate(held, BUILTIN, states, now + 60)
    assert [e.kind for e in events] == []
    # a server just started: borg not run yet, nothing said yet (not "unprotected" for a minute)
    fresh, snap.statuses["borg"] = DataWatch(), CollectorStatus(name="borg", interval=60.0, timeout=20.0)
    snap.states.pop("borg")
    assert fresh.update(snap, PHOTOS, now) == [] and fresh.verdicts[0].unknown == ["borg: not read yet"]


def test_a_repository_that_never_covered_a_set_does_not_hold_it() -> None:
    snap, w, now = nas(), DataWatch(), time.time()
    sets = DataConfig(sets=[DataSet(name="photos", path="/srv/photos"), DataSet(name="music", path="/srv/music")])
    snap.states["restic"] = one("restic", {"repos": [{"name": "nas-local", "location": "/mnt/usb/restic", "groups": [
        {"host": "nas", "paths": ["/srv/photos"], "newest": now - H}]}]})
    assert [(c.rule, c.subject) for c in w.update(snap, sets, now)] == [("data_unprotected", "music")]
    snap.states["restic"] = one("restic", {"repos": [{"name": "nas-local", "location": "/mnt/usb/restic",
                                                      "error": "wrong password or no key found"}]})
    assert [(c.rule, c.subject) for c in w.update(snap, sets, now)] == [("data_unprotected", "music")]
    assert [v.unprotected for v in w.verdicts] == [None, True]


def test_without_named_sets_each_array_mount_is_one() -> None:
    snap, w, now = nas(), DataWatch(), time.time()
    w.update(snap, DataConfig(), now)
    assert [(v.set.name, v.set.path) for v in w.verdicts] == [("srv", "/srv")] and w.discovered


def test_guests_and_jobs_named_for_a_set_are_its_copies() -> None:
    snap, w, now = nas(), DataWatch(), time.time()
    snap.states["pbs"] = one("pbs", {"groups": [{"store": "main", "type": "vm", "id": "101", "last_backup": now - H,
                                                 "verified": "ok", "count": 7}]})
    snap.states["heartbeats"] = one("heartbeats", {"beats": [{"name": "rsync-photos", "last_success": now - 3 * H,
                                                              "status": "failed"}]})
    s = DataSet(name="vm101", path="/var/lib/vz", guests=["101"], heartbeats=["rsync-photos"])
    assert w.update(snap, DataConfig(sets=[s]), now) == []
    v = w.verdicts[0]
    assert [(c.label, c.check_ok, c.note) for c in v.copies] == [("PBS main/vm/101", True, ""),
                                                                 ("job rsync-photos", None, "its last run failed")]
    assert v.home.kind == "disk" and v.at_risk is False  # fresh copies: a single disk is not at risk


def test_a_state_that_cannot_be_judged_keeps_what_was_said_and_says_why_once(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    snap, w, now = nas(), DataWatch(), time.time()
    snap.states["borg"] = borg(50 * H, now)
    said = w.update(snap, PHOTOS, now)
    assert [c.rule for c in said] == ["data_unprotected"]

    def broken(*_: object) -> None:
        raise ValueError("a state no one expected")

    monkeypatch.setattr("app.data.watch.judge", broken)
    with caplog.at_level("WARNING", logger="app.data"):
        assert w.update(snap, PHOTOS, now + 30) == said
        assert w.update(snap, PHOTOS, now + 60) == said
    assert [r.getMessage() for r in caplog.records] == ["data sets not judged: a state no one expected"]


def test_a_plug_ins_state_of_another_type_is_left_out_not_a_crash() -> None:
    snap, w, now = nas(), DataWatch(), time.time()
    snap.states["mdraid"] = snap.states["host"]  # what a bug elsewhere could leave there
    w.update(snap, PHOTOS, now)
    assert w.verdicts[0].home.words == "md array md0, not read yet (the mdraid collector)"


def test_a_zfs_replica_on_an_agent_host_is_a_copy_and_a_silent_host_holds_the_set() -> None:
    from app.data.config import Replica

    snap, w, now = nas(), DataWatch(), time.time()
    far = Snapshot(host="pi-offsite")
    far.states["zfs"] = one("zfs", {"snapshots": [{"dataset": "backup/nas/photos", "newest": now - 3 * H, "count": 48}]})
    sets = DataConfig(sets=[DataSet(name="photos", path="/srv/photos", offsite_required=True,
                                    replicas=[Replica(dataset="backup/nas/photos", host="pi-offsite", offsite=True)])])
    assert w.update(snap, sets, now, {"pi-offsite": far}) == []
    (copy,) = w.verdicts[0].copies
    assert (copy.label, copy.offsite, copy.count) == ("ZFS replica pi-offsite:backup/nas/photos", True, 48)
    assert w.verdicts[0].headline == "photos: 1 copy, 1 off site; the newest is 3 h old"

    far.states["zfs"] = one("zfs", {"snapshots": [{"dataset": "backup/nas/photos", "newest": now - 50 * H}]})
    stale = w.update(snap, sets, now, {"pi-offsite": far})
    assert [c.summary for c in stale] == ["photos (/srv/photos) is not protected: the newest copy (ZFS replica "
                                          "pi-offsite:backup/nas/photos) is 2 days old, older than 26 h; the off-site "
                                          "copy (ZFS replica pi-offsite:backup/nas/photos) is 2 days old, older than 26 h"]
    # the agent host goes silent: its snapshots are not here; what was said holds
    assert w.update(snap, sets, now + 60, {}) == stale
    assert w.verdicts[0].unknown == ["ZFS replica pi-offsite:backup/nas/photos: no ZFS snapshots from pi-offsite"]
