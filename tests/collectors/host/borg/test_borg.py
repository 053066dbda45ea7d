"""borg with real repositories (Debian's borgbackup 1.2), made in each test's own folder:
archives dated in the past with `borg create --timestamp`, a segment with a flipped byte for a
failed check, a wrong passphrase, a repository `borg with-lock` holds; and restic beside it,
whose alerts share borg's rules but never its holds."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from app.alerting.conditions import BUILTIN, Conditions
from app.alerting.engine import AlertState, Condition, evaluate
from app.alerting.sources import RuleSources
from app.scheduler import Snapshot
from collectors.backup import BackupGroup, BackupRepoView
from collectors.base import NoData, run_command
from collectors.host.borg.collector import BorgCollector
from collectors.host.borg.config import BorgConfig
from collectors.host.borg.parse import created_paths
from collectors.host.borg.state import BorgState
from collectors.host.restic.state import ResticState

DAY = 86400.0


class Repo:
    def __init__(self, root: Path) -> None:
        self.path, self.passphrase = root / "repo", root / "passphrase"
        self.data = root / "srv" / "documents"
        self.data.mkdir(parents=True)
        (self.data / "tax.pdf").write_bytes(os.urandom(60_000))
        self.passphrase.write_text("correct horse\n")
        self.env = {**os.environ, "BORG_BASE_DIR": str(root / "base"),
                    "BORG_PASSCOMMAND": f"cat {self.passphrase}"}
        self.borg("init", "-e", "repokey", str(self.path))

    def borg(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["borg", *args], check=True, capture_output=True, text=True, timeout=120, env=self.env)

    def create(self, name: str, days_ago: float = 0.0) -> None:
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - days_ago * DAY))
        self.borg("create", "--timestamp", when, f"{self.path}::{name}", str(self.data))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("BORG_BASE_DIR", str(tmp_path / "base"))  # borg's cache and keys: not the user's home
    return Repo(tmp_path)


def collector(repo: Repo, **kw: object) -> BorgCollector:
    cfg = BorgConfig(repos=[{"name": "offsite", "repository": str(repo.path), "passphrase_file": repo.passphrase,
                             "offsite": True, **kw}])
    return BorgCollector(cfg, lambda argv, timeout: run_command(argv, timeout))


def read(c: BorgCollector) -> BorgState:
    state = c.collect().state
    assert isinstance(state, BorgState)
    return state


def conditions(*states: BorgState | ResticState, previous: dict[tuple[str, str], AlertState] | None = None
               ) -> list[Condition]:
    snap = Snapshot(host="nas")
    for s in states:
        snap.states[type(s).kind] = s
    return Conditions().build(snap, previous=previous or {}, now=time.time())


def checked(c: BorgCollector, timeout: float = 6 * 3600) -> BorgState:
    """Runs until the check started in its own thread has ended (bounded by the check's timeout),
    then once more: the run that reports it."""
    c.collect()
    deadline = time.monotonic() + timeout
    while "offsite" in c.checks.running and time.monotonic() < deadline:
        c.checks.running["offsite"].join(1)
    return read(c)


def test_a_three_day_old_archive_fires_backup_stale_naming_the_repository_and_a_fresh_one_resolves_it(
        repo: Repo) -> None:
    repo.create("nas-1", days_ago=3)
    c = collector(repo)
    state = read(c)
    (g,) = state.repos[0].groups
    assert g.paths == [str(repo.data)] and g.newest_id == "nas-1" and state.repos[0].size_bytes
    (stale,) = [x for x in conditions(state) if x.rule == "backup_stale"]
    assert stale.summary.startswith("borg offsite: the newest snapshot of ") and "3 days old" in stale.summary
    assert stale.subject.startswith("borg/offsite/") and stale.labels["kind"] == "borg"
    states, _ = evaluate([stale], BUILTIN, {}, time.time())

    repo.create("nas-2")
    fresh = read(c)
    assert fresh.repos[0].groups[0].count == 2
    conds = conditions(fresh, previous=states)
    _, events = evaluate(conds, BUILTIN, states, time.time() + 60)
    assert ("resolved", "backup_stale") in [(e.kind, e.alert.rule) for e in events]


def test_a_flipped_byte_in_a_segment_fails_the_check_with_borgs_first_error_line(repo: Repo) -> None:
    repo.create("nas-1")
    c = collector(repo, check_every=60.0)
    assert checked(c).repos[0].check.ok  # type: ignore[union-attr]
    segment = max((p for p in (repo.path / "data").rglob("*") if p.is_file() and p.name.isdigit()),
                  key=lambda p: p.stat().st_size)
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0xFF
    segment.chmod(0o600)
    segment.write_bytes(bytes(data))
    c.checks.last["offsite"] = c.checks.last["offsite"].model_copy(update={"ended": time.time() - 120})  # due again
    state = checked(c)
    check = state.repos[0].check
    assert check is not None and not check.ok and check.error and "integrity error" in check.error.lower()
    (failed,) = [x for x in conditions(state) if x.rule == "backup_check_failed"]
    assert failed.severity == "critical" and failed.subject == "borg/offsite"


def test_a_wrong_passphrase_is_one_clear_error_and_holds_the_repositorys_alerts(repo: Repo) -> None:
    repo.create("nas-1", days_ago=3)
    c = collector(repo)
    states, _ = evaluate(conditions(read(c)), BUILTIN, {}, time.time())
    assert [s.state for k, s in states.items() if k[0] == "backup_stale"] == ["firing"]
    repo.passphrase.write_text("Tr0ub4dor&3\n")
    wrong = read(c)
    assert wrong.repos[0].error == "wrong passphrase (passphrase_file)"
    conds = conditions(wrong, previous=states)
    assert [x.summary for x in conds if x.rule == "backup_repo_unreachable"] == [
        "borg repository offsite cannot be opened: wrong passphrase (passphrase_file)"]
    _, events = evaluate(conds, BUILTIN, states, time.time() + 60)
    assert [e for e in events if e.kind == "resolved"] == []  # held


def test_no_repository_there_is_said_so(tmp_path: Path, repo: Repo) -> None:
    cfg = BorgConfig(repos=[{"name": "gone", "repository": str(tmp_path / "nope"), "passphrase_file": repo.passphrase}])
    state = BorgCollector(cfg, lambda argv, timeout: run_command(argv, timeout)).collect().state
    assert isinstance(state, BorgState) and state.repos[0].error == "no repository there"


def test_a_repository_borg_holds_locked_is_still_read_and_its_check_waits_for_the_lock(repo: Repo) -> None:
    repo.create("nas-1")
    holder = subprocess.Popen(["borg", "with-lock", str(repo.path), "sleep", "600"], env=repo.env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60  # borg's own start: its lock appears
        while not (repo.path / "lock.exclusive").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        c = collector(repo, check_every=60.0)
        state = checked(c)
        r = state.repos[0]
        assert r.groups and r.error is None  # read with --bypass-lock
        assert r.check is None and r.check_note and "lock" in r.check_note
    finally:
        holder.terminate()
        holder.wait(60)
    assert checked(c).repos[0].check.ok  # type: ignore[union-attr]  # the lock gone: the check ran


def test_restics_repository_going_away_holds_restics_alerts_only_not_borgs(repo: Repo) -> None:
    """backup_stale is raised by both plug-ins: each alert is its own plug-in's (its subject says
    which), so restic's repository that cannot be opened holds restic's, and borg's resolves."""
    repo.create("nas-1", days_ago=3)
    c = collector(repo)
    old = time.time() - 3 * DAY
    restic_stale = ResticState(repos=[BackupRepoView(name="local", location="/mnt/r", groups=[
        BackupGroup(host="nas", paths=["/srv/photos"], newest=old)])])
    states, _ = evaluate(conditions(read(c), restic_stale), BUILTIN, {}, time.time())
    assert sorted(k[1].split("/")[0] for k in states if k[0] == "backup_stale") == ["borg", "restic"]

    repo.create("nas-2")
    restic_gone = ResticState(repos=[BackupRepoView(name="local", location="/mnt/r", error="wrong password")])
    conds = conditions(read(c), restic_gone, previous=states)
    _, events = evaluate(conds, BUILTIN, states, time.time() + 60)
    resolved = [e.alert.subject for e in events if e.kind == "resolved"]
    assert [s for s in resolved if s.startswith("borg/")] and not [s for s in resolved if s.startswith("restic/")]
    assert RuleSources().of("backup_stale", "borg/offsite/nas:/srv") == "borg"
    assert RuleSources().of("backup_stale", "restic/local/nas:/srv") == "restic"


@pytest.mark.parametrize(("line", "paths"), [
    (["/usr/bin/borg", "create", "--timestamp", "2026-12-01T10:00:00", "/r::nas-1", "/srv/documents"], ("/srv/documents",)),
    (["borg", "create", "-C", "zstd", "ssh://b@h/./r::{hostname}-{now}", "/srv", "/etc", "--exclude", "/srv/tmp"],
     ("/srv", "/etc")),
    (["borg", "create", "::nas-1", "/home", "-e", "*.cache"], ("/home",)),
    (["borg", "prune", "/r"], ()),
])
def test_an_archives_paths_are_read_from_its_command_line(line: list[str], paths: tuple[str, ...]) -> None:
    assert created_paths(line) == paths


def test_no_repository_configured_is_no_data() -> None:
    with pytest.raises(NoData):
        BorgCollector(BorgConfig(), lambda argv, timeout: run_command(argv, timeout)).collect()
