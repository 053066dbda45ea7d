"""The inventory in words a person reads: a tool's raw states ("UBad", "OB DISCHRG LB",
"Active") as what they mean ("unconfigured bad", "on battery, discharging, low battery",
"down"), the raw value kept beside them for experts; yes/no fields as the word that fits
("up"/"down", "degraded: yes"); numbers with their units. The events page, the entity pages
and their charts read the same words, so a change and the page it links to agree.

The words for a plug-in's own states come from the plug-in (`CollectorPlugin.pages.words`,
`.pages.field_names`); what is common to all (a boolean, a unit suffix, whether a
word is bad news) is here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from collectors.findings import natural
from collectors.measure import DECIMALS, measure, number
from collectors.plugin import CollectorPlugin

FAILING, WARNING, OK, INFO = "failing", "warning", "ok", "info"
LEVELS = (FAILING, WARNING, OK, INFO)

# Words a new value says about the thing: the state it went into.
_BAD = {"failing", "failed", "faulty", "missing", "removed", "down", "lowerlayerdown", "notpresent", "stalled",
        "critical", "fault", "degraded", "gone", "faulted", "unavail", "unavailable", "offline", "unconfigured bad",
        "low battery", "out", "out of range", "broken"}
_WARN = {"warning", "rebuilding", "recovering", "resyncing", "reshaping", "checking", "spare", "standby",
         "on battery", "partially degraded", "resilvering", "shut down", "discharging"}
_GOOD = {"ok", "up", "established", "clean", "active", "online", "on mains", "back", "in_sync", "in sync", "optimal",
         "in", "within range", "running"}
# Fields whose value is a yes/no about health: which answer is the bad one.
BAD_WHEN = {"up": "false", "ok": "false", "present": "false", "degraded": "true", "fault": "true", "standby": "true",
            "low_battery": "true", "on_battery": "true", "stalled": "true", "in_range": "false", "in": "false"}
# Yes/no fields that read better as a pair of words than as yes/no.
_BOOL_WORDS = {"up": ("up", "down"), "in": ("in", "out"), "in_range": ("within range", "out of range"),
               "admin_up": ("enabled", "disabled"), "compressor": ("running", "off"), "stalled": ("stalled", "turning")}
_BOOL_NAMES = {"up": "link", "in": "in the cluster", "in_range": "range", "admin_up": "admin", "stalled": "fan"}
# Unit suffixes of field names: "speed_mbps" reads "speed", its values "21 Mbit/s".
_UNITS = {"_mbps": "Mbit/s", "_celsius": "°C", "_volts": "V", "_rpm": "RPM", "_pct": "%", "_percent": "%",
          "_seconds": "s", "_bytes": "bytes"}


@dataclass(frozen=True)
class Fact:
    """One fact on an entity's page: its name, its value in words, the raw value when the words
    differ from it (shown small, for experts), and how good or bad the value is."""

    name: str
    words: str
    raw: str | None = None
    level: str = INFO


def duration(seconds: float) -> str:
    """"2 d 4 h", "3 h 5 min", "16 min", "4 min 52 s", "42 s": the small unit only where it says something."""
    s = int(seconds)
    if s >= 86400:
        return f"{s // 86400} d {s % 86400 // 3600} h" if s % 86400 >= 3600 else f"{s // 86400} d"
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60} min" if s % 3600 >= 60 else f"{s // 3600} h"
    if s >= 600:
        return f"{s // 60} min"
    if s >= 60:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s} s"


def owner(kind: str, plugins: Mapping[str, CollectorPlugin]) -> CollectorPlugin | None:
    """The plug-in that reports entities of this kind."""
    return next((p for p in plugins.values() if kind in p.pages.nouns), None)


def text(value: object) -> str | None:
    """A stored attribute as the text events store: booleans "true"/"false", None as None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(sorted((str(v) for v in value), key=natural))
    return str(value)


def field_name(field: str, plugin: CollectorPlugin | None = None) -> tuple[str, str | None]:
    """(what a field is called, the unit of its values)."""
    if plugin is not None and field in plugin.pages.field_names:
        return plugin.pages.field_names[field], None
    if field in _BOOL_NAMES:
        return _BOOL_NAMES[field], None
    for suffix, unit in _UNITS.items():
        if field.endswith(suffix):
            return field.removesuffix(suffix).replace("_", " "), unit
    return field.replace("_", " "), None


def value_words(field: str, value: str | None, plugin: CollectorPlugin | None = None) -> tuple[str, str | None]:
    """(the value in words, the raw value when it says something else). A value of several
    tokens the plug-in knows one by one (NUT's "OB DISCHRG LB") reads token by token."""
    if value is None or value == "":
        return ("unknown" if field.endswith(tuple(_UNITS)) else "none"), None
    if value in ("true", "false"):
        yes, no = _BOOL_WORDS.get(field, ("yes", "no"))
        return (yes if value == "true" else no), None
    known = plugin.pages.words.get(field, {}) if plugin is not None else {}
    if value in known:
        return known[value], (value if known[value].lower() != value.lower() else None)
    tokens = value.split()
    if len(tokens) > 1 and all(t in known for t in tokens):
        order = list(known)  # the plug-in's order: "on battery" before "low battery"
        return ", ".join(known[t] for t in sorted(tokens, key=order.index)), value
    listed = _json_list(value)
    if listed is not None:
        return (", ".join(sorted(listed, key=natural)) or "none"), None
    unit = field_name(field, plugin)[1]
    if unit in DECIMALS and number(value) is not None:
        return measure(value, unit), None
    return (f"{value} {unit}" if unit else value), None


