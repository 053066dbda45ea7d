"""What the backup plug-ins (restic, borg) share: a repository's view (its groups of snapshots
per host and paths, what a followed path has none of, its size, its last check), the rules they
both raise, their findings, metrics and tile, and the thread a repository's check runs in.

One set of rules for both: an alert names its plug-in in its subject's first part
("restic/nas-local/…", "borg/offsite/…"), so each is held while its own repository cannot be
read and explained by its own collector_down (app/alerting/conditions.py RuleSources)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from collectors.base import CollectResult, Entity, MetricSpec, Sample
from collectors.findings import BAD, WARN, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.plugin import View
from collectors.proxmoxapi import age
from collectors.state import Record, State

RULES = (
    RuleSpec("backup_stale", "warning", title="Backup overdue"),
    RuleSpec("backup_check_failed", "critical", title="Backup check found errors"),
    RuleSpec("backup_repo_unreachable", "warning", 300, title="Backup repository cannot be opened"),
)
METRICS: dict[str, MetricSpec] = {
    "rackpulse_backup_newest_timestamp_seconds": MetricSpec(
        "When the newest snapshot of a host and its paths was taken (Unix time)."),
    "rackpulse_backup_snapshots": MetricSpec("Snapshots (archives) a repository keeps of a host and its paths."),
    "rackpulse_backup_repo_readable": MetricSpec("1 while the repository can be opened.",
                                                 states=("cannot be opened", "readable")),
    "rackpulse_backup_repo_size_bytes": MetricSpec("What the repository stores, deduplicated and compressed."),
    "rackpulse_backup_check_ok": MetricSpec("The last check's result.", states=("errors found", "sound")),
    "rackpulse_backup_last_check_timestamp_seconds": MetricSpec("When the last check ended (Unix time)."),
}


class BackupGroup(Record):
    """The snapshots of one host and one set of paths."""

    host: str
    paths: list[str]
    newest: float | None = None  # its newest snapshot's time (None: not understood, after the entrance)
    newest_id: str = ""  # restic's short id, borg's archive name
    tags: list[str] = []
    count: int | None = 1

    @property
    def where(self) -> str:
        return f"{self.host}:{', '.join(self.paths)}"


class BackupCheck(Record):
    ended: float | None = None
    ok: bool
    error: str | None = None  # the tool's first error line when not ok


class BackupRepoView(Record):
    name: str
    location: str  # where it is, as the page says it (never a password)
    offsite: bool = False
    max_age: float | None = 26 * 3600.0
    error: str | None = None  # it could not be opened: a wrong password, nothing there, unreachable
    groups: list[BackupGroup] = []
    missing: list[str] = []  # followed hosts and paths no snapshot covers
    size_bytes: float | None = None
    check_every: float | None = None
    check: BackupCheck | None = None  # the last check that ran to its end
    check_note: str | None = None  # why a due check did not run (the repository locked)
    checking: bool = False


class BackupState(State):
    repos: list[BackupRepoView] = []
    source_label: ClassVar[str] = "repo"
    kind: ClassVar[str] = ""  # restic, borg: the plug-in, first in each subject

    def unreadable_sources(self) -> dict[str, float | None]:
        """Repositories that could not be opened: their alerts are held, not resolved."""
        return {r.name: None for r in self.repos if r.error}

    def sources(self) -> set[str]:
        return {r.name for r in self.repos}


def covers(snapshot_paths: Sequence[str], path: str) -> bool:
    """A snapshot of /srv covers /srv/photos; one of /srv/photos does not cover /srv."""
    wanted = path.rstrip("/") or "/"
    return any(wanted == p.rstrip("/") or wanted.startswith(p.rstrip("/") + "/") for p in snapshot_paths)


@dataclass(frozen=True)
class Taken:
    """One snapshot or archive, as every backup tool has it."""

    time: float
    host: str
    paths: tuple[str, ...]
    tags: tuple[str, ...] = ()
    id: str = ""  # restic's short id, borg's archive name


def followed(taken: Sequence[Taken], hosts: Sequence[str], paths: Sequence[str],
             tags: Sequence[str] = ()) -> tuple[list[BackupGroup], list[str]]:
    """The groups (host, paths) of the snapshots followed, each with its newest, and each host and
    path followed that none covers ("nas:/srv/photos", "host nas")."""
    kept = [s for s in taken if (not hosts or s.host in hosts) and (not tags or set(tags) & set(s.tags))
            and (not paths or any(covers(s.paths, p) for p in paths))]
    by: dict[tuple[str, tuple[str, ...]], list[Taken]] = {}
    for s in kept:
        by.setdefault((s.host, tuple(sorted(s.paths))), []).append(s)
    groups = []
    for (host, group_paths), found in sorted(by.items()):
        newest = max(found, key=lambda s: s.time)
        groups.append(BackupGroup(host=host, paths=list(group_paths), newest=newest.time, newest_id=newest.id,
                                  tags=list(newest.tags), count=len(found)))
    missing = []
    for host in hosts or [""]:
        for path in paths or [""]:
            if not any((not host or s.host == host) and (not path or covers(s.paths, path)) for s in kept):
                missing.append(f"{host}:{path}" if host and path else f"host {host}" if host else path)
    return groups, missing


def findings(state: BackupState, judging: Judging) -> list[Finding]:
    now, kind, out = judging.now, type(state).kind, []
    for r in state.repos:
        labels = {"kind": kind, "repo": r.name}
        if r.error:
            out.append(Finding(BAD, f"{kind} repository {r.name} cannot be opened: {r.error}",
                               "backup_repo_unreachable", f"{kind}/{r.name}", labels))
        for g in r.groups:
            if g.newest is not None and r.max_age is not None and now - g.newest > r.max_age:
                out.append(Finding(WARN, f"{kind} {r.name}: the newest snapshot of {g.where} is {age(now - g.newest)} "
                                         f"old, older than {age(r.max_age)}", "backup_stale",
                                   f"{kind}/{r.name}/{g.where}", {**labels, "host": g.host, "path": ",".join(g.paths)}))
        for what in r.missing:
            out.append(Finding(WARN, f"{kind} {r.name}: no snapshot of {what}", "backup_stale", f"{kind}/{r.name}/{what}",
                               {**labels, "host": what.split(":")[0] if ":" in what else "", "path": what}))
        if r.check is not None and not r.check.ok:
            when = f" {age(now - r.check.ended)} ago" if r.check.ended is not None else ""
            out.append(Finding(BAD, f"{kind} check of {r.name} found errors{when}: "
                                    f"{r.check.error or f'see {kind} check'}", "backup_check_failed",
                               f"{kind}/{r.name}", labels))
    return out


def all_clear(state: BackupState, judging: Judging) -> str | None:
    """The tile's sentence: "2 restic repositories, newest snapshot 3 h ago"."""
    if not state.repos:
        return None
    times = [g.newest for r in state.repos for g in r.groups if g.newest is not None]
    n = len(state.repos)
    words = f"{n} {type(state).kind} repositor{'ies' if n != 1 else 'y'}"
    return words + (f", newest snapshot {age(judging.now - max(times))} ago" if times else "")


