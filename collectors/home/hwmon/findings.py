"""What is wrong with rails and fans, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collectors.findings import BAD, SOON_HARDWARE, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.home.hwmon.state import HwmonState
from collectors.measure import measure

RULES = (
    RuleSpec("rail_out_of_range", "critical", 30, urgency=SOON_HARDWARE, title="Power rail out of range"),
    RuleSpec("fan_stalled", "critical", 30, urgency=SOON_HARDWARE, title="Fan stalled"),
)


def _volts(v: float | None) -> str:
    return measure(v, "V") if v is not None else "an unreadable voltage"


def _limit(v: float | None) -> str:
    return "?" if v is None else f"{v:g}"


def _past(volts: float | None, low: float | None, high: float | None) -> float:
    """How many volts a rail is beyond its nearer limit (an unreadable one: as far as can be)."""
    if volts is None:
        return float("inf")
    return max(0.0, (low - volts) if low is not None else 0.0, (volts - high) if high is not None else 0.0)


def findings(state: HwmonState, judging: Judging) -> list[Finding]:
    out = []
    for r in state.rails:
        if r.ok is False:
            # Two levels ([alerts.rules.rail_out_of_range] warning/critical): volts past the limit.
            sev = judging.level("rail_out_of_range", _past(r.volts, r.min, r.max), 0.0)
            out.append(Finding(BAD, f"{r.name} at {_volts(r.volts)}, outside {_limit(r.min)}-{_limit(r.max)} V",
                               "rail_out_of_range", r.name, {"rail": r.name},
                               judging.alert_severity("rail_out_of_range", sev or "critical")))
    for f in state.fans:
        if f.stalled:
            out.append(Finding(BAD, f"{f.name} stalled: {f.why}", "fan_stalled", f.name, {"fan": f.name}))
    return out


def all_clear(state: HwmonState, judging: Judging) -> str | None:
    parts = (["rails in range"] if state.rails else []) + (["fans turning"] if state.fans else [])
    return ", ".join(parts) or None


TILE = Tile("Power", "/power", all_clear)

CHARTS: dict[str, ChartSpec] = {
    "sensor": (("chip", "sensor"), [("Reading", "attr:metric", {"chip": 0, "sensor": 1})]),
    "rail": (("rail",), [("Voltage", "rackpulse_rail_voltage_volts", {"rail": 0})]),
    "fan": (("fan",), [("Speed (RPM)", "rackpulse_fan_speed_rpm", {"fan": 0})]),
}
