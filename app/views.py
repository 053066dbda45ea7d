"""Turn the snapshot into what pages show: the overview's tiles (each collector plug-in's
findings and all-clear words), the pages made of plug-in sections, an entity's charts (the bay
map is app/disks/bays.py). Nothing here names a plug-in: each one's part comes from its CollectorPlugin."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urlencode

from app.alerting.conditions import rule_title
from app.alerting.engine import AlertState
from app.snapshot import SELF_METRICS, CollectorStatus, Snapshot, same_inputs
from app.words import duration
from collectors import all_metric_specs, plugins
from collectors.findings import (
    BAD,
    OK,
    RANK,
    UNKNOWN,
    URGENCY_WORDS,
    WARN,
    Finding,
    Judging,
    Monitor,
    first,
    worst,
)
from collectors.plugin import View

__all__ = ["BAD", "OK", "RANK", "UNKNOWN", "WARN", "worst"]
# One icon per level on every page: tiles, callouts, alerts, events, bays (shape as well as colour).
ICON = {OK: "✔", WARN: "▲", BAD: "✖", UNKNOWN: "?", "info": "•"}

T = TypeVar("T")
L = TypeVar("L", "TileView", "CollectorView")


@dataclass(frozen=True)
class TileView:
    title: str
    href: str
    level: str
    reason: str
    subjects: tuple[str, ...] = ()  # "<plug-in>:<subject>" of each finding that raises a rule (data-subjects)


@dataclass(frozen=True)
class CollectorView:
    name: str
    level: str
    reason: str
    status: CollectorStatus


@dataclass(frozen=True)
class Overview:
    tiles: list[TileView]
    collectors: list[CollectorView]
    overall: str


@dataclass(frozen=True)
class SectionView:
    """One plug-in's section of a page: its template, what it reads, its collector's last run."""

    name: str
    template: str
    status: CollectorStatus | None
    v: View
    summary: str | None = None  # its part of the overview, a template beside the section
    level: str = OK  # the worst of its findings: the tile's and the alerts' level (data-level)
    subjects: tuple[str, ...] = ()  # "<plug-in>:<subject>" of its findings that raise a rule


def subject_keys(name: str, found: list[Finding]) -> tuple[str, ...]:
    """The subjects of a plug-in's findings as a page marks them (data-subjects): its name and
    the subject, so "md0" of mdraid and of another plug-in stay apart."""
    return tuple(sorted({f"{name}:{f.subject}" for f in found if f.rule}))


def judging(snap: Snapshot, name: str, now: float | None = None) -> Judging:
    """The host's one Judging of this plug-in (its thresholds and memory), for a tile's words."""
    return snap.judge.judging(name, snap.statuses.get(name), now)


def findings(snap: Snapshot, now: float | None = None) -> dict[str, list[Finding]]:
    """Each collector's findings on this snapshot, by collector name: judged once per collection
    (app/judge.py), the same that alerts read."""
    return {name: snap.findings_of(name, now) for name in plugins() if snap.seen(name)}


@dataclass
class _Merged:
    title: str
    href: str
    found: list[Finding] = field(default_factory=list)
    clear: list[str] = field(default_factory=list)
    subjects: tuple[str, ...] = ()


def tiles(snap: Snapshot, now: float | None = None) -> list[TileView]:
    """One tile per title, in plug-in order; collectors sharing a title (Power: the UPS and the
    rails) share the tile. Shown when something is wrong or there is something to show."""
    found = findings(snap, now)
    inputs = tuple(x for name, f in found.items() for x in (snap.states.get(name), f, snap.statuses.get(name)))
    return same_inputs(snap, "tiles", inputs, lambda: _tiles(snap, found, now))


def _tiles(snap: Snapshot, found: dict[str, list[Finding]], now: float | None) -> list[TileView]:
    merged: dict[str, _Merged] = {}
    for name, plugin in plugins().items():
        if plugin.tile is None or name not in found:
            continue
        status = snap.statuses.get(name)
        # A source absent here has nothing to call fine ("Services OK" on a host without systemd).
        absent = status is not None and status.no_data
        clear = None if absent else plugin.clear_words(snap.states.get(name), judging(snap, name, now))
        t = merged.setdefault(plugin.tile.title, _Merged(plugin.tile.title, plugin.tile.href))
        t.found += found[name]
        t.subjects += subject_keys(name, found[name])
        if clear is not None:
            t.clear.append(clear)
    out = []
    for t in merged.values():
        if not t.found and not t.clear:
            continue
        wrong = sorted(t.found, key=lambda f: -RANK[f.level])
        level = worst([f.level for f in wrong]) if wrong else OK
        out.append(TileView(t.title, t.href, level, first([f.text for f in wrong]) if wrong else ", ".join(t.clear),
                            t.subjects))
    return out


def collector_view(st: CollectorStatus, now: float) -> CollectorView:
    if st.up is None:
        level, reason = UNKNOWN, "not run yet"
    elif not st.up:
        level, reason = BAD, st.last_error or "down"
    elif st.stale(now):
        level, reason = WARN, f"stale: last success {duration(now - (st.last_success or now))} ago"
    elif st.no_data:
        level, reason = OK, f"source absent: {st.last_error}"
    elif st.warnings:
        level, reason = WARN, "; ".join(st.warnings[:3])
    else:
        level, reason = OK, f"ok in {st.duration or 0:.2f}s"
    return CollectorView(st.name, level, reason, st)


def overview(snap: Snapshot) -> Overview:
    now = time.time()
    tile_list = tiles(snap, now)
    collectors = [collector_view(st, now) for st in snap.statuses.values()]
    return Overview(tile_list, collectors, worst([t.level for t in tile_list] + [c.level for c in collectors]))


def worst_first(items: list[L]) -> list[L]:
    """Failing first, then warnings, then what is not known yet, then what is fine; within a
    level the usual (plug-in) order, so a calm overview keeps its familiar layout."""
    return sorted(items, key=lambda t: -RANK.get(t.level, 0))


def verdict(ov: Overview) -> str:
    """The overview's first line: whether anything needs a person, in one sentence."""
    bad = [t for t in ov.tiles if t.level == BAD] + [c for c in ov.collectors if c.level == BAD]
    warn = [t for t in ov.tiles if t.level == WARN] + [c for c in ov.collectors if c.level == WARN]
    if not bad and not warn:
        return f"All clear: {len(ov.tiles)} areas fine, {len(ov.collectors)} collectors running."
    parts = [f"{len(bad)} failing" if bad else "", f"{len(warn)} with a warning" if warn else ""]
    return f"{' and '.join(p for p in parts if p)}, worst first below."


