"""Pure readers of the Proxmox Backup Server API's answers into typed records. Field names are
the API's own (pbs-api-types: DataStoreStatusListItem, GroupListItem, SnapshotListItem,
JobScheduleStatus; kebab-case on the wire)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors.host.pbs.state import PbsDatastore, PbsGroup, PbsJob
from collectors.proxmoxapi import ApiFormatError as PbsFormatError
from collectors.proxmoxapi import items as _items
from collectors.proxmoxapi import number as _num


def parse_usage(data: Any) -> list[PbsDatastore]:
    """/status/datastore-usage: each datastore's size and use, the date it fills at the last
    month's pace (absent without enough history, in the past when use is not growing) and its
    last garbage collection. -1 is the API's "could not be read"."""
    out = []
    for d in _items(data, "/status/datastore-usage"):
        if "store" not in d:
            raise PbsFormatError(f"a datastore without store: {dict(d)!r:.200}")
        raw_gc = d.get("gc-status")
        gc: Mapping[str, Any] = raw_gc if isinstance(raw_gc, Mapping) else {}

        def size(key: str, d: Mapping[str, Any] = d) -> float | None:
            v = _num(d, key)
            return None if v is None or v < 0 else v
        out.append(PbsDatastore(name=str(d["store"]), total_bytes=size("total"), used_bytes=size("used"),
                                avail_bytes=size("avail"), estimated_full=_num(d, "estimated-full-date"),
                                error=d.get("error") or None, gc_removed_bytes=_num(gc, "removed-bytes"),
                                gc_pending_bytes=_num(gc, "pending-bytes")))
    return out


def parse_groups(data: Any, store: str) -> list[PbsGroup]:
    """/admin/datastore/{store}/groups: each backup group and its newest snapshot's time."""
    out = []
    for d in _items(data, f"datastore {store} groups"):
        if "backup-type" not in d or "backup-id" not in d:
            raise PbsFormatError(f"a group without backup-type or backup-id: {dict(d)!r:.200}")
        count = _num(d, "backup-count")
        out.append(PbsGroup(store=store, type=str(d["backup-type"]), id=str(d["backup-id"]),
                            last_backup=_num(d, "last-backup"), count=int(count) if count is not None else None,
                            owner=str(d.get("owner") or ""), comment=str(d.get("comment") or "")))
    return out


def newest_snapshots(data: Any, store: str) -> dict[tuple[str, str], tuple[float, str | None, float | None]]:
    """/admin/datastore/{store}/snapshots: per group (type, id), its newest snapshot's
    (time, verify state, size)."""
    newest: dict[tuple[str, str], tuple[float, str | None, float | None]] = {}
    for d in _items(data, f"datastore {store} snapshots"):
        t = _num(d, "backup-time")
        if t is None:
            raise PbsFormatError(f"a snapshot without backup-time: {dict(d)!r:.200}")
        key = (str(d.get("backup-type", "")), str(d.get("backup-id", "")))
        v = d.get("verification")
        state = str(v["state"]) if isinstance(v, Mapping) and v.get("state") else None
        if key not in newest or t > newest[key][0]:
            newest[key] = (t, state, _num(d, "size"))
    return newest


def parse_jobs(data: Any, kind: str) -> list[PbsJob]:
    """/admin/verify, /admin/sync, /admin/prune (each job's config and JobScheduleStatus) and
    /admin/gc (per datastore, its store is its id)."""
    out = []
    for d in _items(data, f"/admin/{kind}"):
        store = str(d.get("store", ""))
        out.append(PbsJob(kind=kind, id=str(d.get("id") or store), store=store,
                          last_state=d.get("last-run-state") or None, last_end=_num(d, "last-run-endtime"),
                          next_run=_num(d, "next-run")))
    return out