def tile(kind: str) -> Tile:
    return Tile("Backups", f"/host#{kind}", all_clear)


def view(state: BackupState, found: Sequence[Finding]) -> View:
    """Each repository and group at the level of the findings about it."""
    repo_level = {r.name: level_of(about(found, repo=r.name)) for r in state.repos}
    group_level = {f"{r.name}/{g.where}": level_of([f for f in about(found, repo=r.name)
                                                    if f.labels.get("host") == g.host
                                                    and f.labels.get("path") == ",".join(g.paths)])
                   for r in state.repos for g in r.groups}
    return {**dict(state), "kind": type(state).kind, "repo_level": repo_level, "group_level": group_level}


def samples(kind: str, v: BackupRepoView, result: CollectResult) -> None:
    s, lab = result.samples, {"kind": kind, "repo": v.name}
    s.append(Sample.of("rackpulse_backup_repo_readable", v.error is None, **lab))
    for g in v.groups:
        glab = {**lab, "host": g.host, "path": ",".join(g.paths)}
        if g.newest is not None:
            s.append(Sample.of("rackpulse_backup_newest_timestamp_seconds", g.newest, **glab))
        if g.count is not None:
            s.append(Sample.of("rackpulse_backup_snapshots", g.count, **glab))
    if v.size_bytes is not None:
        s.append(Sample.of("rackpulse_backup_repo_size_bytes", v.size_bytes, **lab))
    if v.check is not None:
        s.append(Sample.of("rackpulse_backup_check_ok", v.check.ok, **lab))
        if v.check.ended is not None:
            s.append(Sample.of("rackpulse_backup_last_check_timestamp_seconds", v.check.ended, **lab))
    result.entities.append(Entity("backup repository", f"{kind}/{v.name}", {"location": v.location}))


# A check's outcome: a result to keep, or a note on why it did not run (then it is tried again).
Outcome = BackupCheck | str


class Checks:
    """Each repository's last check, run in a thread of its own when due: a check takes the
    repository's exclusive lock and can take hours, longer than any collection may."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.last: dict[str, BackupCheck] = {}
        self.notes: dict[str, str] = {}
        self.running: dict[str, threading.Thread] = {}
        self.lock = threading.Lock()

    def restore(self, state: BackupState) -> None:
        for r in state.repos:
            if r.check is not None:
                self.last[r.name] = r.check

    def start_if_due(self, name: str, every: float | None, run: Callable[[], Outcome]) -> None:
        if every is None:
            return
        with self.lock:
            last = self.last.get(name)
            if (last is not None and last.ended is not None and self.clock() - last.ended < every) \
                    or name in self.running:
                return
            t = threading.Thread(target=self._run, args=(name, run), name=f"backup check {name}", daemon=True)
            self.running[name] = t
        t.start()

    def _run(self, name: str, run: Callable[[], Outcome]) -> None:
        try:
            outcome = run()
        except Exception as exc:  # noqa: BLE001 - timed out, or the tool is gone: said, tried again next run
            outcome = f"check not run: {exc}"
        with self.lock:
            if isinstance(outcome, str):
                self.notes[name] = outcome
            else:
                self.last[name] = outcome
                self.notes.pop(name, None)
            self.running.pop(name, None)

    def of(self, name: str) -> dict[str, object]:
        """The view's fields about the checks of `name`."""
        with self.lock:
            return {"check": self.last.get(name), "check_note": self.notes.get(name), "checking": name in self.running}