def pages() -> dict[str, str]:
    """The pages the collector plug-ins' sections make, page -> title, in plug-in order."""
    out: dict[str, str] = {}
    for p in plugins().values():
        if p.pages.section is not None:
            out.setdefault(p.pages.section.page, p.pages.section.title)
    return out


def _section(snap: Snapshot, name: str) -> SectionView:
    p = plugins()[name]
    summary = p.pages.section.summary if p.pages.section else None
    found = snap.findings_of(name) if snap.seen(name) else []
    return SectionView(name, f"{name}/section.html", snap.statuses.get(name), p.view(snap.states.get(name), found),
                       f"{name}/{summary}" if summary else None, worst([f.level for f in found]) if found else OK,
                       subject_keys(name, found))


def sections(snap: Snapshot, page: str) -> list[SectionView]:
    """What a page shows: each of its collectors' sections, with what the section reads (its
    state, and the findings judged on it: a page says what the tile and the alerts say)."""
    return [_section(snap, name) for name, p in plugins().items() if p.pages.section and p.pages.section.page == page]


def summaries(snap: Snapshot) -> list[SectionView]:
    """The sections that draw a summary on the overview (md arrays), of collectors seen here."""
    return [_section(snap, name) for name, p in plugins().items()
            if p.pages.section and p.pages.section.summary and snap.seen(name)]


@dataclass(frozen=True)
class Callout:
    """One problem on the overview: the worst alert about it, and the others about the same thing
    (a failing disk and the array it left: one problem, one callout)."""

    level: str  # failing (critical) or warning
    host: str  # the agent host it is on; "" for this one
    rule: str  # the worst alert's rule, in words
    summary: str
    href: str | None  # the alerts page it is on (an agent host's), None for this host's
    acked: bool
    fired_at: float
    also: list[str] = field(default_factory=list)  # the other rules firing about it, in words
    urgency: int = 0  # how soon it hurts (collectors.findings SOON_*): first on the overview
    why: str = ""  # why it is above the rest, in words ("" when it is not urgent)


# Alerts about one disk, one array, one peer ... are one problem: these labels say which thing.
SAME_THING = ("serial", "bay", "array", "pool", "osd", "peer", "slave", "fs", "controller", "ups")


def urgencies() -> dict[str, int]:
    """Each built-in rule's urgency (RuleSpec.urgency) by its name; rules of the config are 0."""
    return {r.name: r.urgency for p in plugins().values() for r in p.rules if r.urgency}


def callouts(firing: list[tuple[AlertState, str | None]], this_host: str) -> list[Callout]:
    """The firing alerts as problems: grouped by the thing they are about; what hurts soonest
    first (a UPS on battery, an array without its redundancy, a disk failing: RuleSpec.urgency)
    whatever its level word, then critical ones, then the newest. Each problem's headline is its
    most urgent, then worst, alert's own words."""
    groups: dict[tuple[str, ...], list[tuple[AlertState, str | None]]] = {}
    for a, href in firing:
        thing = next(((k, a.labels[k]) for k in SAME_THING if a.labels.get(k)), ("rule", a.rule, a.subject))
        groups.setdefault((href or "", a.labels.get("host", ""), *thing), []).append((a, href))
    soon = urgencies()
    out = []
    for members in groups.values():
        members.sort(key=lambda m: (-soon.get(m[0].rule, 0), m[0].severity != "critical",
                                    -(m[0].fired_at or m[0].since)))
        head, href = members[0]
        host = head.labels.get("host", "")
        words = rule_title(head.rule)
        out.append(Callout(
            level=BAD if head.severity == "critical" else WARN,
            host="" if host == this_host else host, rule=words, summary=head.summary, href=href,
            acked=head.acked_at is not None,
            fired_at=max(a.fired_at or a.since for a, _ in members),
            also=sorted({rule_title(a.rule) for a, _ in members[1:]} - {words}),
            urgency=soon.get(head.rule, 0), why=URGENCY_WORDS.get(soon.get(head.rule, 0), "")))
    out.sort(key=lambda c: (-c.urgency, c.level != BAD, -c.fired_at))
    return out


