"""BorgBackup repositories: per host and set of paths, the newest archive's time and how many
are kept (`borg list --json --bypass-lock`), the repository's size (`borg info --json
--bypass-lock`), and `borg check` when check_every is set. Read-only: never create, prune,
compact, delete, break-lock or repair.

borg reads the passphrase itself, through BORG_PASSCOMMAND ("cat FILE", split by borg, no shell):
the passphrase is in no argv and no log. borg is told to answer its questions "no" (a repository
that moved, an unknown unencrypted one): it never waits on a prompt, it says why it stopped."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import ClassVar

from collectors import backup
from collectors.base import Collector, CollectorError, CollectResult, MetricSpec, NoData, Runner
from collectors.context import HostContext
from collectors.host.borg import parse
from collectors.host.borg.config import BorgConfig, BorgRepo
from collectors.host.borg.state import BorgState
from collectors.state import State

KIND = "borg"


def environment(repo: BorgRepo) -> list[str]:
    """`env` arguments for borg: where the passphrase is, and "no" to every question it asks."""
    secret = f"BORG_PASSCOMMAND=cat {shlex.quote(str(repo.passphrase_file))}" if repo.passphrase_file \
        else "BORG_PASSPHRASE="
    return ["env", secret, "BORG_RELOCATED_REPO_ACCESS_IS_OK=no", "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=no",
            "BORG_CHECK_I_KNOW_WHAT_I_AM_DOING=NO", "BORG_DELETE_I_KNOW_WHAT_I_AM_DOING=NO"]


class BorgCollector(Collector):
    name: ClassVar[str] = "borg"
    metrics: ClassVar[dict[str, MetricSpec]] = backup.METRICS

    def __init__(self, cfg: BorgConfig, runner: Runner, clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.runner = cfg, runner
        self.checks = backup.Checks(clock)

    def restore(self, state: State) -> None:
        if isinstance(state, BorgState):
            self.checks.restore(state)

    def collect(self) -> CollectResult:
        if not self.cfg.repos:
            raise NoData("no borg repository configured in [[collectors.borg.repos]]")
        views = [self._read(repo) for repo in self.cfg.repos]
        result = CollectResult(state=BorgState(repos=views))
        for v in views:
            backup.samples(KIND, v, result)
        return result

    def _argv(self, repo: BorgRepo, *args: str) -> list[str]:
        return [*environment(repo), *self.cfg.borg, *args, repo.repository]

    def _run(self, repo: BorgRepo, *args: str) -> str:
        r = self.runner(self._argv(repo, *args), self.cfg.command_timeout)
        if r.returncode != 0:
            raise CollectorError(parse.failure(r.returncode, r.stderr.decode(errors="replace")))
        return r.stdout.decode(errors="replace")

    def _read(self, repo: BorgRepo) -> backup.BackupRepoView:
        base = {"name": repo.name, "location": repo.repository, "offsite": repo.offsite, "max_age": repo.max_age,
                "check_every": repo.check_every}
        glob = ["--glob-archives", repo.glob_archives] if repo.glob_archives else []
        try:
            archives = parse.parse_list(self._run(repo, "list", "--json", "--bypass-lock", "--format", parse.FORMAT,
                                                  *glob))
            size = parse.parse_info(self._run(repo, "info", "--json", "--bypass-lock"))
        except CollectorError as exc:
            return backup.BackupRepoView(**base, error=str(exc), check=self.checks.of(repo.name)["check"])
        groups, missing = backup.followed(archives, repo.hosts, repo.paths)
        self.checks.start_if_due(repo.name, repo.check_every, lambda: self._check(repo))
        return backup.BackupRepoView(**base, groups=groups, missing=missing, size_bytes=size,
                                     **self.checks.of(repo.name))

    def _check(self, repo: BorgRepo) -> backup.Outcome:
        """One `borg check`: its result, or why it did not run (the repository locked)."""
        r = self.runner(self._argv(repo, "check"), repo.check_timeout)
        err = r.stderr.decode(errors="replace")
        if parse.locked(err):
            return "check not run: " + parse.failure(r.returncode, err)
        ok, first = parse.check_errors(r.returncode, err)
        return backup.BackupCheck(ended=self.checks.clock(), ok=ok, error=first)


def build(c: BorgConfig, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.borg]."""
    return BorgCollector(c, runner)
