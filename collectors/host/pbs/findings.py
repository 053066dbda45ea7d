"""What is wrong on a Proxmox Backup Server: a datastore filling up (and when it will be full),
a backup group whose newest snapshot is too old or failed verification, a job that failed, and
what the token may not read."""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Sequence

from collectors.findings import BAD, WARN, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.host.pbs.state import PbsGroup, PbsState
from collectors.plugin import View
from collectors.proxmoxapi import age

RULES = (
    RuleSpec("pbs_datastore_full", "warning", title="Backup server datastore nearly full"),
    RuleSpec("pbs_verify_failed", "critical", title="Backup verification failed"),
    RuleSpec("pbs_job_failed", "warning", title="Backup server job failed"),
    RuleSpec("pbs_snapshot_stale", "warning", title="Backup snapshot overdue"),
    RuleSpec("pbs_token_denied", "warning", title="Backup server API token refused"),
)
DATASTORE_WARNING, DATASTORE_CRITICAL = 85.0, 95.0
DEFAULT_MAX_AGE = 26 * 3600.0
JOB_WORDS = {"verify": "verify job", "sync": "sync job", "prune": "prune job", "gc": "garbage collection"}


def _ignored(g: PbsGroup, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(g.name, p) or fnmatch.fnmatch(f"{g.store}/{g.name}", p) for p in patterns)


def _day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


def findings(state: PbsState, judging: Judging) -> list[Finding]:
    now = judging.now
    max_age = state.snapshot_max_age if state.snapshot_max_age is not None else DEFAULT_MAX_AGE
    out = [Finding(WARN, f"Proxmox Backup Server: {d}", "pbs_token_denied", d.split(",")[0], {}) for d in state.denied]
    for d in state.datastores:
        labels = {"store": d.name}
        if d.error:
            out.append(Finding(BAD, f"datastore {d.name} cannot be read: {d.error}", labels=labels))
            continue
        pct = d.used_percent
        sev = None if pct is None else judging.level("pbs_datastore_full", pct, DATASTORE_WARNING, DATASTORE_CRITICAL)
        if sev is not None and pct is not None:
            full = f", full by {_day(d.estimated_full)} at this pace" if d.estimated_full and d.estimated_full > now else ""
            out.append(Finding(BAD if sev == "critical" else WARN, f"datastore {d.name} is {pct:.0f}% full{full}",
                               "pbs_datastore_full", d.name, labels, judging.alert_severity("pbs_datastore_full", sev)))
    for g in state.groups:
        if _ignored(g, state.ignore):
            continue
        labels = {"store": g.store, "group": g.name}
        subject = f"{g.store}/{g.name}"
        if g.verified == "failed":
            when = f" ({age(now - g.last_backup)} old)" if g.last_backup is not None else ""
            out.append(Finding(BAD, f"backup {g.name} on {g.store}: its newest snapshot{when} failed verification",
                               "pbs_verify_failed", subject, labels))
        if g.last_backup is not None and now - g.last_backup > max_age:
            out.append(Finding(WARN, f"backup {g.name} on {g.store}: its newest snapshot is {age(now - g.last_backup)} "
                                     f"old, older than {age(max_age)}", "pbs_snapshot_stale", subject, labels))
    for j in state.jobs:
        if j.failed:
            when = f" {age(now - j.last_end)} ago" if j.last_end is not None else ""
            what = JOB_WORDS.get(j.kind, f"{j.kind} job")
            name = f" {j.id}" if j.kind != "gc" else ""
            out.append(Finding(WARN, f"{what}{name} on {j.store} failed{when}: {j.last_state}", "pbs_job_failed",
                               f"{j.kind}/{j.id}", {"kind": j.kind, "job": j.id, "store": j.store}))
    return out


def all_clear(state: PbsState, judging: Judging) -> str | None:
    """The tile's sentence: "14 backup groups on 2 datastores, newest 2 h ago"."""
    if not state.datastores:
        return None
    times = [g.last_backup for g in state.groups if g.last_backup is not None]
    n, stores = len(state.groups), len(state.datastores)
    words = f"{n} backup group{'s' if n != 1 else ''} on {stores} datastore{'s' if stores != 1 else ''}"
    return words + (f", newest {age(judging.now - max(times))} ago" if times else "")


TILE = Tile("Backups", "/host#pbs", all_clear)


def view(state: PbsState, found: Sequence[Finding]) -> View:
    """The section's rows, each at the level of the findings about it: the row of a group whose
    snapshot is stale warns as the Backups tile does (it was not marked)."""
    groups = {f"{g.store}/{g.name}": level_of(about(found, store=g.store, group=g.name)) for g in state.groups}
    stores = {d.name: level_of([f for f in about(found, store=d.name) if "group" not in f.labels and "job" not in f.labels])
              for d in state.datastores}
    jobs = {f"{j.kind}/{j.id}": level_of(about(found, kind=j.kind, job=j.id)) for j in state.jobs}
    return {**dict(state), "group_level": groups, "store_level": stores, "job_level": jobs}
