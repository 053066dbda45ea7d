"""What pages, /metrics and alerts read: the Snapshot (the latest of everything, in memory),
each collector's CollectorStatus, and the stored states read back as their plug-ins' types.
The scheduler writes it; nothing here runs a collector."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from app.exposition import Families, gzipped, merge, render_families
from app.judge import Judge
from collectors import plugins
from collectors.base import MetricSpec, Sample
from collectors.findings import Finding
from collectors.state import State, StateError

log = logging.getLogger("rackpulse.scheduler")


def read_states(stored: Mapping[str, Mapping[str, object]], where: str) -> dict[str, State]:
    """Stored states as their plug-ins' types. One of another version or shape (stored before an
    upgrade, or by an agent of another release) is dropped with one log line, never misread."""
    out: dict[str, State] = {}
    for name, data in stored.items():
        plugin = plugins().get(name)
        if plugin is None or not data:
            continue  # a plug-in no longer installed (nothing would read it), or no state at all
        try:
            out[name] = plugin.load(data)
        except StateError as exc:
            log.warning("%s: the stored state of %s is dropped: %s", where, name, exc)
    return out

SELF_METRICS = {
    "rackpulse_collector_up": MetricSpec("1 if the collector's last run succeeded (an absent source counts as up).",
                                         states=("down", "up")),
    "rackpulse_collector_duration_seconds": MetricSpec("Duration of the collector's last run."),
    "rackpulse_collector_last_success_timestamp_seconds": MetricSpec("Unix time of the last successful run."),
    "rackpulse_collector_item_errors": MetricSpec("Items (disks, arrays) the last run could not read."),
}


@dataclass
class CollectorStatus:
    name: str
    interval: float
    timeout: float
    up: bool | None = None  # None: not run yet
    no_data: bool = False  # source absent on this host: not a failure
    last_run: float | None = None
    last_success: float | None = None
    last_data: float | None = None  # the last run that read its source (not "source absent")
    duration: float | None = None
    last_error: str | None = None
    warnings: list[str] = field(default_factory=list)
    running: bool = False
    runs: int = 0

    def stale(self, now: float) -> bool:
        return self.last_success is not None and now - self.last_success > 3 * self.interval


@dataclass
class Snapshot:
    """The latest of everything, in memory: what pages and /metrics read."""

    host: str
    statuses: dict[str, CollectorStatus] = field(default_factory=dict)
    states: dict[str, State] = field(default_factory=dict)  # each plug-in's, of its own type
    blocks: dict[str, Families] = field(default_factory=dict)  # collector -> its part of /metrics
    samples: dict[str, list[Sample]] = field(default_factory=dict)  # the last samples, for user alert rules
    version: int = 0  # one more after each collection: what pages and /metrics were made of
    # Collectors a reload removed: their firing alerts end "no longer watched", not resolved
    # (nothing was read that says the problem is gone).
    unwatched: set[str] = field(default_factory=set)
    # Sources (a BMC, a UPS) a reload removed from a collector's section: plug-in -> their names.
    # Known once the rebuilt collector has run (what its last state knew, less what its new one
    # knows); their firing alerts end "no longer watched".
    unwatched_sources: dict[str, set[str]] = field(default_factory=dict)
    rebuilt: dict[str, set[str]] = field(default_factory=dict)  # plug-in -> its sources before the reload
    judge: Judge = field(default=None)  # type: ignore[assignment]  # made for the host in __post_init__
    # What pages work out from the states and findings alone, kept with what it came from
    # (app/views.py: `same_inputs`): a page asked for every few seconds reads it again only
    # after a collection.
    memo: dict[str, tuple[tuple[Any, ...], Any]] = field(default_factory=dict, compare=False, repr=False)
    # `metrics` gzipped, and the version it was made of: made when a scrape asks for it, not after
    # every collection (an agent serves its /metrics plain and never asks).
    _gzipped: tuple[int, bytes] = field(default=(-1, b""), compare=False, repr=False)
    # `parts` and `metrics`, made when read (a scrape, a page) for the version they were made of:
    # an agent nobody scrapes merged its whole exposition after every collection for nothing.
    _built: tuple[int, list[Families], bytes] = field(default=(-1, [], b""), compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.judge is None:
            self.judge = Judge(self.host)

    def findings_of(self, name: str, now: float | None = None) -> list[Finding]:
        """The plug-in's findings on its current state, judged once (app/judge.py)."""
        return self.judge.findings(name, self.states.get(name), self.statuses.get(name), now)

    @property
    def metrics_gzip(self) -> bytes:
        version = self.version  # before `metrics`: a rebuild in between is made again next time
        made, packed = self._gzipped
        if made != version:
            packed = gzipped(self.metrics)
            self._gzipped = (version, packed)
        return packed

    def seen(self, collector: str) -> bool:
        """Whether the collector ran here or left a state (its findings and tile apply)."""
        return collector in self.states or collector in self.statuses

    def rebuild_metrics(self) -> None:
        """A collection changed something: `parts` and `metrics` are made again when next read."""
        self.version += 1

    @property
    def parts(self) -> list[Families]:
        """Each collector's block of /metrics, then the collectors' own (up, duration ...)."""
        return self._build()[1]

    @property
    def metrics(self) -> bytes:
        """The exposition: `parts` merged."""
        return self._build()[2]

    def _build(self) -> tuple[int, list[Families], bytes]:
        built = self._built
        if built[0] == self.version:
            return built
        version = self.version  # before reading: a collection in between is built again next time
        self_samples = []
        # copies, made at once: another thread (the agent's /metrics) may read while a run records
        for st in list(self.statuses.values()):
            if st.up is None:
                continue
            self_samples.append(Sample.of("rackpulse_collector_up", 1 if st.up else 0, collector=st.name))
            self_samples.append(Sample.of("rackpulse_collector_duration_seconds", st.duration or 0, collector=st.name))
            self_samples.append(Sample.of("rackpulse_collector_item_errors", len(st.warnings), collector=st.name))
            if st.last_success is not None:
                self_samples.append(Sample.of("rackpulse_collector_last_success_timestamp_seconds",
                                              round(st.last_success, 3), collector=st.name))
        blocks = dict(self.blocks)
        parts = [blocks[k] for k in sorted(blocks)]
        parts.append(render_families(self_samples, SELF_METRICS, self.host))
        self._built = (version, parts, merge(parts))
        return self._built


T = TypeVar("T")


def same_inputs(snap: Snapshot, what: str, inputs: tuple[Any, ...], work: Callable[[], T]) -> T:
    """``work()``, or what it gave last time on this snapshot if ``inputs`` are the very same
    objects. States are new objects after every collection and the Judge keeps one findings list
    per state and status (app/judge.py), so their identity says whether anything changed."""
    kept = snap.memo.get(what)
    if kept is not None and len(kept[0]) == len(inputs) and all(a is b for a, b in zip(kept[0], inputs, strict=True)):
        return cast(T, kept[1])
    out = work()
    snap.memo[what] = (inputs, out)
    return out
