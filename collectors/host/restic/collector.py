"""restic repositories: per host and set of paths, the newest snapshot's time and how many are
kept (`restic snapshots --json --no-lock`), the repository's size when asked (`restic stats`), and
`restic check` when check_every is set. Read-only: never backup, forget, prune, unlock or repair.

The password reaches restic only as --password-file; an address with a password only as
--repository-file (config refuses it inline). A check takes the repository's exclusive lock and
can take hours: it runs in a thread of its own, and each run reports the last one that ended."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from collectors import backup
from collectors.base import Collector, CollectorError, CollectResult, MetricSpec, NoData, Runner
from collectors.context import HostContext
from collectors.host.restic import parse
from collectors.host.restic.config import ResticConfig, ResticRepo
from collectors.host.restic.state import ResticState
from collectors.state import State

KIND = "restic"


def repo_flags(repo: ResticRepo) -> list[str]:
    where = ["--repository-file", str(repo.repository_file)] if repo.repository_file else ["-r", repo.repository]
    return [*where, "--password-file", str(repo.password_file)]


def location(repo: ResticRepo) -> str:
    return repo.repository or f"the address in {repo.repository_file}"


class ResticCollector(Collector):
    name: ClassVar[str] = "restic"
    metrics: ClassVar[dict[str, MetricSpec]] = backup.METRICS

    def __init__(self, cfg: ResticConfig, runner: Runner, clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.runner = cfg, runner
        self.checks = backup.Checks(clock)

    def restore(self, state: State) -> None:
        if isinstance(state, ResticState):
            self.checks.restore(state)

    def collect(self) -> CollectResult:
        if not self.cfg.repos:
            raise NoData("no restic repository configured in [[collectors.restic.repos]]")
        views = [self._read(repo) for repo in self.cfg.repos]
        result = CollectResult(state=ResticState(repos=views))
        for v in views:
            backup.samples(KIND, v, result)
        return result

    def _run(self, repo: ResticRepo, *args: str) -> str:
        r = self.runner([*self.cfg.restic, *repo_flags(repo), *args], self.cfg.command_timeout)
        if r.returncode != 0:
            raise CollectorError(parse.failure(r.returncode, r.stderr.decode(errors="replace")))
        return r.stdout.decode(errors="replace")

    def _read(self, repo: ResticRepo) -> backup.BackupRepoView:
        base = {"name": repo.name, "location": location(repo), "offsite": repo.offsite, "max_age": repo.max_age,
                "check_every": repo.check_every}
        try:
            snapshots = parse.parse_snapshots(self._run(repo, "snapshots", "--json", "--no-lock"))
            size = parse.parse_stats(self._run(repo, "stats", "--json", "--no-lock", "--mode", "raw-data")) \
                if repo.stats else None
        except CollectorError as exc:
            return backup.BackupRepoView(**base, error=str(exc), check=self.checks.of(repo.name)["check"])
        groups, missing = backup.followed(snapshots, repo.hosts, repo.paths, repo.tags)
        self.checks.start_if_due(repo.name, repo.check_every, lambda: self._check(repo))
        return backup.BackupRepoView(**base, groups=groups, missing=missing, size_bytes=size,
                                     **self.checks.of(repo.name))

    def _check(self, repo: ResticRepo) -> backup.Outcome:
        """One `restic check`: its result, or why it did not run (the repository locked by a
        running backup or prune: tried again on the next run)."""
        args = ["check", *(["--read-data-subset", repo.check_read_data] if repo.check_read_data else [])]
        r = self.runner([*self.cfg.restic, *repo_flags(repo), *args], repo.check_timeout)
        err = r.stderr.decode(errors="replace")
        if parse.locked(r.returncode, err):
            return "check not run: " + parse.failure(r.returncode, err)
        ok, first = parse.check_errors(r.returncode, r.stdout.decode(errors="replace"), err)
        return backup.BackupCheck(ended=self.checks.clock(), ok=ok, error=first)


def build(c: ResticConfig, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.restic]."""
    return ResticCollector(c, runner)
