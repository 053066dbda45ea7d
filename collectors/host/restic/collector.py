"""restic repositories: per host and set of paths, the newest snapshot's time and how many are
kept (`restic snapshots --json --no-lock`), the repository's size when asked (`restic stats`), and
`restic check` when check_every is set. Read-only: never backup, forget, prune, unlock or repair.

The password reaches restic only as --password-file; an address with a password only as
--repository-file (config refuses it inline). A check takes the repository's exclusive lock and
can take hours: it runs in a thread of its own, and each run reports the last one that ended."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    Runner,
    Sample,
)
from collectors.context import HostContext
from collectors.host.restic import parse
from collectors.host.restic.config import ResticConfig, ResticRepo
from collectors.host.restic.state import ResticCheck, ResticRepoView, ResticState
from collectors.state import State

KIND = "restic"


def repo_flags(repo: ResticRepo) -> list[str]:
    where = ["--repository-file", str(repo.repository_file)] if repo.repository_file else ["-r", repo.repository]
    return [*where, "--password-file", str(repo.password_file)]


def location(repo: ResticRepo) -> str:
    return repo.repository or f"the address in {repo.repository_file}"


class ResticCollector(Collector):
    name: ClassVar[str] = "restic"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_backup_newest_timestamp_seconds": MetricSpec(
            "When the newest snapshot of a host and its paths was taken (Unix time)."),
        "rackpulse_backup_snapshots": MetricSpec("Snapshots a repository keeps of a host and its paths."),
        "rackpulse_backup_repo_readable": MetricSpec("1 while the repository can be opened.",
                                                     states=("cannot be opened", "readable")),
        "rackpulse_backup_repo_size_bytes": MetricSpec("What the repository stores (restic stats, raw data)."),
        "rackpulse_backup_check_ok": MetricSpec("The last check's result.", states=("errors found", "sound")),
        "rackpulse_backup_last_check_timestamp_seconds": MetricSpec("When the last check ended (Unix time)."),
    }

    def __init__(self, cfg: ResticConfig, runner: Runner, clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.runner, self.clock = cfg, runner, clock
        self._checks: dict[str, ResticCheck] = {}
        self._notes: dict[str, str] = {}
        self._running: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def restore(self, state: State) -> None:
        if isinstance(state, ResticState):
            for r in state.repos:
                if r.check is not None:
                    self._checks[r.name] = r.check

    def collect(self) -> CollectResult:
        if not self.cfg.repos:
            raise NoData("no restic repository configured in [[collectors.restic.repos]]")
        views = [self._read(repo) for repo in self.cfg.repos]
        result = CollectResult(state=ResticState(repos=views))
        for v in views:
            self._samples(v, result)
        return result

    def _run(self, repo: ResticRepo, *args: str, timeout: float | None = None) -> str:
        r = self.runner([*self.cfg.restic, *repo_flags(repo), *args], timeout or self.cfg.command_timeout)
        if r.returncode != 0:
            raise CollectorError(parse.failure(r.returncode, r.stderr.decode(errors="replace")))
        return r.stdout.decode(errors="replace")

    def _read(self, repo: ResticRepo) -> ResticRepoView:
        base = {"name": repo.name, "location": location(repo), "offsite": repo.offsite, "max_age": repo.max_age,
                "check_every": repo.check_every}
        try:
            snapshots = parse.parse_snapshots(self._run(repo, "snapshots", "--json", "--no-lock"))
            size = parse.parse_stats(self._run(repo, "stats", "--json", "--no-lock", "--mode", "raw-data")) \
                if repo.stats else None
        except CollectorError as exc:
            return ResticRepoView(**base, error=str(exc), check=self._checks.get(repo.name))
        groups, missing = parse.followed(snapshots, repo.hosts, repo.paths, repo.tags)
        self._maybe_check(repo)
        with self._lock:
            check, note = self._checks.get(repo.name), self._notes.get(repo.name)
            checking = repo.name in self._running
        return ResticRepoView(**base, groups=groups, missing=missing, size_bytes=size, check=check,
                              check_note=note, checking=checking)

    def _maybe_check(self, repo: ResticRepo) -> None:
        if repo.check_every is None:
            return
        with self._lock:
            last = self._checks.get(repo.name)
            due = last is None or self.clock() - last.ended >= repo.check_every
            if not due or repo.name in self._running:
                return
            t = threading.Thread(target=self._check, args=(repo,), name=f"restic check {repo.name}", daemon=True)
            self._running[repo.name] = t
        t.start()

    def _check(self, repo: ResticRepo) -> None:
        """One `restic check`, its result kept for the runs that follow. A check that could not take
        the lock (a backup or prune runs) is noted and tried again on the next run."""
        args = ["check", *(["--read-data-subset", repo.check_read_data] if repo.check_read_data else [])]
        try:
            r = self.runner([*self.cfg.restic, *repo_flags(repo), *args], repo.check_timeout)
            err = r.stderr.decode(errors="replace")
            with self._lock:
                if parse.locked(r.returncode, err):
                    self._notes[repo.name] = "check not run: " + parse.failure(r.returncode, err)
                else:
                    ok, first = parse.check_errors(r.returncode, r.stdout.decode(errors="replace"), err)
                    self._checks[repo.name] = ResticCheck(ended=self.clock(), ok=ok, error=first)
                    self._notes.pop(repo.name, None)
        except CollectorError as exc:  # timed out, or restic is gone: said, tried again next run
            with self._lock:
                self._notes[repo.name] = f"check not run: {exc}"
        finally:
            with self._lock:
                self._running.pop(repo.name, None)

    @staticmethod
    def _samples(v: ResticRepoView, result: CollectResult) -> None:
        s, lab = result.samples, {"kind": KIND, "repo": v.name}
        s.append(Sample.of("rackpulse_backup_repo_readable", v.error is None, **lab))
        for g in v.groups:
            glab = {**lab, "host": g.host, "path": ",".join(g.paths)}
            s.append(Sample.of("rackpulse_backup_newest_timestamp_seconds", g.newest, **glab))
            s.append(Sample.of("rackpulse_backup_snapshots", g.count, **glab))
        if v.size_bytes is not None:
            s.append(Sample.of("rackpulse_backup_repo_size_bytes", v.size_bytes, **lab))
        if v.check is not None:
            s.append(Sample.of("rackpulse_backup_check_ok", v.check.ok, **lab))
            s.append(Sample.of("rackpulse_backup_last_check_timestamp_seconds", v.check.ended, **lab))
        result.entities.append(Entity("backup repository", f"{KIND}/{v.name}", {"location": v.location}))


def build(c: ResticConfig, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.restic]."""
    return ResticCollector(c, runner)
