"""Monitors made in the browser, in the database beside the TOML's (table `monitor`): each an
entry of a plug-in's config section ("probes", kind "http") as JSON, validated by the plug-in's
own model before it is stored, so what the collector reads is what the TOML could have said."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from app.storage.models import monitor


class MonitorError(ValueError):
    """A monitor that cannot be saved, in words a form can show."""


@dataclass(frozen=True)
class SavedMonitor:
    id: int
    section: str
    kind: str
    name: str
    spec: dict[str, object]  # the entry as its TOML would say it
    updated: float


def list_monitors(engine: Engine, host: str, section: str | None = None) -> list[SavedMonitor]:
    q = select(monitor).where(monitor.c.host == host).order_by(monitor.c.section, monitor.c.kind, monitor.c.name)
    if section is not None:
        q = q.where(monitor.c.section == section)
    with engine.connect() as conn:
        rows = conn.execute(q).mappings().all()
    out = []
    for r in rows:
        try:
            spec = json.loads(r["spec"])
        except ValueError:
            continue  # a row no one can read is skipped, never the page
        if isinstance(spec, dict):
            out.append(SavedMonitor(r["id"], r["section"], r["kind"], r["name"], spec, r["updated"]))
    return out


def save_monitor(engine: Engine, host: str, section: str, kind: str, spec: Mapping[str, object],
                 monitor_id: int | None = None) -> int:
    """Add one, or replace the one with `monitor_id`; MonitorError when its name is taken."""
    now = time.time()
    values = {"section": section, "kind": kind, "name": str(spec["name"]), "spec": json.dumps(spec), "updated": now}
    try:
        with engine.begin() as conn:
            if monitor_id is None:
                key = conn.execute(monitor.insert().values(host=host, created=now, **values)).inserted_primary_key
                return int(key[0]) if key else 0
            done = conn.execute(update(monitor).where(monitor.c.id == monitor_id, monitor.c.host == host)
                                .values(**values))
            if done.rowcount == 0:
                raise MonitorError(f"no monitor {monitor_id} on {host}")
            return monitor_id
    except IntegrityError:
        raise MonitorError(f"a monitor named {spec['name']!r} exists already") from None


def delete_monitor(engine: Engine, host: str, monitor_id: int) -> bool:
    with engine.begin() as conn:
        return bool(conn.execute(delete(monitor).where(monitor.c.id == monitor_id, monitor.c.host == host)).rowcount)


def as_entries(monitors: list[SavedMonitor]) -> dict[str, list[dict[str, object]]]:
    """By section, as the collectors read them (collectors.context.SavedEntries)."""
    out: dict[str, list[dict[str, object]]] = {}
    for m in monitors:
        out.setdefault(m.section, []).append({"kind": m.kind, "spec": m.spec})
    return out
