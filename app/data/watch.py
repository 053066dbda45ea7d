"""The data sets watched between pages: each judged from the snapshot's storage and backup states
on the energy clock (a minute), its conditions for the alert tick and its gauges on /metrics.

A set whose verdict cannot be known now (a repository that will not open, a collector down or not
run yet) keeps what it said before: its alerts are held, not resolved, as every plug-in's are."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from app.alerting.engine import Condition
from app.data import copies as cp
from app.data.config import DataConfig, DataSet
from app.data.homes import Home, home_of
from app.data.verdict import Verdict, judge
from app.exposition import Families, render_families
from collectors import plugins
from collectors.base import MetricSpec, Sample
from collectors.state import StateError

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
STORAGE = ("host", "mdraid", "zfs", "btrfs", "megaraid")
COPY_SOURCES = ("restic", "borg", "zfs", "pbs", "proxmox", "heartbeats")
TEXT = {"data_unprotected": "{name} ({path}) is not protected: {why}",
        "data_at_risk": "{name} ({path}) is at risk: {why}"}


def typed_states(snap: Any) -> dict[str, Any]:
    """The plug-ins' states this reads, typed; one it cannot read is left out (said by its plug-in)."""
    out = {}
    for name in {*STORAGE, *COPY_SOURCES}:
        plugin = plugins().get(name)
        if plugin is not None and name in snap.states:
            try:
                out[name] = plugin.typed(snap.states[name])
            except StateError:
                continue
    return out


def away_sources(snap: Any) -> set[str]:
    """The collectors that run here and have not read their source yet, or could not last time."""
    return {name for name, st in snap.statuses.items() if st.up is not True and not st.no_data}


def discovered(states: dict[str, Any]) -> list[DataSet]:
    """No set named: each mount point of an array (md, ZFS, btrfs) is one."""
    host = states.get("host")
    out: list[DataSet] = []
    for fs in host.filesystems if host is not None else []:
        h = home(fs.mountpoint, states)
        if h.kind in ("md", "zfs", "btrfs") and h.mountpoint == fs.mountpoint:
            name = fs.mountpoint.strip("/").replace("/", "-") or "root"
            if all(s.name != name for s in out):
                out.append(DataSet(name=name, path=fs.mountpoint))
    return out


def home(path: str, states: dict[str, Any]) -> Home:
    mega = states.get("megaraid")
    return home_of(path, states.get("host"), states.get("mdraid"), states.get("zfs"), states.get("btrfs"),
                   behind_controller=bool(mega is not None and getattr(mega, "controllers", None)))


def copies_of(s: DataSet, h: Home, states: dict[str, Any]) -> list[cp.Copy]:
    host = states.get("host")
    filesystems = host.filesystems if host is not None else []
    return (cp.backup_copies(states.get("restic"), s, h, filesystems) + cp.backup_copies(states.get("borg"), s, h,
                                                                                          filesystems)
            + cp.zfs_copies(states.get("zfs"), h) + cp.guest_copies(states.get("proxmox"), states.get("pbs"), s)
            + cp.heartbeat_copies(states.get("heartbeats"), s))


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

    def update(self, snap: Any, cfg: DataConfig, now: float) -> list[Condition]:
        with self._lock:  # the scheduler's tick and a page asking before it
            return self._update(snap, cfg, now)

    def _update(self, snap: Any, cfg: DataConfig, now: float) -> list[Condition]:
        try:
            self.verdicts = self._judge(snap, cfg, now)
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

    def _judge(self, snap: Any, cfg: DataConfig, now: float) -> list[Verdict]:
        states = typed_states(snap)
        sets = cfg.sets or discovered(states)
        self.discovered = not cfg.sets
        away = away_sources(snap) & set(COPY_SOURCES)
        out = []
        for s in sets:
            h = home(s.path, states)
            # a repository that will not open may hold a copy of this set: it did when last read, or it was never read
            found = [c for c in copies_of(s, h, states) if not c.error or _may_cover(c.source, s.name, self.covered)]
            for c in found:
                if not c.error:
                    self.covered.setdefault(c.source, set()).add(s.name)
            # a source away may hold a copy of this set: it held one when last read, or it was never read
            maybe = [f"{name}: {'not read yet' if snap.statuses[name].up is None else 'cannot read its source'}"
                     for name in sorted(away) if _may_cover(name, s.name, self.covered)]
            out.append(judge(s, h, found, now, maybe))
        return out

    def _write_metrics(self, snap: Any) -> None:
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
            out.append(Condition(rule, v.set.name, TEXT[rule].format(name=v.set.name, path=v.set.path, why=why), labels))
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
