"""What a plug-in may know of the host it collects on, besides its own config section: the
contract's second argument, `build(section, host, runner)`. A plug-in never sees the app's
Config; everything it needs of the host is here."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import BaseModel

from collectors.location import BayRule

M = TypeVar("M", bound=BaseModel)


class BayRules:
    """The user's bays: the config's [[disks.bays]] in their order, then the labels saved from a
    disk's page. The saved ones change while rackpulse runs (`replace_saved`), and every collector
    holding this object sees them from its next collection, without a restart."""

    def __init__(self, configured: Iterable[BayRule] = (), saved: Iterable[BayRule] = ()) -> None:
        self.configured = list(configured)
        self.saved = list(saved)

    def replace_saved(self, rules: Iterable[BayRule]) -> None:
        self.saved = list(rules)

    def __iter__(self) -> Iterator[BayRule]:
        return iter([*self.configured, *self.saved])

    def __len__(self) -> int:
        return len(self.configured) + len(self.saved)


class SavedEntries:
    """Entries of plug-ins' config sections made in the browser (a probe added on /monitors),
    stored in the database beside the TOML's. The web replaces them when one is saved; a
    collector holding this object reads them at its next collection, without a restart.
    Each entry: {"kind": "http", "spec": {...the TOML entry's keys...}}."""

    def __init__(self, entries: Mapping[str, list[dict[str, object]]] | None = None) -> None:
        self._by_section: dict[str, list[dict[str, object]]] = {k: list(v) for k, v in (entries or {}).items()}

    def replace(self, section: str, entries: Iterable[dict[str, object]]) -> None:
        self._by_section[section] = list(entries)

    def of(self, section: str) -> list[dict[str, object]]:
        return list(self._by_section.get(section, ()))

    def checked(self, section: str, models: Mapping[str, type[M]], taken: set[str], what: str
                ) -> tuple[list[M], list[str]]:
        """This section's entries, each checked by the model of its kind, and the warnings: one
        not understood is left out; one whose name the config file already has (`taken`) too,
        the file's being the one used. `taken` gains the names kept."""
        out: list[M] = []
        warnings = []
        for entry in self.of(section):
            kind, spec = entry.get("kind"), entry.get("spec")
            model = models.get(str(kind))
            try:
                if model is None:
                    raise ValueError(f"no {what} kind {kind!r}")
                item = model.model_validate(spec)
            except ValueError as exc:  # pydantic's ValidationError is one
                warnings.append(f"a {what} made in the browser is not understood: {str(exc)[:200]}")
                continue
            name = str(getattr(item, "name", ""))
            if name in taken:
                warnings.append(f"{name}: the config file has a {what} of that name; it is the one used")
                continue
            taken.add(name)
            out.append(item)
        return out, warnings


@dataclass(frozen=True)
class Ping:
    """What a job last said through its heartbeat URL."""

    kind: str  # "success", "fail" or "start"
    at: float
    body: str = ""  # the job's log, up to 10 KB (a /fail's reason)


class PingBook:
    """The last pings of each heartbeat (by name), as the web records them (`/ping/<token>`) and
    the heartbeats collector reads them. Thread-safe: the web writes while a collection reads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # name -> kind -> its last ping of that kind
        self._last: dict[str, dict[str, Ping]] = {}

    def record(self, name: str, ping: Ping) -> None:
        with self._lock:
            self._last.setdefault(name, {})[ping.kind] = ping

    def last(self, name: str) -> dict[str, Ping]:
        with self._lock:
            return dict(self._last.get(name, {}))


@dataclass(frozen=True)
class HostContext:
    name: str  # the host's name, as every series' `host` label says it
    root: Path = Path("/")  # where its /proc, /sys and /dev are (a fixture tree in tests, a container's /host)
    bays: BayRules = field(default_factory=BayRules)
    # [[disks.accept]]: serial -> SMART attribute id -> the value accepted as this disk's normal
    accepted: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    disk_hot_celsius: float = 50.0  # alerts.disk_hot_celsius: a disk's verdict and its alert agree
    saved: SavedEntries = field(default_factory=SavedEntries)  # entries made in the browser
    pings: PingBook = field(default_factory=PingBook)  # what jobs said through their heartbeat URLs
    # The host's latest state of every collector, by name (the scheduler's Snapshot.states, live):
    # what one plug-in may read of another's, e.g. the self-test schedule of a ZFS scrub.
    states: Mapping[str, object] = field(default_factory=dict)


# -- what the app's Config gives the plug-ins' host, as Protocols: collectors/ never imports app/ --


class _BayLine(Protocol):
    def model_dump(self) -> Mapping[str, str]: ...  # a bay line: label, serial, wwn, path, slot ...


class _Accepted(Protocol):
    @property
    def serial(self) -> str: ...
    @property
    def attribute(self) -> str: ...
    @property
    def value(self) -> float: ...


class _Disks(Protocol):
    @property
    def bays(self) -> Sequence[_BayLine]: ...
    @property
    def accept(self) -> Sequence[_Accepted]: ...


class HostConfig(Protocol):
    """What host_context() and build_collectors() read of the app's Config: the host, its root,
    the [disks] section, every collector's section (a pydantic model, one field a plug-in) and the
    hot-disk threshold."""

    @property
    def host(self) -> str: ...
    @property
    def host_root(self) -> Path: ...
    @property
    def disks(self) -> _Disks: ...
    @property
    def collectors(self) -> BaseModel: ...
    def disk_hot_celsius(self) -> float: ...
