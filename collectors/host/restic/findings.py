"""What is wrong with restic repositories: a host's newest snapshot older than the repository's
max_age (or none at all of what it follows), a check that found errors, a repository that cannot
be opened (its alerts held meanwhile: a wrong password must never read as "backups fine")."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import BAD, WARN, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.host.restic.state import ResticState
from collectors.plugin import View
from collectors.proxmoxapi import age

RULES = (
    RuleSpec("backup_stale", "warning", title="Backup overdue"),
    RuleSpec("backup_check_failed", "critical", title="Backup check found errors"),
    RuleSpec("backup_repo_unreachable", "warning", 300, title="Backup repository cannot be opened"),
)


def findings(state: ResticState, judging: Judging) -> list[Finding]:
    now, out = judging.now, []
    for r in state.repos:
        labels = {"kind": "restic", "repo": r.name}
        if r.error:
            out.append(Finding(BAD, f"restic repository {r.name} cannot be opened: {r.error}",
                               "backup_repo_unreachable", f"restic/{r.name}", labels))
        for g in r.groups:
            if now - g.newest > r.max_age:
                out.append(Finding(WARN, f"restic {r.name}: the newest snapshot of {g.where} is {age(now - g.newest)} "
                                         f"old, older than {age(r.max_age)}", "backup_stale",
                                   f"restic/{r.name}/{g.where}", {**labels, "host": g.host, "path": ",".join(g.paths)}))
        for what in r.missing:
            out.append(Finding(WARN, f"restic {r.name}: no snapshot of {what}", "backup_stale", f"restic/{r.name}/{what}",
                               {**labels, "host": what.split(":")[0] if ":" in what else "", "path": what}))
        if r.check is not None and not r.check.ok:
            out.append(Finding(BAD, f"restic check of {r.name} found errors {age(now - r.check.ended)} ago: "
                                    f"{r.check.error or 'see restic check'}", "backup_check_failed",
                               f"restic/{r.name}", labels))
    return out


def all_clear(state: ResticState, judging: Judging) -> str | None:
    """The tile's sentence: "2 restic repositories, newest snapshot 3 h ago"."""
    if not state.repos:
        return None
    times = [g.newest for r in state.repos for g in r.groups]
    n = len(state.repos)
    words = f"{n} restic repositor{'ies' if n != 1 else 'y'}"
    return words + (f", newest snapshot {age(judging.now - max(times))} ago" if times else "")


TILE = Tile("Backups", "/host#restic", all_clear)


def view(state: ResticState, found: Sequence[Finding]) -> View:
    """Each repository and group at the level of the findings about it."""
    repo_level = {r.name: level_of(about(found, repo=r.name)) for r in state.repos}
    group_level = {f"{r.name}/{g.where}": level_of([f for f in about(found, repo=r.name)
                                                    if f.labels.get("host") == g.host
                                                    and f.labels.get("path") == ",".join(g.paths)])
                   for r in state.repos for g in r.groups}
    return {**dict(state), "repo_level": repo_level, "group_level": group_level}
