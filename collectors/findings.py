"""What is wrong, said once. Each collector's findings() turns its state into Findings; the
overview tile, the alert rules and the webhook text all read those same words.

A Finding with a `rule` raises that alert (the collector declares the rule with its default
severity and timing); one without a rule is shown on the tile only ("md0 recovery 12.0%")."""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from collectors.state import State

S = TypeVar("S", bound=State)

OK, WARN, BAD, UNKNOWN = "ok", "warning", "failing", "unknown"
RANK = {OK: 0, UNKNOWN: 1, WARN: 2, BAD: 3}


def worst(levels: list[str]) -> str:
    return max(levels, key=lambda x: RANK[x]) if levels else UNKNOWN


def level_of(found: Sequence[Finding]) -> str:
    """How a thing stands on a page: the worst of its findings, ok when it has none."""
    return worst([f.level for f in found]) if found else OK


def about(found: Sequence[Finding], **labels: object) -> list[Finding]:
    """The findings about one thing, as their labels name it (`about(found, array="md0")`):
    a page draws an array, a pool or a peer with the very findings its tile and alerts say."""
    return [f for f in found if all(f.labels.get(k) == v for k, v in labels.items())]


@dataclass(frozen=True)
class Finding:
    level: str  # WARN or BAD: how the tile shows it
    text: str  # the words for a person: tile, alert summary, webhook
    rule: str | None = None  # the alert it raises, if any
    subject: str = ""  # what the alert is about (one alert per rule and subject)
    # What it is about ({"array": "md0", "bay": ...}): for routing, templates and the page that
    # draws the thing (`about`); None values are dropped from an alert's labels.
    labels: Mapping[str, Any] = field(default_factory=dict)
    # The alert's severity when the rule has two levels ([alerts.rules.<name>] warning and
    # critical, see Judging.level); None: the rule's own severity.
    severity: str | None = None


@dataclass(frozen=True)
class RuleSpec:
    """A built-in alert rule, as the collector that finds it declares it; [alerts.rules.<name>]
    overrides severity and timing."""

    name: str
    severity: str = "critical"  # critical | warning | info
    for_seconds: float = 0.0
    reminder_hours: float = 0.0
    # How soon what it finds hurts (SOON_*): the overview puts it above whatever is merely
    # failing, with these words, so a UPS on battery is not a warning under "+10 more".
    urgency: int = 0
    # What the pages and messages call it ("RAID array degraded"); the name stays the id that
    # [alerts.rules.<name>], silences and the API use.
    title: str = ""


# The urgencies, highest first: the lab goes dark within minutes; data with no second copy on
# disk; hardware failing now. What is not named here is ordered by severity, then the newest.
SOON_POWER, SOON_DATA, SOON_HARDWARE = 3, 2, 1
URGENCY_WORDS = {SOON_POWER: "the lab goes dark when the battery is empty",
                 SOON_DATA: "data at risk: an array without its redundancy",
                 SOON_HARDWARE: "hardware failing now"}


class Status(Protocol):
    """What findings may read of the collector's last run (the scheduler's CollectorStatus)."""

    up: bool | None
    no_data: bool
    last_error: str | None


@dataclass
class Judging:
    """What a findings function may use besides its state. `rose` keeps a little memory across
    evaluations (flapping is a counter rising within an hour): the host's Judge holds one per
    plug-in (app/judge.py), so the tile, the page and the alert share that memory."""

    host: str = ""
    now: float = field(default_factory=time.time)
    status: Status | None = None
    flap_count: int = 3
    flap_window: float = 3600.0
    disk_hot_celsius: float = 50.0
    # rule -> (warning, critical) thresholds configured under [alerts.rules.<rule>]
    levels: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    memory: dict[str, deque[tuple[float, float]]] = field(default_factory=dict)

    def level(self, rule: str, value: float, warning: float | None, critical: float | None = None,
              below: bool = False) -> str | None:
        """The severity `value` reaches for a rule with two levels: "critical", "warning" or None.
        `warning` and `critical` are the plug-in's defaults; [alerts.rules.<rule>] warning and
        critical replace them. A value at a limit has reached it; with `below` (lower is worse:
        battery charge, days to expiry) it must be under the limit."""
        configured = self.levels.get(rule, (None, None))
        warning = configured[0] if configured[0] is not None else warning
        critical = configured[1] if configured[1] is not None else critical

        def past(limit: float | None) -> bool:
            return limit is not None and (value < limit if below else value >= limit)
        return "critical" if past(critical) else ("warning" if past(warning) else None)

    def alert_severity(self, rule: str, level: str | None) -> str | None:
        """The level as the alert's severity when the rule was given two levels; None leaves the
        rule's own severity (and its [alerts.rules] override) alone."""
        return level if rule in self.levels else None

    def rose(self, key: str, counter: float) -> int:
        """How much `counter` rose within the flap window, step by step: a counter that went
        down was reset (a driver reloaded, a drive swapped) and only its rises count, so a reset
        is never read as a burst of errors nor hides the ones that follow it."""
        q = self.memory.setdefault(key, deque())
        q.append((self.now, counter))
        while q and self.now - q[0][0] > self.flap_window:
            q.popleft()
        values = [v for _, v in q]
        return int(sum(max(0.0, b - a) for a, b in zip(values, values[1:], strict=False)))

    @property
    def window(self) -> str:
        """The flap window in words: "the last hour", "the last 2 min"."""
        if self.flap_window == 3600:
            return "the last hour"
        if self.flap_window % 3600 == 0:
            return f"the last {int(self.flap_window // 3600)} hours"
        if self.flap_window >= 120:
            return f"the last {round(self.flap_window / 60)} min"
        return f"the last {round(self.flap_window)} s"


