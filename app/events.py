"""Inventory changes in words a person reads: "Disk ZA1049HK: health ok → failing", not
`disk ZA1049HK health ok → failing`; a start-up's "15 disks appeared" as one line, not fifteen.

Each stored event (kind, key, field, old, new) becomes an `EventLine` with a level (how bad
the change is), the domain of the collector that reports the entity (for the filters), and a
link to the page that shows it. The nouns come from the plug-ins (`CollectorPlugin.pages.nouns`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from app.words import (
    FAILING,
    INFO,
    LEVELS,
    OK,
    WARNING,
    change_words,
    field_name,
    level_of,
    owner,
    value_words,
)
from collectors.findings import natural
from collectors.plugin import CollectorPlugin

__all__ = ["FAILING", "INFO", "LEVELS", "OK", "WARNING", "EventLine", "change_words", "collapse", "describe",
           "level_of", "select_lines"]


@dataclass
class EventLine:
    ts: float
    level: str
    domain: str
    what: str  # "Disk ZA1049HK", or "15 disks" for a collapsed line
    change: str  # "health: ok → failing", "appeared"
    href: str | None = None
    members: list[str] = field(default_factory=list)  # the keys a collapsed line stands for


def noun(kind: str, plugins: Mapping[str, CollectorPlugin]) -> str:
    for p in plugins.values():
        if kind in p.pages.nouns:
            return p.pages.nouns[kind]
    return kind.replace("_", " ")


def plural(word: str) -> str:
    return word if word.endswith("s") else word + "s"


def domain_of(event: Mapping[str, Any], plugins: Mapping[str, CollectorPlugin]) -> str:
    plugin = plugins.get(event.get("collector") or "")
    if plugin is None:  # an entity no longer in the inventory table: find its kind's owner
        plugin = next((p for p in plugins.values() if event["kind"] in p.pages.nouns), None)
    return plugin.domain if plugin and plugin.domain else "other"


def href_of(kind: str, key: str, base: str = "") -> str:
    if kind == "disk":
        return f"{base}/disks/{quote(key, safe='')}"
    if kind == "bay":
        return f"{base}/disks"
    return f"{base}/entity/{quote(kind, safe='')}/{quote(key, safe='/')}"


def key_words(key: str, plugin: CollectorPlugin | None) -> str:
    """An entity's key as a person reads it: each part the plug-in has words for ("key" in its
    words) in them, "default/ipv4Unicast/10.0.250.1" -> "default/IPv4 unicast/10.0.250.1"."""
    known = plugin.pages.words.get("key", {}) if plugin is not None else {}
    return "/".join(known.get(part, part) for part in key.split("/")) if known else key


def describe(event: Mapping[str, Any], plugins: Mapping[str, CollectorPlugin], base: str = "") -> EventLine:
    kind, key = event["kind"], event["key"]
    what, plugin = noun(kind, plugins), owner(kind, plugins)
    shown = key_words(key, plugin)
    return EventLine(ts=event["ts"], level=level_of(kind, event["field"], event["old"], event["new"], plugin),
                     domain=domain_of(event, plugins), what=f"{what[:1].upper()}{what[1:]} {shown}",
                     change=change_words(event["field"], event["old"], event["new"], plugin),
                     href=href_of(kind, key, base), members=[shown])


def toggles(events: Iterable[Mapping[str, Any]], least: int = 3, window: float = 60.0
            ) -> list[Mapping[str, Any] | list[Mapping[str, Any]]]:
    """Events newest first; `least` or more changes of one field of one thing, each within
    `window` seconds of the next (a compressor switching on and off), as one list of them."""
    runs: list[list[Mapping[str, Any]]] = []
    open_run: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for e in events:
        which = (e["kind"], e["key"], e["field"])
        run = open_run.get(which)
        if e["field"] != "present" and run is not None and run[-1]["ts"] - e["ts"] <= window:
            run.append(e)
            continue
        open_run[which] = run = [e]
        runs.append(run)
    out: list[Mapping[str, Any] | list[Mapping[str, Any]]] = []
    for r in runs:
        if len(r) >= least:
            out.append(r)
        else:
            out.extend(r)
    return out


def toggle_line(run: list[Mapping[str, Any]], plugins: Mapping[str, CollectorPlugin], base: str = "") -> EventLine:
    """ "compressor: switched 14 times in 4 min, now on"."""
    line = describe(run[0], plugins, base)
    plugin = owner(run[0]["kind"], plugins)
    name = field_name(run[0]["field"], plugin)[0]
    now, raw = value_words(run[0]["field"], run[0]["new"], plugin)
    span = run[0]["ts"] - run[-1]["ts"]
    within = f"{span:.0f} s" if span < 120 else f"{span / 60:.0f} min"
    line.change = f"{name}: changed {len(run)} times in {within}, now {now}" + (f" ({raw})" if raw else "")
    return line


def collapse(events: Iterable[Mapping[str, Any]], plugins: Mapping[str, CollectorPlugin], base: str = "",
             least: int = 3, window: float = 120.0) -> list[EventLine]:
    """Events newest first, as lines; `least` or more of one kind appearing (or going) within
    `window` seconds of each other, as at start-up, become one line naming how many; a field
    that keeps changing (toggles within a minute) one line saying how often."""
    items: list[EventLine | list[Mapping[str, Any]]] = []
    bursts: dict[tuple[str, str], list[Mapping[str, Any]]] = {}  # the newest open burst of each kind
    for e in toggles(events):
        if isinstance(e, list):
            items.append(toggle_line(e, plugins, base))
            continue
        if e["field"] != "present" or e["new"] not in ("appeared", "gone"):
            items.append(describe(e, plugins, base))
            continue
        burst = bursts.get((e["kind"], e["new"]))
        if burst is not None and burst[-1]["ts"] - e["ts"] <= window:
            burst.append(e)
            continue
        bursts[(e["kind"], e["new"])] = burst = [e]
        items.append(burst)
    out: list[EventLine] = []
    for item in items:
        if isinstance(item, EventLine):
            out.append(item)
        elif len(item) < least:
            out.extend(describe(e, plugins, base) for e in item)
        else:
            line = describe(item[0], plugins, base)
            line.what = f"{len(item)} {plural(noun(item[0]['kind'], plugins))}"
            plugin = owner(item[0]["kind"], plugins)
            line.members, line.href = sorted((key_words(e["key"], plugin) for e in item), key=natural), None
            out.append(line)
    return out


def select_lines(lines: Iterable[EventLine], domain: str = "", level: str = "") -> list[EventLine]:
    return [ln for ln in lines if (not domain or ln.domain == domain) and (not level or ln.level == level)]
