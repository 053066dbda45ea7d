"""restic with real repositories (Debian's restic), made in each test's own folder: snapshots
dated in the past with `restic backup --time`, a pack cut short for a failed check, a wrong
password, and a repository another restic holds locked."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from app.alerting.conditions import BUILTIN, Conditions
from app.alerting.engine import evaluate
from app.scheduler import Snapshot
from collectors.base import NoData, run_command
from collectors.host.restic.collector import ResticCollector
from collectors.host.restic.config import ResticConfig
from collectors.host.restic.state import ResticState

DAY = 86400.0


class Repo:
    def __init__(self, root: Path) -> None:
        self.path, self.password = root / "repo", root / "password"
        self.data = root / "srv" / "photos"
        self.data.mkdir(parents=True)
        (self.data / "a.jpg").write_bytes(os.urandom(100_000))
        self.password.write_text("correct horse\n")
        self.restic("init")

    def restic(self, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["restic", "-r", str(self.path), "--password-file", str(self.password), "-q", *args],
                              check=True, capture_output=True, text=True, timeout=120, **kw)  # type: ignore[call-overload]

    def backup(self, host: str = "nas", days_ago: float = 0.0) -> None:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() - days_ago * DAY))
        self.restic("backup", "--host", host, "--time", when, str(self.data))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("RESTIC_CACHE_DIR", str(tmp_path / "cache"))  # not the user's ~/.cache
    return Repo(tmp_path)


def collector(repo: Repo, **kw: object) -> ResticCollector:
    cfg = ResticConfig(repos=[{"name": "nas-local", "repository": str(repo.path), "password_file": repo.password,
                               **kw}])
    return ResticCollector(cfg, lambda argv, timeout: run_command(argv, timeout))


def conditions(state: ResticState, previous: dict | None = None) -> list:
    snap = Snapshot(host="nas")
    snap.states["restic"] = state
    return Conditions().build(snap, previous=previous or {}, now=time.time())


def checked(c: ResticCollector, repo: str = "nas-local", timeout: float = 6 * 3600) -> ResticState:
    """Run the collector until the check it started in its thread has ended (the check's own
    timeout bounds the wait), then once more: the run that reports it."""
    c.collect()
    deadline = time.monotonic() + timeout
    while repo in c.checks.running and time.monotonic() < deadline:
        c.checks.running[repo].join(1)
    state = c.collect().state
    assert isinstance(state, ResticState)
    return state


def test_a_three_day_old_snapshot_fires_backup_stale_naming_the_repository_and_a_fresh_one_resolves_it(
        repo: Repo) -> None:
    repo.backup(days_ago=3)
    c = collector(repo)
    state = c.collect().state
    assert isinstance(state, ResticState)
    (g,) = state.repos[0].groups
    assert g.host == "nas" and g.paths == [str(repo.data)] and time.time() - g.newest > 2.9 * DAY
    (stale,) = [x for x in conditions(state) if x.rule == "backup_stale"]
    assert "restic nas-local" in stale.summary and "3 days old, older than 26 h" in stale.summary
    assert stale.labels["repo"] == "nas-local" and stale.labels["host"] == "nas"
    states, _ = evaluate([stale], BUILTIN, {}, time.time())

    repo.backup()
    fresh = c.collect().state
    assert isinstance(fresh, ResticState) and fresh.repos[0].groups[0].count == 2
    conds = conditions(fresh, states)
    assert not [x for x in conds if x.rule == "backup_stale"]
    _, events = evaluate(conds, BUILTIN, states, time.time() + 60)
    assert ("resolved", "backup_stale") in [(e.kind, e.alert.rule) for e in events]


def test_a_followed_host_without_any_snapshot_is_stale_too(repo: Repo) -> None:
    repo.backup(host="nas")
    state = collector(repo, hosts=["nas", "laptop"], paths=[str(repo.data.parent)]).collect().state
    assert isinstance(state, ResticState)
    assert state.repos[0].missing == [f"nas:{repo.data.parent}", f"laptop:{repo.data.parent}"]  # /srv: not covered
    state = collector(repo, hosts=["nas", "laptop"], paths=[str(repo.data / "a.jpg")]).collect().state
    assert isinstance(state, ResticState) and state.repos[0].missing == [f"laptop:{repo.data / 'a.jpg'}"]
    assert [x.summary for x in conditions(state) if x.rule == "backup_stale"] == [
        f"restic nas-local: no snapshot of laptop:{repo.data / 'a.jpg'}"]


def test_a_sound_check_then_a_pack_cut_short_fires_backup_check_failed_with_restics_first_error(repo: Repo) -> None:
    repo.backup()
    c = collector(repo, check_every=60.0, stats=True)
    first = checked(c)
    assert first.repos[0].check is not None and first.repos[0].check.ok and first.repos[0].size_bytes
    assert not [x for x in conditions(first) if x.rule == "backup_check_failed"]

    pack = max((p for p in (repo.path / "data").rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    pack.chmod(0o600)
    with pack.open("r+b") as f:
        f.truncate(1000)  # the file's data cut off, as a disk or a copy that failed leaves it
    c.checks.last["nas-local"] = c.checks.last["nas-local"].model_copy(update={"ended": time.time() - 120})  # due again
    state = checked(c)
    check = state.repos[0].check
    assert check is not None and not check.ok and check.error and "unexpected file size" in check.error
    (failed,) = [x for x in conditions(state) if x.rule == "backup_check_failed"]
    assert failed.severity == "critical" and "restic check of nas-local found errors" in failed.summary
    assert state.repos[0].groups  # and its snapshots are still read and shown


def test_a_wrong_password_is_one_clear_error_and_holds_the_repositorys_alerts(repo: Repo) -> None:
    repo.backup(days_ago=3)
    c = collector(repo)
    state = c.collect().state
    assert isinstance(state, ResticState)
    states, _ = evaluate(conditions(state), BUILTIN, {}, time.time())
    assert [s.state for k, s in states.items() if k[0] == "backup_stale"] == ["firing"]

    repo.password.write_text("Tr0ub4dor&3\n")
    wrong = c.collect().state
    assert isinstance(wrong, ResticState)
    assert wrong.repos[0].error == "wrong password or no key found"
    assert wrong.unreadable_sources() == {"nas-local": None}
    conds = conditions(wrong, states)
    assert [x.summary for x in conds if x.rule == "backup_repo_unreachable"] == [
        "restic repository nas-local cannot be opened: wrong password or no key found"]
    _, events = evaluate(conds, BUILTIN, states, time.time() + 60)
    assert [e for e in events if e.kind == "resolved" and e.alert.rule == "backup_stale"] == []  # held


def test_no_repository_there_is_said_so(tmp_path: Path, repo: Repo) -> None:
    c = ResticCollector(ResticConfig(repos=[{"name": "gone", "repository": str(tmp_path / "nope"),
                                             "password_file": repo.password}]),
                        lambda argv, timeout: run_command(argv, timeout))
    state = c.collect().state
    assert isinstance(state, ResticState) and state.repos[0].error == "no repository there (restic found no config file)"


def test_a_repository_another_restic_holds_locked_is_still_read_and_its_check_waits_for_the_lock(
        repo: Repo, tmp_path: Path) -> None:
    repo.backup()
    fifo = tmp_path / "stdin"
    os.mkfifo(fifo)
    # A backup from a pipe nobody writes to yet: it holds its lock until the pipe closes.
    backup = subprocess.Popen(["restic", "-r", str(repo.path), "--password-file", str(repo.password), "-q",
                               "backup", "--stdin", "--stdin-filename", "db.sql"], stdin=os.open(fifo, os.O_RDONLY | os.O_NONBLOCK),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    writer = os.open(fifo, os.O_WRONLY)
    try:
        deadline = time.monotonic() + 60  # restic's own start: a lock file appears
        while not any((repo.path / "locks").iterdir()) and time.monotonic() < deadline:
            time.sleep(0.1)
        c = collector(repo, check_every=60.0)
        state = checked(c)
        r = state.repos[0]
        assert r.groups and r.error is None  # read with --no-lock
        assert r.check is None and r.check_note and "already locked" in r.check_note
        assert not [x for x in conditions(state) if x.rule in ("backup_check_failed", "backup_repo_unreachable")]
    finally:
        os.write(writer, b"-- a dump\n")
        os.close(writer)
        backup.wait(60)
    state = checked(c)  # the lock is gone: the check runs now
    assert state.repos[0].check is not None and state.repos[0].check.ok and state.repos[0].check_note is None


def test_no_repository_configured_is_no_data() -> None:
    with pytest.raises(NoData):
        ResticCollector(ResticConfig(), lambda argv, timeout: run_command(argv, timeout)).collect()


def test_an_address_with_a_password_is_refused_in_the_config() -> None:
    with pytest.raises(ValueError, match="repository_file"):
        ResticConfig(repos=[{"name": "r", "repository": "rest:https://me:s3cret@backup.lan:8000/nas",
                             "password_file": "/p"}])