# An entity page's charts: kind -> (the key's parts, [(title, metric, {label: part index or "attr:x"})]).
ChartSpec = tuple[tuple[str, ...], list[tuple[str, str, dict[str, int | str]]]]

@dataclass(frozen=True)
class Tile(Generic[S]):
    """The collector's tile on the overview. `all_clear(state, judging)` says what is fine in
    words ("3 arrays clean"), or None when there is nothing to show (the tile is then hidden
    unless something is wrong). Collectors naming the same title share one tile (Power)."""

    title: str
    href: str
    all_clear: Callable[[S, Judging], str | None]


@dataclass(frozen=True)
class BayDevice:
    """A device a plug-in places in the user's bays: the bay map, the disks page's "pull" callouts,
    an agent host's bays and the overview's hint about disks without a label read these."""

    bay: str | None  # the user's label for where it sits ("shelf 1, bay 7"), None when unmapped
    serial: str | None
    model: str | None
    device: str | None  # what the host or the tool calls it (sdh, "c0 slot 252:4")
    state: str  # its state in words ("ZFS FAULTED", "failing")
    level: str  # OK, WARN or BAD
    where: str  # what it belongs to ("md0", "ZFS pool tank", "disk")
    pull: bool = False  # failed or gone: the bay to open
    href: str | None = None  # its own page (a disk SMART sees), relative to the host's pages
    detail: str | None = None  # a word more for the bay map ("41 °C")
    entity: tuple[str, str] | None = None  # (kind, key) of its inventory entry
    temperature: float | None = None  # for the bay map's heat view


@dataclass(frozen=True)
class Monitor:
    """A thing that is up or down, with a history of it: a probe. /status lists every plug-in's,
    with its uptime from `metric` (a 0/1 series) with `labels`."""

    name: str
    kind: str  # ping, http, tcp ...
    ok: bool
    target: str  # shown only to a signed-in reader (it can say more of a network than its owner wants)
    error: str | None
    metric: str
    labels: Mapping[str, str]
    # What the series counts: "success" (1 when a poll succeeded) or "loss" (the share of a
    # poll's pings lost: a ping losing 30 % is 70 % up for that poll, not up).
    counts: str = "success"
    public: bool = True  # listed on /status for a reader who is not signed in (a heartbeat only if it says so)


_DIGITS = re.compile(r"([0-9]+)")


def natural(text: str | None) -> tuple[Any, ...]:
    """A sort key that orders the numbers inside names as numbers, as a person counts bays:
    "shelf 1, bay 9" before "shelf 1, bay 10". None sorts last.

    A run of digits is compared by its length without leading zeros, then as text: the order of
    the numbers, with no int() (which Python refuses past 4,300 digits: a bay label of 5,000
    digits from an agent took every page that sorts disks down). Only ASCII digits count as a
    number: "²" or "٣" is text."""
    if text is None:
        return ((1, "", ""),)
    out = []
    for part in _DIGITS.split(text):
        if not part:
            continue
        if part[0] in "0123456789":
            digits = part.lstrip("0") or "0"
            out.append((0, len(digits), digits))
        else:
            out.append((0, -1, part.lower()))
    return tuple(out)


def first(texts: list[str], n: int = 3) -> str:
    """A few findings' words and how many more there are: a tile stays one line."""
    more = f"; and {len(texts) - n} more" if len(texts) > n else ""
    return "; ".join(texts[:n]) + more