def _json_list(value: str) -> list[str] | None:
    """A list attribute as events store it (JSON), or None for any other value."""
    if not value.startswith("["):
        return None
    try:
        got = json.loads(value)
    except ValueError:
        return None
    return [str(v) for v in got] if isinstance(got, list) else None


def level_of(kind: str, field: str, old: str | None, new: str | None,
             plugin: CollectorPlugin | None = None) -> str:
    """How bad a value (the new one of a change) is: failing, warning, ok or info."""
    if field == "present":
        return {"appeared": INFO, "back": OK}.get(new or "", WARNING)
    value = (new or "").strip().lower()
    if field in BAD_WHEN and value in ("true", "false"):
        return FAILING if value == BAD_WHEN[field] else OK
    if kind == "bgp_peer" and field == "state":
        return OK if value == "established" else WARNING if value.startswith("idle (admin)") else FAILING
    said = value_words(field, new, plugin)[0].lower() if new else value
    parts = [{p.strip() for p in v.replace(";", ",").split(",")} | {v} for v in (said, value)]
    for known, level in ((_BAD, FAILING), (_WARN, WARNING), (_GOOD, OK)):
        if any(p & known for p in parts):
            return level
    return INFO


def change_words(field: str, old: str | None, new: str | None, plugin: CollectorPlugin | None = None) -> str:
    """ "health: ok → failing"; a tool's states in words with the raw ones after them:
    "state: online → unconfigured bad (Onln → UBad)"."""
    if field == "present":
        return {"appeared": "appeared", "back": "is back", "gone": "is gone"}.get(new or "", new or "changed")
    name = field_name(field, plugin)[0]
    before, after = _json_list(old or ""), _json_list(new or "")
    if before is not None and after is not None:  # a list: what left it and what joined it
        gone = sorted(set(before) - set(after), key=natural)
        came = sorted(set(after) - set(before), key=natural)
        said = [f"{', '.join(gone)} left" if gone else "", f"{', '.join(came)} joined" if came else ""]
        return f"{name}: " + ("; ".join(w for w in said if w) or "reordered")
    (a, ra), (b, rb) = value_words(field, old, plugin), value_words(field, new, plugin)
    raw = f" ({old or '–'} → {new or '–'})" if ra or rb else ""
    return f"{name}: {a} → {b}{raw}"


def facts(kind: str, attrs: Mapping[str, object], plugin: CollectorPlugin | None = None) -> list[Fact]:
    """An entity's stored attributes as facts in words, in the order it stores them."""
    out = []
    for field, value in attrs.items():
        raw = text(value)
        words, shown_raw = value_words(field, raw, plugin)
        level = level_of(kind, field, None, raw, plugin) if raw is not None else INFO
        out.append(Fact(field_name(field, plugin)[0], words, shown_raw, level))
    return out


# The fields that say what state a thing is in, most telling first.
STATE_FIELDS = ("health", "state", "status", "oper", "up", "degraded", "fault", "stalled", "in_range", "array_state")


def headline(kind: str, attrs: Mapping[str, object], present: bool,
             plugin: CollectorPlugin | None = None) -> Fact:
    """What the entity's page says first: its state in words and how bad it is (the worst of its
    facts)."""
    if not present:
        return Fact("state", "gone", None, WARNING)
    found = dict(zip(attrs, facts(kind, attrs, plugin), strict=True))
    rank = {FAILING: 0, WARNING: 1, OK: 2, INFO: 3}
    # What is wrong, worst first; or else the field that says its state.
    wrong = sorted((f for f in found.items() if f[1].level in (FAILING, WARNING)), key=lambda f: rank[f[1].level])
    telling = [(name, found[name]) for name in STATE_FIELDS if name in found]
    if not wrong and not telling:
        return Fact("state", "present", None, OK)
    said = [(f.name if f.words in ("yes", "no") else f.words, f.raw) for _, f in (wrong[:2] or telling[:1])]
    level = wrong[0][1].level if wrong else OK
    return Fact("state", " · ".join(w for w, _ in said), " ".join(r for _, r in said if r) or None, level)


def judged(head: Fact, said: Sequence[tuple[str, str]]) -> Fact:
    """The headline held to what is judged of the thing now: its findings' and firing alerts'
    (level, words), so that its page never opens with a green "stopped" while pve_guest_down fires
    for it. The worst of them leads, the stored state after it."""
    rank = {FAILING: 0, WARNING: 1, OK: 2, INFO: 3}
    worst = sorted(said, key=lambda lw: rank.get(lw[0], 3))
    if not worst or rank.get(worst[0][0], 3) >= rank.get(head.level, 3):
        return head
    level, text_ = worst[0]
    raw = " · ".join(x for x in (head.words, head.raw) if x and x != "present")
    return Fact(head.name, text_, raw or None, level)


def kwh(value: object) -> str:
    """An amount of energy's figure, one rounding wherever a page says kWh: two decimals under 10,
    one under 100, none above ("0.33", "18.2", "7236"). A page said 0.33 as "0.3" for the month
    beside "0.33" today, and "18.20" beside "18.2"; the heat pump's 9.97 was "9" (cut) and "10.0"."""
    v = number(value)
    if v is None:
        return "–"
    size = abs(v)
    return f"{v:.2f}" if size < 10 else f"{v:.1f}" if size < 100 else f"{v:.0f}"
