"""A collector is a plug-in: a `CollectorPlugin` its package exports, registered under the
entry point group `rackpulse.collectors` (pyproject.toml's [project.entry-points]). A package
of its own can ship one the same way. Everything rackpulse knows of a collector comes from
here: its config section's model, how to build it, its metrics (on the Collector class), what
is wrong (findings, with the alert rules they raise), its overview tile, its entity charts,
its section of a page, its demo scene."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from collectors.base import Collector, Runner
from collectors.config import CollectorBase
from collectors.context import HostContext
from collectors.findings import WARN, ChartSpec, Finding, FindingsFn, Judging, RuleSpec, Tile

GROUP = "rackpulse.collectors"
# The overview and /metrics list collectors by domain, then by name; a domain not named here
# (a third party's) comes last.
DOMAINS = ("host", "disks", "storage", "network", "probes", "home")
log = logging.getLogger("rackpulse.collectors")

@dataclass(frozen=True)
class Section:
    """The collector's part of a page: `section.html` in `folder`, rendered with `v`, what
    `view(state)` makes of its state (plus `status`, its last run). Pages are named by the
    plug-ins: every page a section names is served at /<page> and linked in the navigation."""

    page: str  # "network": served at /network
    title: str  # the page's title, "Network"
    folder: Path  # the collector's package folder, holding section.html
    view: Callable[[dict[str, Any]], dict[str, Any]] = dict


def _none(state: dict[str, Any], judging: Judging) -> list[Finding]:
    return []


@dataclass(frozen=True)
class CollectorPlugin:
    name: str  # the config section, the scheduler's name, the metric subsystem
    collector: type[Collector]  # its declared metrics are read from here without building it
    build: Callable[[Any, HostContext, Runner], Collector]  # (its validated section, the host, the command runner)
    config: type[CollectorBase]  # its section's model, [collectors.<name>]
    domain: str = ""  # disks, network, home ... (a folder under collectors/ for the built-in ones)
    findings: FindingsFn = _none
    rules: tuple[RuleSpec, ...] = ()  # the alert rules its findings raise
    tile: Tile | None = None
    charts: dict[str, ChartSpec] = field(default_factory=dict)
    section: Section | None = None
    # What people call the kinds of entity it reports, for the events page: {"md_member":
    # "array member"}. A kind not named here reads as itself with spaces ("bond slave").
    nouns: dict[str, str] = field(default_factory=dict)
    # The disks it places in the user's bays, for the bay map and the "pull" callouts of the
    # disks page: [{"bay", "serial", "model", "device", "state" (words), "level", "pull", "where",
    # "entity": (kind, key) of its inventory entry}].
    bays: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None
    # Its part of `rackpulse demo`: writes what it reads into the demo's host tree at story
    # time t (seconds into the loop), so the demo shows it without hardware.
    scene: Callable[[Path, float], None] | None = None


    # -- called by the app: one plug-in's bad state costs its own tile or section, never the page ----

    def judge(self, state: dict[str, Any], judging: Judging) -> list[Finding]:
        """Its findings; a state it cannot read (a value of another type, an agent of another
        version) is one finding saying so, not an exception that stops every other plug-in's."""
        try:
            return list(self.findings(state, judging))
        except Exception as exc:  # noqa: BLE001 - a plug-in's bug or an odd state stays in its own tile
            return [unreadable(self.name, exc)]

    def clear_words(self, state: dict[str, Any], judging: Judging) -> str | None:
        if self.tile is None:
            return None
        try:
            return self.tile.all_clear(state, judging)
        except Exception as exc:  # noqa: BLE001
            _log_once(self.name, "tile", exc)
            return None

    def view(self, state: dict[str, Any]) -> dict[str, Any]:
        """What its section reads; {"error": ...} (shown in place of the section) when it cannot."""
        if self.section is None:
            return {}
        try:
            return self.section.view(state)
        except Exception as exc:  # noqa: BLE001
            _log_once(self.name, "section", exc)
            return {"error": f"{self.name}: state not understood ({type(exc).__name__}: {exc})"[:300]}

    def bay_list(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        if self.bays is None:
            return []
        try:
            return list(self.bays(state))
        except Exception as exc:  # noqa: BLE001
            _log_once(self.name, "bays", exc)
            return []


_logged: set[tuple[str, str, str]] = set()


def _log_once(plugin: str, where: str, exc: Exception) -> None:
    key = (plugin, where, type(exc).__name__)
    if key not in _logged and len(_logged) < 1000:
        _logged.add(key)
        log.warning("%s: its %s could not read the state (%s: %s); shown as not understood",
                    plugin, where, type(exc).__name__, exc)


def unreadable(name: str, exc: Exception) -> Finding:
    """The finding of a plug-in whose findings could not read its state."""
    _log_once(name, "findings", exc)
    return Finding(WARN, f"{name}: state not understood ({type(exc).__name__}: {exc})"[:300])


def _order(plugin: CollectorPlugin) -> tuple[int, str]:
    rank = DOMAINS.index(plugin.domain) if plugin.domain in DOMAINS else len(DOMAINS)
    return rank, plugin.name


def discover() -> dict[str, CollectorPlugin]:
    """Every installed plug-in by name, in domain order. One that fails to load is logged and
    left out: a broken third-party package must not stop the built-in collectors."""
    found: dict[str, CollectorPlugin] = {}
    for ep in entry_points(group=GROUP):
        try:
            plugin: Any = ep.load()
        except Exception as exc:  # noqa: BLE001
            log.error("collector plug-in %s (%s) failed to load: %s", ep.name, ep.value, exc)
            continue
        if not isinstance(plugin, CollectorPlugin) or plugin.name != ep.name:
            log.error("collector plug-in %s (%s) is not a CollectorPlugin named %r", ep.name, ep.value, ep.name)
            continue
        found.setdefault(ep.name, plugin)
    return {p.name: p for p in sorted(found.values(), key=_order)}
