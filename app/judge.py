"""What is wrong on a host, judged once per collection.

Each host's Snapshot carries one Judge. It keeps a Judging per plug-in, with its memory (a bond
slave's link failures that rose three times within the hour) and the configured thresholds
(`alerts.flap_count`, `alerts.disk_hot_celsius`), and judges each new state once: the tile, the
host card, the page, the alert condition and so the webhook read those same findings. Before,
pages judged afresh on every render with no memory and default thresholds, so a flapping bond
fired an alert while its tile said all clear, and a configured disk temperature was ignored on
pages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from collectors import plugins
from collectors.findings import BAD, WARN, Finding, Judging
from collectors.state import State


@dataclass(frozen=True)
class Thresholds:
    """The configured limits findings use (from [alerts]); the defaults are the rules' own."""

    flap_count: int = 3
    flap_window: float = 3600.0
    disk_hot_celsius: float = 50.0
    # rule -> (warning, critical): the rules given two levels under [alerts.rules.<rule>]
    levels: tuple[tuple[str, tuple[float | None, float | None]], ...] = ()
    # rule -> severity: the rules given another severity under [alerts.rules.<rule>]
    severities: tuple[tuple[str, str], ...] = ()


def thresholds(cfg: Any) -> Thresholds:
    """The thresholds of the app's Config."""
    levels = tuple(sorted((name, (o.warning, o.critical)) for name, o in cfg.alerts.rules.items()
                          if o.warning is not None or o.critical is not None))
    severities = tuple(sorted((name, o.severity) for name, o in cfg.alerts.rules.items() if o.severity))
    return Thresholds(cfg.alerts.flap_count, cfg.alerts.flap_window, cfg.disk_hot_celsius(), levels, severities)


def rule_severities(configured: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """Every plug-in rule's severity, as configured."""
    return {**{r.name: r.severity for p in plugins().values() for r in p.rules}, **dict(configured)}


def one_level(found: list[Finding], severities: dict[str, str]) -> list[Finding]:
    """Each finding that raises a rule, at the level its alert has: one truth for the tile, the
    host card, the page and the alert (BGP's tile said warning while its alert was critical).
    The finding's own severity (a rule with two levels) wins, else the rule's as configured."""
    out = []
    for f in found:
        severity = (f.severity or severities.get(f.rule)) if f.rule else None
        level = {"critical": BAD, "warning": WARN}.get(severity or "")
        out.append(f if level is None or (f.level, f.severity) == (level, severity)
                   else replace(f, level=level, severity=severity))
    return out


class Judge:
    def __init__(self, host: str, thresholds: Thresholds | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.host = host
        self.clock = clock  # the demo's story tests run it ahead of the wall clock
        self.thresholds = thresholds or Thresholds()
        self._judgings: dict[str, Judging] = {}
        self._severities = rule_severities(self.thresholds.severities)
        # plug-in -> (the state object judged, what of its status was seen, the findings)
        self._last: dict[str, tuple[Any, tuple[Any, ...], list[Finding]]] = {}

    def configure(self, thresholds: Thresholds) -> None:
        """New thresholds, as a reload brings them: each plug-in's Judging keeps its memory (a
        bond's flaps, counters' rises: clearing it on any threshold's change made a flapping bond
        look calm after an unrelated rule's level changed) and takes the new values in place; the
        findings are judged again on their next read, with them."""
        if thresholds == self.thresholds:
            return
        self.thresholds = thresholds
        self._severities = rule_severities(thresholds.severities)
        for j in self._judgings.values():
            j.flap_count, j.flap_window = thresholds.flap_count, thresholds.flap_window
            j.disk_hot_celsius, j.levels = thresholds.disk_hot_celsius, dict(thresholds.levels)
        self._last.clear()

    def judging(self, name: str, status: Any, now: float | None = None) -> Judging:
        """The plug-in's one Judging, its memory kept, set to this moment and status."""
        t = self.thresholds
        j = self._judgings.get(name)
        if j is None:
            j = self._judgings[name] = Judging(host=self.host, flap_count=t.flap_count, flap_window=t.flap_window,
                                               disk_hot_celsius=t.disk_hot_celsius, levels=dict(t.levels))
        j.now = now if now is not None else self.clock()
        j.status = status
        return j

    def findings(self, name: str, state: State | None, status: Any, now: float | None = None
                 ) -> list[Finding]:
        """The plug-in's findings on this state: judged when the state (or its collector's status)
        is new, the same list on every later read. A state is a new object after every collection."""
        seen = _status_key(status)
        last = self._last.get(name)
        if last is not None and last[0] is state and last[1] == seen:
            return last[2]
        plugin = plugins().get(name)
        found = one_level(plugin.judge(state, self.judging(name, status, now)), self._severities) if plugin else []
        self._last[name] = (state, seen, found)
        return found


def _status_key(status: Any) -> tuple[Any, ...]:
    if status is None:
        return ()
    return (status.up, status.no_data, status.last_error, status.last_run)
