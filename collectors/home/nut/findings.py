"""What is wrong with a UPS, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collectors.findings import BAD, SOON_POWER, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.home.nut.state import NutState, Ups

RULES = (
    RuleSpec("ups_on_battery", "warning", 30, urgency=SOON_POWER, title="UPS on battery"),
    RuleSpec("ups_low_battery", "critical", urgency=SOON_POWER, title="UPS battery low"),
    RuleSpec("ups_load_high", "warning", 60, title="UPS load high"),
)
# The load, % of the UPS's capacity, from which ups_load_high is a warning and critical: past 80 %
# the runtime on battery is short, at 100 % the UPS turns off or goes to bypass on overload.
LOAD_WARNING, LOAD_CRITICAL = 80.0, 95.0
# upsd's ups.status flags (NUT's docs/new-drivers.txt), as words.
FLAG_WORDS = {"OL": "on mains", "OB": "on battery", "LB": "low battery", "HB": "high battery",
              "RB": "replace battery", "CHRG": "charging", "DISCHRG": "discharging", "BYPASS": "on bypass",
              "CAL": "calibrating", "OFF": "off", "OVER": "overloaded", "TRIM": "trimming voltage",
              "BOOST": "boosting voltage", "FSD": "forced shutdown", "ALARM": "alarm", "WAIT": "waiting",
              "TEST": "testing", "OFFLINE": "offline"}


def status_words(flags: list[str]) -> str:
    """ "on battery, discharging, low battery" for OB DISCHRG LB; a flag NUT adds later as itself."""
    return ", ".join(FLAG_WORDS.get(f, f) for f in flags)


def charge(u: Ups) -> str:
    return f"{u.charge:.0f}% charge" if u.charge is not None else "charge unknown"


def runtime(u: Ups) -> str:
    s = u.runtime
    if s is None:
        return "runtime unknown"
    return f"about {int(s) // 60} min left" if s >= 60 else f"about {int(s)} s left"


def load_finding(u: Ups, judging: Judging) -> Finding | None:
    """The load past its limits ([alerts.rules.ups_load_high] warning / critical), with what it
    means: the runtime the battery would give at this load."""
    if u.load is None:
        return None
    sev = judging.level("ups_load_high", u.load, LOAD_WARNING, LOAD_CRITICAL)
    if sev is None:
        return None
    return Finding(BAD if sev == "critical" else WARN,
                   f"UPS {u.name} load {u.load:.0f}% of its capacity: on battery {runtime(u)} at this load",
                   "ups_load_high", u.name, {"ups": u.name}, judging.alert_severity("ups_load_high", sev))


def findings(state: NutState, judging: Judging) -> list[Finding]:
    out = []
    for u in state.ups:
        labels = {"ups": u.name}
        if not u.up:
            out.append(Finding(BAD, f"UPS {u.name}: {u.error}", labels=labels))
            continue
        if u.low_battery:
            out.append(Finding(BAD, f"UPS {u.name} battery low: {charge(u)}, {runtime(u)}", "ups_low_battery", u.name,
                               labels))
        if (high := load_finding(u, judging)) is not None:
            out.append(high)
        if u.on_battery:
            # Two levels ([alerts.rules.ups_on_battery] warning/critical): the charge in percent,
            # lower is worse; on battery it is a warning at least.
            sev = None if u.charge is None else judging.level("ups_on_battery", u.charge, None, None, below=True)
            sev = sev or "warning"
            out.append(Finding(BAD if sev == "critical" else WARN, f"UPS {u.name} on battery ({charge(u)})",
                               "ups_on_battery", u.name, labels, judging.alert_severity("ups_on_battery", sev)))
    return out


def all_clear(state: NutState, judging: Judging) -> str | None:
    return "on mains" if state.ups else None


TILE = Tile("Power", "/power", all_clear)

CHARTS: dict[str, ChartSpec] = {"ups": (("ups",), [("Battery charge", "rackpulse_ups_battery_charge_ratio", {"ups": 0}),
                             ("Battery voltage", "rackpulse_ups_battery_voltage_volts", {"ups": 0})])}
