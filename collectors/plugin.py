"""A collector is a plug-in: a `CollectorPlugin` its package exports, registered under the
entry point group `rackpulse.collectors` (pyproject.toml's [project.entry-points]). A package
of its own can ship one the same way. Everything rackpulse knows of a collector comes from
here: its config section's model, how to build it, its state's type, its metrics (on the
Collector class), what is wrong (findings, with the alert rules they raise), its overview
tile, its entity charts, its section of a page, its bays, its monitors, its demo scene.

Every function a plug-in gives takes its own typed state (collectors/state.py). The app
calls them through the methods below, which isolate the plug-in: a state it cannot read costs
its own tile, section or bays, never the page or the other plug-ins."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Generic

from collectors.base import Collector, Runner
from collectors.config import CollectorBase
from collectors.context import HostContext
from collectors.findings import WARN, BayDevice, ChartSpec, Finding, Judging, Monitor, RuleSpec, S, Tile
from collectors.privilege import Privilege
from collectors.starter import HostTree
from collectors.state import Record, State, StateError, load

GROUP = "rackpulse.collectors"
# The overview and /metrics list collectors by domain, then by name; a domain not named here
# (a third party's) comes last.
DOMAINS = ("host", "disks", "storage", "network", "probes", "home")
log = logging.getLogger("rackpulse.collectors")

# What a template reads: names to values, any (a template is the edge where types end).
View = Mapping[str, object]


@dataclass(frozen=True)
class Section(Generic[S]):
    """The collector's part of a page: `section.html` in `folder`, rendered with `v`: what
    `view(state, findings)` makes of its state and of the findings judged on it, or the state
    itself when there is no view. Pages are named by the plug-ins: every page a section names is
    served at /<page> and linked in the navigation. `summary`, a template beside it, is drawn on
    the overview with the same `v` (the arrays table)."""

    page: str  # "network": served at /network
    title: str  # the page's title, "Network"
    folder: Path  # the collector's package folder, holding section.html
    view: Callable[[S, Sequence[Finding]], View] | None = None
    summary: str | None = None


@dataclass(frozen=True)
class Detail(Generic[S]):
    """A page of its own for each thing of one kind: /<path>/<key> (a disk's page). `find` picks
    the thing out of the state; the page also shows the findings about it (their subject is the
    key), its stored inventory entry (`kind`) once it is gone, its history and events, and a
    form to label its bay. `template` lives in the plug-in's folder and reads `view(state, thing)`."""

    path: str  # "disks": served at /disks/<key>
    kind: str  # its inventory kind ("disk")
    template: str
    find: Callable[[S, str], Record | None]
    view: Callable[[S, Record], View] = lambda state, thing: {}


def _none(state: State, judging: Judging) -> list[Finding]:
    return []


@dataclass(frozen=True)
class Pages(Generic[S]):
    """Its parts of pages beyond its tile, and the words they use. A plug-in without pages
    still has its tile, its alerts, /metrics and the /collectors page."""

    section: Section[S] | None = None
    detail: Detail[S] | None = None
    charts: dict[str, ChartSpec] = field(default_factory=dict)
    # The devices it places in the user's bays (the bay map, the "pull" callouts).
    bays: Callable[[S], list[BayDevice]] | None = None
    # The things /status lists with their uptime (probes).
    monitors: Callable[[S], list[Monitor]] | None = None
    # What people call the kinds of entity it reports, for the events page: {"md_member":
    # "array member"}. A kind not named here reads as itself with spaces ("bond slave").
    nouns: dict[str, str] = field(default_factory=dict)
    # Its tools' states in the words people use, per field of its entities: {"state": {"UBad":
    # "unconfigured bad"}}. Entity pages and events show them, the raw value beside (app/words.py).
    words: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # What its entities' fields are called on their pages: {"dg": "drive group"}.
    field_names: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Needs:
    """What it needs of the host and of other plug-ins."""

    # The commands it runs that need root or a group (collectors/privilege.py): the sudoers
    # drop-in, its README and `rackpulse doctor` are made from these.
    privileges: tuple[Privilege, ...] = ()
    # The other plug-ins whose modules it imports (their state types, a parser): smart reads
    # mdraid's, ZFS's and MegaRAID's states to know a disk's group. tests/test_house_rules.py
    # fails on an import of another plug-in not named here, so the coupling stays in sight.
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setup:
    """Its part of `rackpulse demo` and of `rackpulse init`."""

    # Writes what it reads into the demo's host tree at story time t (seconds into the loop), so
    # the demo shows it without hardware.
    scene: Callable[[Path, float], None] | None = None
    # What it finds in the host's tree, as its section of the starter config (TOML lines,
    # commented); [] when there is nothing of it here.
    starter: Callable[[HostTree], list[str]] | None = None


@dataclass(frozen=True)
class Legacy(Generic[S]):
    """Kept for what came before."""

    # Keys /api/state has carried for it since before every plug-in's state was there
    # ({"arrays": lambda s: s.arrays}): kept for the scripts that read them.
    api: Mapping[str, Callable[[S], object]] = field(default_factory=dict)
    # Keys of its section that now live in the app's config ({"temperature_warning":
    # "alerts.disk_hot_celsius"}): still read when the new one is not set, and said deprecated.
    moved: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CollectorPlugin(Generic[S]):
    """A plug-in is these five, given in this order, and whatever of the rest it has, by name
    (docs/first-collector.md builds one in three files): what is wrong and its tile, where it
    sits, and four groups a first plug-in leaves out: its pages, what it needs of the host, its
    part of the demo and of `init`, and what is kept for older versions."""

    name: str  # the config section, the scheduler's name, the metric subsystem
    collector: type[Collector]  # its declared metrics are read from here without building it
    build: Callable[[Any, HostContext, Runner], Collector]  # (its validated section, the host, the command runner)
    config: type[CollectorBase]  # its section's model, [collectors.<name>]
    state: type[S]  # what its collector's collect() returns as CollectResult.state
    _: KW_ONLY  # everything below is optional and named

    # What is wrong: the words of tiles, alerts and webhooks, and the rules they raise.
    findings: Callable[[S, Judging], list[Finding]] = _none
    rules: tuple[RuleSpec, ...] = ()
    tile: Tile[S] | None = None  # its tile on the overview, with its all-clear sentence
    # Where it sits: its domain (disks, network, home ...: a folder under collectors/ for the
    # built-in ones), and its place within it (tiles, page sections): lower first, then by name.
    domain: str = ""
    rank: int = 0
    # The four groups.
    pages: Pages[S] = field(default_factory=Pages)
    needs: Needs = field(default_factory=Needs)
    setup: Setup = field(default_factory=Setup)
    legacy: Legacy[S] = field(default_factory=Legacy)

    # -- called by the app: one plug-in's bad state costs its own tile or section, never the page ----

    def load(self, data: Mapping[str, object]) -> S:
        """JSON (stored, or from an agent) as its state; StateError saying why it cannot be."""
        return load(self.state, data)

    def typed(self, state: State | None) -> S:
        """Its state, or its empty state when it has none yet; StateError for another type."""
        if state is None:
            return self.state()
        if not isinstance(state, self.state):
            raise StateError(f"a {type(state).__name__}, not the {self.state.__name__} it reads")
        return state

    def judge(self, state: State | None, judging: Judging) -> list[Finding]:
        """Its findings; a state it cannot read (a value of another type, a bug in the plug-in)
        is one finding saying so, not an exception that stops every other plug-in's."""
        try:
            return list(self.findings(self.typed(state), judging))
        except Exception as exc:  # noqa: BLE001 - a plug-in's bug or an odd state stays in its own tile
            return [unreadable(self.name, exc)]

    def clear_words(self, state: State | None, judging: Judging) -> str | None:
        if self.tile is None:
            return None
        try:
            return self.tile.all_clear(self.typed(state), judging)
        except Exception as exc:  # noqa: BLE001
            _log_once(self.name, "tile", exc)
            return None

    def view(self, state: State | None, found: Sequence[Finding] = ()) -> View:
        """What its section reads; {"error": ...} (shown in place of the section) when it cannot."""
        section = self.pages.section
        if section is None:
            return {}
        try:
            typed = self.typed(state)
            return section.view(typed, found) if section.view else dict(typed)
        except Exception as exc:  # noqa: BLE001
            _log_once(self.name, "section", exc)
            return {"error": f"{self.name}: state not understood ({type(exc).__name__}: {exc})"[:300]}

    def bay_list(self, state: State | None) -> list[BayDevice]:
        return self._list(self.pages.bays, state, "bays")

    def monitor_list(self, state: State | None) -> list[Monitor]:
        return self._list(self.pages.monitors, state, "monitors")

    def _list(self, fn: Callable[[S], list[Any]] | None, state: State | None, where: str) -> list[Any]:
        if fn is None:
            return []
        try:
            return list(fn(self.typed(state)))
        except Exception as exc:  # noqa: BLE001
            _log_once(self.name, where, exc)
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


def _order(plugin: CollectorPlugin[Any]) -> tuple[int, int, str]:
    rank = DOMAINS.index(plugin.domain) if plugin.domain in DOMAINS else len(DOMAINS)
    return rank, plugin.rank, plugin.name


def installed() -> list[str]:
    """The names of every installed plug-in, without loading any."""
    return [ep.name for ep in entry_points(group=GROUP)]


def discover(only: Collection[str] | None = None) -> dict[str, CollectorPlugin[Any]]:
    """Every installed plug-in by name (or those named in `only`: the others are not even
    imported), in domain order. One that fails to load is logged and left out: a broken
    third-party package must not stop the built-in collectors."""
    found: dict[str, CollectorPlugin[Any]] = {}
    for ep in entry_points(group=GROUP):
        if only is not None and ep.name not in only:
            continue
        try:
            plugin: Any = ep.load()
        except Exception as exc:  # noqa: BLE001
            log.error("collector plug-in %s (%s) failed to load: %s", ep.name, ep.value, exc)
            continue
        if not isinstance(plugin, CollectorPlugin) or plugin.name != ep.name:
            log.error("collector plug-in %s (%s) is not a CollectorPlugin named %r", ep.name, ep.value, ep.name)
            continue
        if not (isinstance(plugin.state, type) and issubclass(plugin.state, State)):
            log.error("collector plug-in %s (%s) declares no State type (state=...)", ep.name, ep.value)
            continue
        found.setdefault(ep.name, plugin)
    return {p.name: p for p in sorted(found.values(), key=_order)}
