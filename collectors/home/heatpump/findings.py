"""What is wrong with the heat pump, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from typing import Any

from collectors.findings import BAD, Finding, Judging, RuleSpec, Tile

RULES = (RuleSpec("heatpump_fault", "critical", 0, 12), RuleSpec("heatpump_unreachable", "warning", 600))


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    status = judging.status
    if status is not None and status.up is False:
        return [Finding(BAD, f"heat pump unreachable: {status.last_error}", "heatpump_unreachable", "heatpump")]
    if state and state["fault"]:
        return [Finding(BAD, f"heat pump fault: active error {state['active_error']}", "heatpump_fault", "heatpump",
                        {"error": state["active_error"]})]
    return []


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    if not state:
        return None
    t = state["temperatures"]
    running = [f for f in ("heating", "hot_water", "defrost") if state["flags"].get(f)]
    return (f"outside {t.get('outside', '?')} °C, flow {t.get('flow', '?')} °C, hot water "
            f"{t.get('hot_water_actual', '?')} °C; " + (", ".join(running) or "idle"))


TILE = Tile("Heat pump", "/heatpump", all_clear)