def monitors(snap: Snapshot) -> list[Monitor]:
    """Every plug-in's monitors (the probes), for /status."""
    return [m for name, p in plugins().items() for m in p.monitor_list(snap.states.get(name))]


# -- charts ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Unit:
    unit: str  # what a chart's axis and legend say
    si: bool  # whether SI prefixes apply (14.8 MWh, 1.2 GB)
    scale: float  # the factor from the stored base unit
    states: tuple[str, ...] = ()  # a state as a number: its words by value (a timeline, not a line)
    whole: bool = False  # a count (links up, prefixes, flaps): its axis ticks on whole numbers only


# A counter drawn as its rate: bytes as bits per second (how links are spoken of), else per second.
RATE_UNITS = {"_bytes_total": Unit("bit/s", True, 8.0), "_seconds_total": Unit("%", False, 100.0)}


@dataclass(frozen=True)
class ChartView:
    title: str
    metric: str
    labels: dict[str, str]

    @property
    def rate(self) -> bool:
        """A counter of bytes or seconds is drawn as its rate (bit/s, a CPU's share): its running
        total since a guest started says nothing. A count of events (link failures) stays a count."""
        return self.metric.endswith(tuple(RATE_UNITS))


def entity_charts(kind: str, key: str, attrs: Mapping[str, object] | None = None) -> list[ChartView]:
    """Charts for an entity page; label values come from the key's parts or ("attr:x") its attributes."""
    spec = next((p.pages.charts[kind] for p in plugins().values() if kind in p.pages.charts), None)
    if spec is None:
        return []
    attrs = attrs or {}
    names, charts = spec
    parts = key.split("/", len(names) - 1) if len(names) > 1 else [key]
    if len(parts) != len(names):
        return []

    def value(ref: int | str) -> str | None:
        if isinstance(ref, int):
            return parts[ref]
        v = attrs.get(ref.removeprefix("attr:"))
        return str(v) if v is not None else None

    out = []
    for title, metric, pick in charts:
        labels = {label: value(ref) for label, ref in pick.items()}
        name = value(metric) if metric.startswith("attr:") else metric
        if name and all(v is not None for v in labels.values()):
            out.append(ChartView(title, name, {k: v for k, v in labels.items() if v is not None}))
    return out


# A metric's unit from its name (Prometheus' naming rules).
UNITS: tuple[tuple[str, str, bool, float], ...] = (
    ("_celsius", "°C", False, 1.0), ("_volts", "V", False, 1.0), ("_amperes", "A", False, 1.0),
    ("_watts", "W", True, 1.0), ("_rpm", "RPM", False, 1.0), ("_joules_total", "Wh", True, 1 / 3600),
    ("_bytes_total", "B", True, 1.0), ("_bytes", "B", True, 1.0), ("_bytes_per_second", "bit/s", True, 8.0),
    ("_bits_per_second", "bit/s", True, 1.0),
    ("_seconds_total", "s", True, 1.0), ("_seconds", "s", True, 1.0), ("_ratio", "%", False, 100.0),
    ("_bar", "bar", False, 1.0), ("_dbm", "dBm", False, 1.0), ("_db", "dB", False, 1.0),
)


def chart_unit(metric: str, rate: bool = False) -> Unit:
    """The unit of a chart of `metric` (its words for a state; none for a count, whose axis is
    whole numbers, unless its spec says it is a fraction, as a load average is); with `rate`, of
    its rate per second."""
    if rate:
        return next((u for suffix, u in RATE_UNITS.items() if metric.endswith(suffix)), Unit("/s", True, 1.0))  # noqa: E501
    spec = all_metric_specs().get(metric) or SELF_METRICS.get(metric)
    if spec is not None and spec.states:
        return Unit("", False, 1.0, spec.states)
    for suffix, unit, si, scale in UNITS:
        if metric.endswith(suffix):
            return Unit(unit, si, scale)
    return Unit("", True, 1.0, whole=not (spec is not None and spec.fraction))


def smoke_urls(base: str, metric: str, labels: dict[str, str], range_: str) -> dict[str, str]:
    """The four series of a smokeping-like chart: `metric` with stat=min, avg, p95 and max."""
    def url(stat: str) -> str:
        pairs = [("metric", metric), *(("label", f"{k}={v}") for k, v in labels.items()), ("label", f"stat={stat}"),
                 ("range", range_)]
        return f"{base}/api/series?{urlencode(pairs)}"

    return {stat: url(stat) for stat in ("min", "avg", "p95", "max")}
