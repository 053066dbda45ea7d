"""The agent's outbox: collector runs wait here (SQLite) until the server has stored them.

Records keep their sequence number from insertion to acknowledgement; the server accepts
each number once, so a batch re-sent after a lost answer is not stored twice. The outbox
is bounded: when it outgrows ``max_bytes`` the oldest raw runs are folded into 5-minute
rollups, then the oldest 5-minute rollups into hourly ones, and only when hourly rollups
alone fill it are the oldest hours dropped. An outage of days costs resolution, not data.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.files import private_file

log = logging.getLogger("rackpulse.agent.outbox")

SCHEMA = """
CREATE TABLE IF NOT EXISTS record (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,        -- run | rollup300 | rollup3600 | event (a folded run's inventory change)
    ts INTEGER NOT NULL,       -- the run's start, or the first bucket's start
    nbytes INTEGER NOT NULL,
    body BLOB NOT NULL         -- zlib-compressed JSON of the record, without its seq
);
CREATE TABLE IF NOT EXISTS rejected (
    seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, ts INTEGER NOT NULL, error TEXT NOT NULL, body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS state (collector TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True)
class Pending:
    seq: int
    kind: str
    body: bytes  # JSON, uncompressed

    def with_seq(self) -> bytes:
        """The record's JSON with its seq as the first key, without re-parsing it."""
        return b'{"seq":%d,' % self.seq + self.body[1:]


class Outbox:
    def __init__(self, path: Path | str, max_bytes: int, unstored: dict[str, frozenset[str]] | None = None) -> None:
        self.path, self.max_bytes = str(path), max_bytes
        self.unstored = unstored or {}  # collector -> metrics the server does not keep (not folded either)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = self._open()
        except sqlite3.DatabaseError as exc:
            # A damaged outbox (a disk that filled up, a crash on a bad SD card) must not keep the
            # agent from collecting: keep the file for a human and start an empty one beside it.
            aside = self._set_aside()
            log.error("outbox %s is damaged (%s): moved to %s; starting an empty outbox", self.path, exc, aside)
            self.db = self._open()
        self.lock = threading.Lock()
        self.dropped_points = 0
        self._last_inventory: dict[str, str] = {}  # collector -> digest of the last run's entities folded
        row = self.db.execute("SELECT value FROM meta WHERE key = 'instance'").fetchone()
        if row is None:
            # Names this outbox to the server: a new outbox (reinstall) starts its numbers afresh.
            self.instance = secrets.token_hex(12)
            self.db.execute("INSERT INTO meta VALUES ('instance', ?)", (self.instance,))
        else:
            self.instance = row[0]
        self._bytes = self._size()

    def _open(self) -> sqlite3.Connection:
        private_file(Path(self.path))
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
            problem = db.execute("PRAGMA quick_check").fetchone()[0]
            if problem != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {problem}")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _set_aside(self) -> str:
        aside = f"{self.path}.damaged-{time.strftime('%Y%m%dT%H%M%S')}"
        for suffix in ("", "-wal", "-shm"):
            if Path(self.path + suffix).exists():
                Path(self.path + suffix).rename(aside + suffix)
        return aside

    # -- queue ----------------------------------------------------------------------------

    def put(self, record: dict[str, Any], kind: str = "run") -> int:
        body = zlib.compress(json.dumps(record, separators=(",", ":"), allow_nan=False).encode(), 6)
        ts = int(record.get("started") or 0)
        with self.lock:
            cur = self.db.execute("INSERT INTO record (kind, ts, nbytes, body) VALUES (?, ?, ?, ?)",
                                  (kind, ts, len(body), body))
            self._bytes += len(body)
            if record.get("kind") == "run":
                self.db.execute("INSERT INTO state VALUES (?, ?) ON CONFLICT (collector) DO UPDATE SET "
                                "state = excluded.state", (record["collector"], json.dumps(record.get("state", {}))))
            seq = int(cur.lastrowid or 0)
        if self._bytes > self.max_bytes:
            self.compact()
        return seq

    def take(self, max_bytes: int, max_records: int = 10_000) -> list[Pending]:
        """The oldest records, in order, up to about max_bytes of JSON (at least one)."""
        out: list[Pending] = []
        size = 0
        with self.lock:
            for seq, kind, body in self.db.execute(
                    "SELECT seq, kind, body FROM record ORDER BY seq LIMIT ?", (max_records,)):
                raw = zlib.decompress(body)
                if out and size + len(raw) > max_bytes:
                    break
                out.append(Pending(seq, kind, raw))
                size += len(raw)
        return out

    def ack(self, up_to: int) -> None:
        with self.lock:
            self.db.execute("DELETE FROM record WHERE seq <= ?", (up_to,))
            self._bytes = self._size()
            self._last_inventory.clear()  # the server has seen runs the next fold cannot compare with

    def reject(self, rec: Pending, error: str) -> None:
        """Set aside a record the server refuses as malformed: kept for a human, never re-sent."""
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO rejected VALUES (?, ?, 0, ?, ?)",
                            (rec.seq, rec.kind, error[:2000], zlib.compress(rec.body)))
            self.db.execute("DELETE FROM record WHERE seq = ?", (rec.seq,))
            self._bytes = self._size()

    def stats(self) -> dict[str, int]:
        with self.lock:
            n, size, first, last = self.db.execute(
                "SELECT count(*), coalesce(sum(nbytes), 0), coalesce(min(seq), 0), coalesce(max(seq), 0) "
                "FROM record").fetchone()
            rej = self.db.execute("SELECT count(*) FROM rejected").fetchone()[0]
        # oldest/newest: what is waiting, by number. "Has the backlog of the outage gone?" is then
        # "is the oldest waiting record newer than the newest one of then?", a question an
        # outbox that never empties on a busy host (runs keep arriving) can still answer.
        return {"records": n, "bytes": size, "rejected": rej, "dropped_points": self.dropped_points,
                "oldest_seq": first, "newest_seq": last}

    # Any: a record as the batch format's JSON (the server validates it: app/batch.py)
    def states(self) -> dict[str, dict[str, Any]]:
        """Each collector's last state: after a restart the agent still knows which bay a pulled disk was in."""
        with self.lock:
            return {c: json.loads(s) for c, s in self.db.execute("SELECT collector, state FROM state")}

    def close(self) -> None:
        with self.lock:
            self.db.close()

    # -- staying within bounds ------------------------------------------------------------

    def _size(self) -> int:
        return int(self.db.execute("SELECT coalesce(sum(nbytes), 0) FROM record").fetchone()[0])

    def compact(self) -> None:
        """Fold or, as a last resort, drop the oldest records until the outbox is under 80 % of its bound."""
        with self.lock:
            self._bytes = self._size()
            if self._bytes <= self.max_bytes:
                return
            target = int(self.max_bytes * 0.8)
            for src, res in (("run", 300), ("rollup300", 3600)):
                while self._size() > target and self._fold_oldest(src, res):
                    pass
            while self._size() > target:
                # Inventory changes (small) go last: which disk failed matters longer than its temperature.
                row = self.db.execute("SELECT seq, body FROM record ORDER BY kind = 'event', seq LIMIT 1").fetchone()
                if row is None or self.db.execute("SELECT count(*) FROM record").fetchone()[0] <= 1:
                    break
                rec = json.loads(zlib.decompress(row[1]))
                self.dropped_points += sum(len(p) for _, _, p in rec.get("series", [])) or len(rec.get("samples", []))
                self.db.execute("DELETE FROM record WHERE seq = ?", (row[0],))
            self._bytes = self._size()
            log.warning("outbox over %d bytes: folded old runs into rollups; %d points dropped so far",
                        self.max_bytes, self.dropped_points)

    def _fold_oldest(self, kind: str, res: int) -> bool:
        """Fold the oldest quarter (whole ``res`` buckets) of ``kind`` records into one rollup record.

        Runs that changed the inventory (a disk failed, a peer appeared) are not folded away:
        their samples go into the rollup like the others, but the run itself stays, stripped of
        its samples, so the server still records the change at its time (table kind "event")."""
        rows = self.db.execute("SELECT seq, ts FROM record WHERE kind = ? ORDER BY seq", (kind,)).fetchall()
        if len(rows) < 2:
            return False
        newest_bucket = rows[-1][1] // res
        cut = max(rows[len(rows) // 4][1] // res, rows[0][1] // res + 1)
        chosen = [seq for seq, ts in rows if ts // res < min(cut, newest_bucket)] or [rows[0][0]]
        marks = ",".join("?" * len(chosen))
        records = [(seq, json.loads(zlib.decompress(b))) for seq, b in self.db.execute(
            f"SELECT seq, body FROM record WHERE seq IN ({marks}) ORDER BY seq", chosen)]
        keep = self._inventory_changes(records) if kind == "run" else set()
        folded_seqs = [seq for seq, _ in records if seq not in keep]
        if not folded_seqs:
            return False  # every run here changed the inventory: folding would lose events
        folded = fold((rec for _, rec in records), res, self.unstored)
        body = zlib.compress(json.dumps(folded, separators=(",", ":")).encode(), 6)
        first = min((p[0] for _, _, pts in folded["series"] for p in pts), default=0) * res
        self.db.execute("BEGIN")
        self.db.execute(f"DELETE FROM record WHERE seq IN ({','.join('?' * len(folded_seqs))})", folded_seqs)
        for seq, rec in records:
            if seq in keep:
                stripped = zlib.compress(json.dumps({**rec, "samples": []}, separators=(",", ":")).encode(), 6)
                self.db.execute("UPDATE record SET kind = 'event', nbytes = ?, body = ? WHERE seq = ?",
                                (len(stripped), stripped, seq))
        # The rollup takes the place (seq) of the newest record it replaces: order is kept.
        self.db.execute("INSERT INTO record (seq, kind, ts, nbytes, body) VALUES (?, ?, ?, ?, ?)",
                        (max(folded_seqs), f"rollup{res}", first, len(body), body))
        self.db.execute("COMMIT")
        return True

    # Any: a record as the batch format's JSON (the server validates it: app/batch.py)
    def _inventory_changes(self, records: list[tuple[int, dict[str, Any]]]) -> set[int]:
        """The runs whose inventory differs from the run of that collector before them.

        The run before the first one is known only while nothing was acknowledged since the
        last fold (``ack`` forgets it): then the first run of each collector counts as a change."""
        out = set()
        for seq, rec in records:
            # Order-free: a rescan that lists the same disks in another order changed nothing.
            canonical = sorted(json.dumps(e, sort_keys=True) for e in rec.get("entities", []))
            digest = hashlib.sha256("\n".join(canonical).encode()).hexdigest()
            if self._last_inventory.get(rec["collector"]) != digest:
                out.add(seq)
            self._last_inventory[rec["collector"]] = digest
        return out

# Any: a record as the batch format's JSON (the server validates it: app/batch.py)
def fold(records: Iterable[dict[str, Any]], res: int, unstored: dict[str, frozenset[str]] | None = None
         ) -> dict[str, Any]:
    """Runs (or finer rollups) to one rollup record at ``res`` seconds: min, mean, max and count per bucket."""
    acc: dict[tuple[str, str], dict[int, list[float]]] = {}
    labels_of: dict[tuple[str, str], dict[str, str]] = {}
    for rec in records:
        if rec["kind"] == "run":
            bucket = int(rec["started"]) // res
            skip = (unstored or {}).get(rec["collector"], frozenset())
            points: Iterable[tuple[str, dict[str, str], list[Any]]] = (
                (m, lab, [[bucket, v, v, v, 1]]) for m, lab, v in rec["samples"] if m not in skip)
        else:
            k = res // rec["res"]
            points = ((m, lab, [[b // k, mn, av, mx, n] for b, mn, av, mx, n in pts]) for m, lab, pts in rec["series"])
        for metric, labels, pts in points:
            key = (metric, json.dumps(sorted(labels.items())))
            labels_of[key] = labels
            buckets = acc.setdefault(key, {})
            for b, mn, av, mx, n in pts:
                cur = buckets.get(b)
                if cur is None:
                    buckets[b] = [mn, av * n, mx, n]
                else:
                    cur[0], cur[1], cur[2], cur[3] = min(cur[0], mn), cur[1] + av * n, max(cur[2], mx), cur[3] + n
    series = [[m, labels_of[(m, lk)], [[b, v[0], v[1] / v[3], v[2], v[3]] for b, v in sorted(buckets.items())]]
              for (m, lk), buckets in sorted(acc.items())]
    return {"kind": "rollup", "res": res, "series": series}
