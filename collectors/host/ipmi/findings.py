"""What is wrong with a server's hardware, as its BMC says it: the words the tile, the alert and
the webhook share ("r720: FAN3: 0 RPM below 600", "PSU2 Status: power supply failure detected")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from collectors.findings import BAD, SOON_HARDWARE, WARN, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.host.ipmi.state import BmcView, IpmiState, SelEvent, Sensor
from collectors.measure import DECIMALS, measure
from collectors.plugin import View

RULES = (
    RuleSpec("ipmi_sensor_critical", "critical", title="BMC sensor critical"),
    RuleSpec("ipmi_sensor_warning", "warning", 300, title="BMC sensor warning"),
    RuleSpec("ipmi_psu_redundancy_lost", "critical", urgency=SOON_HARDWARE, title="Power supply redundancy lost"),
    RuleSpec("ipmi_sel_critical", "critical", title="BMC event log: critical entry"),
    RuleSpec("ipmi_sel_warning", "warning", title="BMC event log: warning entry"),
    RuleSpec("ipmi_sel_full", "warning", title="BMC event log full"),
    RuleSpec("ipmi_unreachable", "warning", 120, title="BMC unreachable"),
)
UNITS = {"C": "°C", "F": "°F"}
# The events a discrete sensor asserts while all is well: not worth repeating beside a failure.
_BENIGN = {"presence detected", "device present", "device inserted/device present", "fully redundant"}
_POWER_TYPES = {"power supply", "power unit"}


def _phrase(event: str) -> str:
    """FreeIPMI's "Power Supply Failure detected" as a clause: "power supply failure detected"
    (an acronym keeps its capitals: "AC lost", "ECC")."""
    return " ".join(w if len(w) > 1 and w.isupper() else w.lower() for w in event.split(" "))


def _where(b: BmcView) -> str:
    return f"{b.name}: " if b.remote else ""


def redundancy_lost(s: Sensor) -> bool:
    return s.type.lower() in _POWER_TYPES and any(
        e.startswith("Redundancy Lost") or e.startswith("Non-redundant") for e in s.events)


def sensor_words(s: Sensor) -> str:
    """ "0 RPM below 600" for a threshold sensor past its limit; the asserted events for a discrete one."""
    unit = UNITS.get(s.unit or "", s.unit or "")
    if s.reading is not None:
        value = measure(s.reading, unit) if unit in DECIMALS else f"{s.reading:g} {unit}".strip()
        t = {k: v for k, v in s.thresholds.items() if v is not None}
        for key, side in (("Lower NR", "below"), ("Lower C", "below"), ("Lower NC", "below")):
            if key in t and s.reading <= t[key]:
                return f"{value} {side} {t[key]:g}"
        for key, side in (("Upper NR", "above"), ("Upper C", "above"), ("Upper NC", "above")):
            if key in t and s.reading >= t[key]:
                return f"{value} {side} {t[key]:g}"
        return value
    shown = [e for e in s.events if e.lower() not in _BENIGN] or list(s.events)
    return ", ".join(_phrase(e) for e in shown) or "–"  # a discrete sensor asserting nothing


def event_words(e: SelEvent) -> str:
    """A SEL entry in words; a memory event's module number (event data 3) said as such."""
    text = e.event
    if e.type == "Memory":
        text = re.sub(r"\s*;\s*Event Data3 = ([0-9A-Fa-f]{2})h.*$", lambda m: f" (memory module {int(m[1], 16)})", text)
    return f"{e.name}: {_phrase(text)}"


def bmc_findings(b: BmcView, state: IpmiState) -> list[Finding]:
    where, labels = _where(b), {"bmc": b.name}
    if not b.up:
        if b.remote:
            return [Finding(BAD, f"BMC {b.name} unreachable: {b.error}", "ipmi_unreachable", b.name, labels),
                    *_sel_findings(b)]
        return [Finding(WARN, f"this host's BMC: {b.error}", labels=labels)]
    out = []
    for s in b.sensors:
        about_it = {**labels, "sensor": s.name}
        if redundancy_lost(s):
            out.append(Finding(BAD, f"{where}{s.name}: {sensor_words(s)}", "ipmi_psu_redundancy_lost",
                               f"{b.name}/{s.name}", about_it))
        elif s.state == "Critical":
            out.append(Finding(BAD, f"{where}{s.name}: {sensor_words(s)}", "ipmi_sensor_critical",
                               f"{b.name}/{s.name}", about_it))
        elif s.state == "Warning":
            out.append(Finding(WARN, f"{where}{s.name}: {sensor_words(s)}", "ipmi_sensor_warning",
                               f"{b.name}/{s.name}", about_it))
    out += _sel_findings(b)
    full = state.sel_full_ratio if state.sel_full_ratio is not None else 0.9
    if b.sel_used_ratio is not None and b.sel_used_ratio >= full:
        out.append(Finding(WARN, f"{where}system event log {b.sel_used_ratio:.0%} full: a full log drops new "
                                 "events (read it, then clear it: ipmi-sel --clear)", "ipmi_sel_full", b.name, labels))
    return out


def _sel_findings(b: BmcView) -> list[Finding]:
    """One finding per kind of held entry: a burst of 40 correctable errors on one DIMM is one
    line saying 40 times, and one alert (its subject the burst's first record), not 40."""
    groups: dict[tuple[str, str | None], list[SelEvent]] = {}
    for e in b.held:
        groups.setdefault((event_words(e), e.state), []).append(e)
    out = []
    for (words, state), entries in groups.items():
        times = f", {len(entries)} times" if len(entries) > 1 else ""
        critical = state == "Critical"
        out.append(Finding(BAD if critical else WARN, f"{_where(b)}event log: {words}{times}",
                           "ipmi_sel_critical" if critical else "ipmi_sel_warning", f"{b.name}#{entries[0].id}",
                           {"bmc": b.name, "sensor": entries[0].name}))
    return out


def findings(state: IpmiState, judging: Judging) -> list[Finding]:
    return [f for b in state.bmcs for f in bmc_findings(b, state)]


def all_clear(state: IpmiState, judging: Judging) -> str | None:
    up = [b for b in state.bmcs if b.up]
    if not up:
        return None
    sensors = sum(len(b.sensors) for b in up)
    return f"{len(up)} BMC{'s' if len(up) != 1 else ''}, {sensors} sensors nominal"


TILE = Tile("Hardware", "/host#ipmi", all_clear)


def view(state: IpmiState, found: Sequence[Finding]) -> View:
    bmcs = []
    for b in state.bmcs:
        mine = about(found, bmc=b.name)
        rows = [(s, level_of(about(mine, sensor=s.name)), sensor_words(s))
                for s in sorted(b.sensors, key=lambda s: (s.state != "Critical", s.state != "Warning", s.type, s.name))
                if s.state is not None or s.reading is not None]
        bmcs.append({"bmc": b, "level": level_of(mine), "sensors": rows,
                     "recent": [(e, event_words(e)) for e in reversed(b.recent)]})
    return {"bmcs": bmcs}
