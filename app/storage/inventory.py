"""Inventory: the entities each collector reports, their comings and goings as events, and the last state of each collector."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Select, and_, bindparam, func, or_, select, update

# pydantic (FastAPI's answers) needs typing_extensions' TypedDict before Python 3.12; pydantic installs it.
from typing_extensions import TypedDict

from app.storage.base import (
    _STILL_HERE,
    KnownEntity,
    StoreBase,
    _text,
)
from app.storage.models import (
    collector_state,
    entity,
    entity_event,
)
from collectors import finite
from collectors.base import Entity

# Each event with the collector that reports its entity (None when unknown), built once.
_EVENTS = select(entity_event, entity.c.collector).select_from(
    entity_event.outerjoin(entity, and_(entity.c.host == entity_event.c.host, entity.c.kind == entity_event.c.kind,
                                        entity.c.key == entity_event.c.key)))


def _events_of(n: int) -> Select[Any]:
    """The newest events of n (kind, key) things of a host, as a statement built once per n."""
    things = [and_(entity_event.c.kind == bindparam(f"k{i}"), entity_event.c.key == bindparam(f"key{i}"))
              for i in range(n)]
    return (_EVENTS.where(entity_event.c.host == bindparam("h"), or_(*things))
            .order_by(entity_event.c.ts.desc(), entity_event.c.id.desc()).limit(bindparam("limit")))


_EVENTS_OF: dict[int, Select[Any]] = {}
_NEWEST_EVENT = select(func.max(entity_event.c.id)).where(entity_event.c.host == bindparam("h"))
_ENTITY = select(entity).where(entity.c.host == bindparam("h"), entity.c.kind == bindparam("k"),
                               entity.c.key == bindparam("key"))


class StoredEvent(TypedDict):
    """One change of one entity, as stored (and as /api/events returns it)."""

    id: int
    host: str
    kind: str
    key: str
    ts: float
    field: str  # an attribute's name, or "present"
    old: str | None
    new: str | None
    collector: str | None  # the collector that reports its entity, None when unknown


class StoredEntity(TypedDict):
    """A thing in the inventory, as stored (and as /api/entities returns it)."""

    id: int
    host: str
    collector: str
    kind: str
    key: str
    attrs: dict[str, object]
    first_seen: float
    last_seen: float
    present: bool


class Inventory(StoreBase):
    def load_states(self) -> dict[str, dict[str, object]]:
        """Each collector's last state as stored (JSON; app/scheduler.py's read_states types them)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(collector_state.c.collector, collector_state.c.state)
                                .where(collector_state.c.host == self.host))
            # finite.loads: a state stored before numbers were checked (Infinity) must not break a page now
            return {c: finite.loads(s) for c, s in rows}

    # -- inventory ----------------------------------------------------------------------

    def _load_entities(self, conn) -> dict[tuple[str, str], KnownEntity]:
        if self._entities is None:
            self._entities = {}
            for kind, key, coll, attrs, present in conn.execute(
                select(entity.c.kind, entity.c.key, entity.c.collector, entity.c.attrs, entity.c.present)
                .where(entity.c.host == self.host)
            ):
                self._entities[(kind, key)] = KnownEntity(collector=coll, attrs=json.loads(attrs), present=present)
        return self._entities

    def entities_with(self, conn, keys: Iterable[tuple[str, str]]) -> int:
        """How many entities this host would have with these (kind, key) added."""
        known = self._load_entities(conn)
        return len(known) + len({k for k in keys if k not in known})

    def _sync_entities(self, conn, collector: str, now: float, ents: Sequence[Entity]) -> None:
        """Diff the run's entities against the stored ones; every change becomes an event row."""
        known = self._load_entities(conn)
        events: list[dict[str, object]] = []  # entity_event rows
        seen = set()
        for e in ents:
            k = (e.kind, e.key)
            seen.add(k)
            attrs = json.loads(json.dumps(dict(e.attrs), default=str))
            old = known.get(k)
            base = {"host": self.host, "kind": e.kind, "key": e.key, "ts": now}
            if old is None:
                # An upsert: another writer of this host (the demo seeding its past, a second server
                # on the same database) may have stored it since this cache was read. A plain
                # insert then failed every run after, and each run's samples were lost with it.
                conn.execute(self._insert(entity).values(
                    host=self.host, collector=collector, kind=e.kind, key=e.key, attrs=json.dumps(attrs),
                    first_seen=now, last_seen=now, present=True,
                ).on_conflict_do_update(index_elements=["host", "kind", "key"],
                                        set_={"collector": collector, "attrs": json.dumps(attrs), "last_seen": now,
                                              "present": True}))
                events.append({**base, "field": "present", "old": None, "new": "appeared"})
            else:
                changed = {f for f in set(attrs) | set(old["attrs"]) if attrs.get(f) != old["attrs"].get(f)}
                for f in sorted(changed):
                    events.append({**base, "field": f, "old": _text(old["attrs"].get(f)), "new": _text(attrs.get(f))})
                if not old["present"]:
                    events.append({**base, "field": "present", "old": "gone", "new": "back"})
                if changed or not old["present"]:
                    conn.execute(update(entity).where(
                        entity.c.host == self.host, entity.c.kind == e.kind, entity.c.key == e.key
                    ).values(attrs=json.dumps(attrs), last_seen=now, present=True))
            known[k] = KnownEntity(collector=collector, attrs=attrs, present=True)
        for k, v in known.items():
            if v["collector"] == collector and v["present"] and k not in seen:
                v["present"] = False
                conn.execute(update(entity).where(
                    entity.c.host == self.host, entity.c.kind == k[0], entity.c.key == k[1]
                ).values(present=False))
                events.append({"host": self.host, "kind": k[0], "key": k[1], "ts": now,
                               "field": "present", "old": "present", "new": "gone"})
        # One statement for "still here" instead of one per unchanged entity.
        conn.execute(_STILL_HERE, {"b_host": self.host, "b_collector": collector, "b_now": now})
        # what changed of things known already (an agent's ingest bounds it per hour; a new thing
        # appearing is bounded by the number of entities instead)
        self.entity_changes = getattr(self, "entity_changes", 0) + sum(1 for e in events if e["new"] != "appeared")
        if events:
            conn.execute(entity_event.insert(), events)

    def events(self, kind: str | None = None, key: str | None = None, limit: int = 50,
               offset: int = 0) -> list[StoredEvent]:
        """The newest changes first, each with the collector that reports its entity (None when unknown)."""
        q = _EVENTS.where(entity_event.c.host == self.host)
        if kind:
            q = q.where(entity_event.c.kind == kind)
        if key:
            q = q.where(entity_event.c.key == key)
        return self._read_events(q, limit, offset)

    def newest_event(self) -> int:
        """The id of this host's newest stored event (0: none): events are only ever added, so a
        page of them read before is the same while this is."""
        with self.engine.connect() as conn:
            return int(conn.execute(_NEWEST_EVENT, {"h": self.host}).scalar() or 0)

    def events_of(self, things: Sequence[tuple[str, str]], limit: int = 100) -> list[StoredEvent]:
        """The newest changes of several things together (a disk and its bay), in one query."""
        if not things:
            return []
        q = _EVENTS_OF.get(len(things))
        if q is None:
            q = _EVENTS_OF[len(things)] = _events_of(len(things))
        params: dict[str, object] = {"h": self.host, "limit": limit}
        for i, (kind, key) in enumerate(things):
            params[f"k{i}"], params[f"key{i}"] = kind, key
        with self.engine.connect() as conn:
            return [StoredEvent(**r._mapping) for r in conn.execute(q, params)]  # type: ignore[typeddict-item]

    def _read_events(self, q: Select[Any], limit: int, offset: int) -> list[StoredEvent]:
        q = q.order_by(entity_event.c.ts.desc(), entity_event.c.id.desc()).limit(limit).offset(offset)
        with self.engine.connect() as conn:
            return [StoredEvent(**r._mapping) for r in conn.execute(q)]  # type: ignore[typeddict-item]

    def entities(self, kind: str) -> list[StoredEntity]:
        q = select(entity).where(entity.c.host == self.host, entity.c.kind == kind).order_by(entity.c.key)
        with self.engine.connect() as conn:
            return [StoredEntity(**{**r._mapping, "attrs": json.loads(r.attrs)})  # type: ignore[typeddict-item]
                    for r in conn.execute(q)]

    def entity(self, kind: str, key: str) -> StoredEntity | None:
        """One stored thing (a disk's page needs its own, not every disk's)."""
        with self.engine.connect() as conn:
            row = conn.execute(_ENTITY, {"h": self.host, "k": kind, "key": key}).first()
        return StoredEntity(**{**row._mapping, "attrs": json.loads(row.attrs)}) if row else None  # type: ignore[typeddict-item]

    # -- history ------------------------------------------------------------------------
