"""What is wrong with the heat pump, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from collectors.findings import BAD, WARN, Finding, Judging, RuleSpec, Tile
from collectors.home.heatpump.isg_map import fault_words
from collectors.home.heatpump.ledger import HeatpumpDay, periods, total
from collectors.home.heatpump.state import HeatpumpState
from collectors.plugin import View

RULES = (
    RuleSpec("heatpump_fault", "critical", 0, 12, title="Heat pump fault"),
    RuleSpec("heatpump_unreachable", "warning", 600, title="Heat pump gateway unreachable"),
    RuleSpec("heatpump_backup_heater", "warning", title="Heat pump on its backup heater"),
    RuleSpec("heatpump_short_cycling", "warning", title="Heat pump short-cycling"),
)


def findings(state: HeatpumpState, judging: Judging) -> list[Finding]:
    status = judging.status
    if status is not None and status.up is False:
        # A warning, as its rule is: what the heat pump does is unknown, not known to be wrong.
        return [Finding(WARN, f"heat pump unreachable: {status.last_error}", "heatpump_unreachable", "heatpump")]
    found = []
    if state.fault:
        found.append(Finding(BAD, f"heat pump fault: {fault_words(state.active_error)}", "heatpump_fault", "heatpump",
                             {"error": state.active_error}))
    most = state.max_starts_per_hour or 3
    if len(state.starts) > most:
        found.append(Finding(WARN, f"heat pump short cycling: the compressor started {len(state.starts)} times within "
                                   f"the last hour (more than {most}); check the flow rate, the "
                                   "switching hysteresis and the buffer", "heatpump_short_cycling", "heatpump",
                             {"starts": len(state.starts)}))
    for day in last_two_days(state.days):
        found.extend(backup_heater(state, day))
    return found


def last_two_days(days: list[HeatpumpDay]) -> list[HeatpumpDay]:
    """The day book's newest day (today) and the one before it, if it is yesterday."""
    if not days:
        return []
    newest = days[-1]
    before = dt.date.fromisoformat(newest.date) - dt.timedelta(days=1)
    return [d for d in days[-2:-1] if d.date == before.isoformat()] + [newest]


def limits(state: HeatpumpState) -> tuple[float, float, float]:
    """(backup_share, backup_below_celsius, backup_min_kwh) as configured, the defaults where unknown."""
    fields = HeatpumpState.model_fields
    return tuple(v if v is not None else fields[k].default  # type: ignore[return-value]
                 for k, v in (("backup_share", state.backup_share), ("backup_below_celsius", state.backup_below_celsius),
                              ("backup_min_kwh", state.backup_min_kwh)))


def backup_heater(state: HeatpumpState, day: HeatpumpDay) -> list[Finding]:
    """The booster made too much of a mild day's heat: a setting (the bivalence point, a
    hot-water or anti-legionella program on the booster), not the cold."""
    t = total(day.date, [day])
    share, mean = t.backup_share, day.outside_mean
    limit, below, least = limits(state)
    if share is None or mean is None or t.heat < least or share <= limit or mean <= below:
        return []
    return [Finding(WARN, f"heat pump booster made {share:.0%} of the heat on {day.date} ({t.backup:g} of "
                          f"{t.heat:g} kWh) at a mean {mean:g} °C outside, warmer than {below:g} °C: "
                          "check the bivalence point and the hot-water program", "heatpump_backup_heater", day.date,
                    {"date": day.date, "share": share})]


def _deg(v: float | None) -> str:
    return "?" if v is None else f"{v:g}"


def all_clear(state: HeatpumpState, judging: Judging) -> str | None:
    if state.controller is None:
        return None
    t = state.temperatures
    running = [f for f in ("heating", "hot_water", "defrost") if state.flags.get(f)]
    cop = ""
    if state.days:
        yesterday = total("yesterday", last_two_days(state.days)[:-1]).cop
        cop = f"; COP yesterday {yesterday:g}" if yesterday is not None else ""
    return (f"outside {_deg(t.get('outside'))} °C, flow {_deg(t.get('flow'))} °C, hot water "
            f"{_deg(t.get('hot_water_actual'))} °C; " + (", ".join(running) or "idle") + cop)


def view(state: HeatpumpState, found: Sequence[Finding]) -> View:
    if state.controller is None:
        return {"hp": None}
    # The tables, the seasons and the chart follow from the state alone, which changes once a poll
    # (every 30 s) while the page may be asked for every few seconds: worked out once per state.
    if _last and _last[0] is state:
        return _last[1]
    v = _efficiency(state)
    _last[:] = [state, v]
    return v


_last: list = []  # [the state last shown, its view]


def _efficiency(state: HeatpumpState) -> View:
    from collectors.home.heatpump.ledger import months, seasons
    from collectors.home.heatpump.scatter import cop_scatter

    today = state.days[-1].date if state.days else None
    recent = [(d, total(d.date, [d])) for d in state.days[-14:]]
    booster_days = {d.date for d, _ in recent if backup_heater(state, d)}
    book = [*state.months, *state.days]
    return {"hp": state, "limits": limits(state), "booster_days": booster_days,
            "fault": fault_words(state.active_error) if state.fault else None,
            "periods": periods(book, today, state.season_start_month or 7) if today else {},
            "recent": recent[::-1], "months": months(book)[-12:][::-1],
            "seasons": seasons(book, state.season_start_month or 7)[::-1],
            "scatter": cop_scatter(state.days[-120:], limits(state)[0]), "starts_last_hour": len(state.starts)}


TILE = Tile("Heat pump", "/heatpump", all_clear)
