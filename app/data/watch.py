"""The data sets watched between pages: each judged from the snapshot's storage and backup states
on the energy clock (a minute), its conditions for the alert tick and its gauges on /metrics.

A set whose verdict cannot be known now (a repository that will not open, a collector down or not
run yet) keeps what it said before: its alerts are held, not resolved, as every plug-in's are."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.alerting.engine import Condition
from app.data.config import DataConfig
from app.data.sources import Read, away_sources, zfs_of
from app.data.verdict import Verdict, judge
from app.exposition import Families, render_families
from app.snapshot import Snapshot
from collectors.base import MetricSpec, Sample

log = logging.getLogger("app.data")

BLOCK = "data"  # its part of the host's /metrics
SPECS = {
    "rackpulse_data_copies": MetricSpec("Copies of a data set off the array it is on (restic, borg, PBS, a job), "
                                        "by whether they are off site."),
    "rackpulse_data_newest_copy_timestamp_seconds": MetricSpec("When the newest copy of a data set off its array "
                                                                "was made (Unix time)."),
    "rackpulse_data_redundancy_left": MetricSpec("Disks the array under a data set can still lose."),
    "rackpulse_data_protected": MetricSpec("0 while data_unprotected fires for the set.",
                                           states=("unprotected", "protected")),
    "rackpulse_data_at_risk": MetricSpec("1 while data_at_risk fires for the set.", states=("safe", "at risk")),
}
TEXT = {"data_unprotected": "{name} ({path}) is not protected: {why}",
        "data_at_risk": "{name} ({path}) is at risk: {why}"}


@dataclass
class DataWatch:
    """One per server, for its own host. Never raises: a state it cannot judge leaves the last
    verdicts standing and says so once."""

    verdicts: list[Verdict] = field(default_factory=list)
    said: dict[str, list[Condition]] = field(default_factory=dict)  # set -> its conditions last time
    covered: dict[str, set[str]] = field(default_factory=dict)  # copy source -> the sets it covered when read
    discovered: bool = False  # the sets are the array mounts found, not [data.sets]
    judged_at: float = float("-inf")
    _failing: bool = False
    _metrics: Families | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, snap: Snapshot, cfg: DataConfig, now: float,
               others: Mapping[str, Snapshot] | None = None) -> list[Condition]:
        """`others`: the agent hosts' snapshots, where a set's ZFS replicas may be."""
        with self._lock:  # the scheduler's tick and a page asking before it
            return self._update(snap, cfg, now, others or {})

    def _update(self, snap: Snapshot, cfg: DataConfig, now: float, others: Mapping[str, Snapshot]) -> list[Condition]:
        try:
            self.verdicts = self._judge(snap, cfg, now, others)
            self.judged_at = now
            self._failing = False
        except Exception as exc:  # noqa: BLE001 - the alert tick goes on without the data verdicts
            if not self._failing:
                log.warning("data sets not judged: %s", exc)
                self._failing = True
            return [c for cs in self.said.values() for c in cs]
        out = []
        for v in self.verdicts:
            said = self.said.get(v.set.name, [])
            now_said = [c for c in conditions(v, snap.host, said)]
            self.said[v.set.name] = now_said
            out += now_said
        for gone in set(self.said) - {v.set.name for v in self.verdicts}:
            del self.said[gone]  # a set taken out of the config: its alerts end
        self._write_metrics(snap)
        return out

    def _judge(self, snap: Snapshot, cfg: DataConfig, now: float, others: Mapping[str, Snapshot]) -> list[Verdict]:
        read, elsewhere = Read.of(snap), zfs_of(snap, others)
        sets = cfg.sets or read.discovered()
        self.discovered = not cfg.sets
        away = away_sources(snap)
        out = []
        for s in sets:
            h = read.home(s.path)
            # a repository that will not open may hold a copy of this set: it did when last read, or it was never read
            found = [c for c in read.copies(s, h, elsewhere)
                     if not c.error or _may_cover(c.source, s.name, self.covered)]
            for c in found:
                if not c.error:
                    self.covered.setdefault(c.source, set()).add(s.name)
            # so may a collector that is away: it held one when last read, or it was never read
            maybe = [f"{name}: {why}" for name, why in sorted(away.items()) if _may_cover(name, s.name, self.covered)]
            out.append(judge(s, h, found, now, maybe))
        return out

    def _write_metrics(self, snap: Snapshot) -> None:
        text = render_families(samples(self.verdicts, self.said), SPECS, snap.host)
        if text != self._metrics:  # rebuilt only when a figure moved: /metrics is cached on it
            self._metrics = text
            snap.blocks[BLOCK] = text
            snap.rebuild_metrics()

    def level_of(self, name: str) -> str | None:
        """The set's alert level: critical, warning, or None (the page and tile say what alerts say)."""
        sev = [c.rule for c in self.said.get(name, [])]
        return "critical" if "data_at_risk" in sev else "warning" if "data_unprotected" in sev else None


def _may_cover(source: str, set_name: str, covered: dict[str, set[str]]) -> bool:
    seen = {k: v for k, v in covered.items() if k == source or k.startswith(source + "/")}
    return not seen or any(set_name in v for v in seen.values())


def conditions(v: Verdict, host: str, before: list[Condition]) -> list[Condition]:
    """The set's conditions now; a rule whose answer is not known now keeps what it said before."""
    labels = {"host": host, "set": v.set.name, "path": v.set.path}
    out = []
    for rule, answer in (("data_at_risk", v.at_risk), ("data_unprotected", v.unprotected)):
        if answer is None:
            out += [c for c in before if c.rule == rule]
        elif answer:
            why = "; ".join(v.reasons) or v.headline
            text = TEXT[rule].format(name=v.set.name, path=v.set.path, why=why)
            out.append(Condition(rule, v.set.name, text, labels))
    return out


def samples(verdicts: list[Verdict], said: dict[str, list[Condition]]) -> list[Sample]:
    out = []
    for v in verdicts:
        lab, off = {"set": v.set.name}, v.off_array
        for where in (True, False):
            out.append(Sample.of("rackpulse_data_copies", sum(1 for c in off if c.offsite == where), **lab,
                                 offsite=str(where).lower()))
        dated = [c.newest for c in off if c.newest is not None]
        if dated:
            out.append(Sample.of("rackpulse_data_newest_copy_timestamp_seconds", max(dated), **lab))
        if v.home.left is not None:
            out.append(Sample.of("rackpulse_data_redundancy_left", v.home.left, **lab))
        rules = {c.rule for c in said.get(v.set.name, [])}
        out.append(Sample.of("rackpulse_data_protected", "data_unprotected" not in rules, **lab))
        out.append(Sample.of("rackpulse_data_at_risk", "data_at_risk" in rules, **lab))
    return out
