"""ZFS snapshots: the newest of each dataset, from `zfs list -H -p -t snapshot -o name,creation`
(zfs-list(8): -H no header and tab-separated, -p exact numbers: creation in seconds since the
epoch), judged against snapshot_max_age per dataset pattern, so that a sanoid,
zfs-auto-snapshot or syncoid job that stopped is seen; on a replication target the received
snapshots are judged the same way. No ZFS runs on a test machine: the tests use text written from
zfs-list(8), and say so."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from collectors.base import ParseError
from collectors.findings import WARN, Finding, Judging
from collectors.proxmoxapi import age
from collectors.state import Record


class DatasetSnapshots(Record):
    dataset: str
    newest: float | None = None  # None: a dataset the config names has no snapshot at all
    newest_name: str = ""  # the part after @ ("autosnap_2026-12-04_00:00:02_daily")
    count: int = 0
    max_age: float | None = None  # from snapshot_max_age; None: shown, not judged


def parse_snapshot_list(text: str) -> dict[str, tuple[float, str, int]]:
    """dataset -> (its newest snapshot's creation, that snapshot's name, how many)."""
    out: dict[str, tuple[float, str, int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, sep, created = line.partition("\t")
        dataset, at, snap = name.partition("@")
        if not sep or not at:
            raise ParseError(f"zfs list line {n} is not NAME@SNAPSHOT<tab>CREATION: {line[:120]!r}")
        try:
            when = float(created.strip())
        except ValueError:
            raise ParseError(f"zfs list line {n}: creation is not a number (is -p missing?): {line[:120]!r}") from None
        newest, newest_name, count = out.get(dataset, (float("-inf"), "", 0))
        out[dataset] = (when, snap, count + 1) if when >= newest else (newest, newest_name, count + 1)
    return out


def max_age_for(dataset: str, patterns: Mapping[str, float]) -> float | None:
    """The dataset's own entry, else the longest pattern it matches ("tank/photos" over "tank/*")."""
    if dataset in patterns:
        return patterns[dataset]
    matched = [p for p in patterns if fnmatch.fnmatchcase(dataset, p)]
    return patterns[max(matched, key=len)] if matched else None


def snapshot_views(text: str, patterns: Mapping[str, float]) -> list[DatasetSnapshots]:
    found = parse_snapshot_list(text)
    views = [DatasetSnapshots(dataset=d, newest=t, newest_name=name, count=c, max_age=max_age_for(d, patterns))
             for d, (t, name, c) in sorted(found.items())]
    # a dataset named outright (no wildcard) with no snapshot at all: its job never ran
    views += [DatasetSnapshots(dataset=p, max_age=a) for p, a in sorted(patterns.items())
              if not any(ch in p for ch in "*?[") and p not in found]
    return views


def snapshot_findings(views: list[DatasetSnapshots], judging: Judging) -> list[Finding]:
    out = []
    for v in views:
        if v.max_age is None:
            continue
        labels = {"pool": v.dataset.split("/")[0], "dataset": v.dataset}
        if v.newest is None:
            out.append(Finding(WARN, f"ZFS dataset {v.dataset} has no snapshot", "zfs_snapshot_stale", v.dataset, labels))
        elif judging.now - v.newest > v.max_age:
            out.append(Finding(WARN, f"ZFS dataset {v.dataset}: newest snapshot {v.newest_name} is "
                                     f"{age(judging.now - v.newest)} old, older than {age(v.max_age)}",
                               "zfs_snapshot_stale", v.dataset, labels))
    return out
