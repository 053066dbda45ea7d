"""What is wrong with the heat pump, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import BAD, Finding, Judging, RuleSpec, Tile
from collectors.home.heatpump.state import HeatpumpState
from collectors.plugin import View

RULES = (RuleSpec("heatpump_fault", "critical", 0, 12), RuleSpec("heatpump_unreachable", "warning", 600))


def findings(state: HeatpumpState, judging: Judging) -> list[Finding]:
    status = judging.status
    if status is not None and status.up is False:
        return [Finding(BAD, f"heat pump unreachable: {status.last_error}", "heatpump_unreachable", "heatpump")]
    if state.fault:
        return [Finding(BAD, f"heat pump fault: active error {state.active_error}", "heatpump_fault", "heatpump",
                        {"error": state.active_error})]
    return []


def _deg(v: float | None) -> str:
    return "?" if v is None else f"{v:g}"


def all_clear(state: HeatpumpState, judging: Judging) -> str | None:
    if state.controller is None:
        return None
    t = state.temperatures
    running = [f for f in ("heating", "hot_water", "defrost") if state.flags.get(f)]
    return (f"outside {_deg(t.get('outside'))} °C, flow {_deg(t.get('flow'))} °C, hot water "
            f"{_deg(t.get('hot_water_actual'))} °C; " + (", ".join(running) or "idle"))


def view(state: HeatpumpState, found: Sequence[Finding]) -> View:
    return {"hp": state if state.controller is not None else None}


TILE = Tile("Heat pump", "/heatpump", all_clear)
