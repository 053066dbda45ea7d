"""The heat pump's day book: what each day produced and used, kept in the plug-in's state so it
survives a restart, and the COP of a day, a month and a heating season read from it.

Days are booked from the running counters (total + today, kept monotonic: isg_map), not from
the ISG's day registers: those reset at midnight, and a poll missed around midnight or a restart
would lose what they held. Each poll books the rise of every counter since the poll before, so
energy used while rackpulse was down lands on the first day it polls again, none lost.

The booster's (NHZ) totals have no day register and, like every ISG total, do not count today:
they rise when the ISG closes the day, after midnight (when exactly, the manual does not say).
So whenever such a total rises, what it adds is booked on the day before, where it was used.

Pure functions over records (no I/O), so the day book is tested without an ISG.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence

from collectors.state import Record

MAX_GAP = 600.0  # longer between polls: a restart or an outage, not a run of the compressor or a defrost
# Days kept one by one (the day table, the COP chart: a winter's core); older days are folded into
# one record per month, so the state (written every poll, carried in agents' batches) stays small
# (120 days: about 37 KB of JSON) while months and seasons still add up.
KEEP_DAYS = 120
USES = ("heating", "hot_water")
# The counters booked, by kind of energy (the state's energy_counters keys are f"{kind}_{use}").
KINDS = ("heat", "electricity", "backup")
TOTAL_ONLY = ("backup",)  # no day register: the rise comes at midnight


class HeatpumpDay(Record):
    """One day of the heat pump, in kWh; the day is the server's local date. A number that is
    not finite (a bad stored state) is None at the entrance and counts as nothing here. Folded
    into a month (fold), the same record holds the month: `date` YYYY-MM and `days` > 1."""

    date: str  # YYYY-MM-DD, or YYYY-MM for a folded month
    days: int | None = 1  # how many days it holds
    heat_heating: float | None = 0.0  # the compressor's heat
    heat_hot_water: float | None = 0.0
    electricity_heating: float | None = 0.0  # the compressor's electricity
    electricity_hot_water: float | None = 0.0
    backup_heating: float | None = 0.0  # the electric booster's heat (= its electricity)
    backup_hot_water: float | None = 0.0
    outside_sum: float | None = 0.0  # outside temperature readings, for the day's mean
    outside_count: int | None = 0
    starts: int | None = 0  # compressor starts
    max_starts_per_hour: int | None = 0  # the most starts seen within any hour of the day
    defrosts: int | None = 0
    defrost_seconds: float | None = 0.0

    @property
    def outside_mean(self) -> float | None:
        return round(self.outside_sum / self.outside_count, 1) if self.outside_count and self.outside_sum is not None \
            else None


class Totals(Record):
    """Energy of a period (a day, a month, a season) and what follows from it."""

    label: str
    days: int = 0
    heat_heating: float = 0.0
    heat_hot_water: float = 0.0
    electricity_heating: float = 0.0
    electricity_hot_water: float = 0.0
    backup_heating: float = 0.0
    backup_hot_water: float = 0.0
    outside_mean: float | None = None
    defrosts: int = 0
    starts: int = 0
    # Heat of the period's days whose booster is not booked yet (today: the ISG adds the booster's
    # day after midnight), left out of backup_share on both sides (periods sets it).
    unbooked_heat: float = 0.0

    def _cop(self, heat: float, electricity: float) -> float | None:
        # Whole kWh: under one kWh of electricity the ratio says more about rounding than the pump.
        return round(heat / electricity, 2) if electricity >= 1 else None

    @property
    def cop_heating(self) -> float | None:
        """Heat for heating over electricity for heating, the booster's included on both sides:
        the COP the electricity bill sees (the compressor's alone would flatter a booster-heavy day)."""
        return self._cop(self.heat_heating + self.backup_heating, self.electricity_heating + self.backup_heating)

    @property
    def cop_hot_water(self) -> float | None:
        return self._cop(self.heat_hot_water + self.backup_hot_water,
                         self.electricity_hot_water + self.backup_hot_water)

    @property
    def cop(self) -> float | None:
        return self._cop(self.heat, self.electricity)

    @property
    def heat(self) -> float:
        return self.heat_heating + self.heat_hot_water + self.backup

    @property
    def backup(self) -> float:
        return self.backup_heating + self.backup_hot_water

    @property
    def electricity(self) -> float:
        return self.electricity_heating + self.electricity_hot_water + self.backup

    @property
    def backup_share(self) -> float | None:
        """The booster's part of all heat made (0..1), over the days whose booster is booked."""
        heat = self.heat - self.unbooked_heat
        return round(self.backup / heat, 3) if heat > 1e-9 else None


def local_date(ts: float) -> dt.date:
    return dt.datetime.fromtimestamp(ts).date()


def book(days: Sequence[HeatpumpDay], now: float, rises: dict[str, float], outside: float | None = None,
         starts: int = 0, starts_last_hour: int = 0, defrost_started: bool = False,
         defrost_seconds: float = 0.0) -> list[HeatpumpDay]:
    """`days` with one poll booked: `rises` of the counters (f"{kind}_{use}": kWh since the
    last poll), the outside temperature read, compressor starts and defrosts. Returns a
    new list (records are frozen), the newest day last; `fold` keeps it short."""
    today = local_date(now)
    out = list(days)
    late = {k: v for k, v in rises.items() if k.split("_", 1)[0] in TOTAL_ONLY}
    rises = {k: v for k, v in rises.items() if k not in late}
    late = {k: v for k, v in late.items() if v}  # a total that did not rise makes no day of its own
    if late:
        out = _add(out, (today - dt.timedelta(days=1)).isoformat(), late)
    add: dict[str, float] = dict(rises)
    if outside is not None:
        add["outside_sum"], add["outside_count"] = outside, 1
    add["starts"], add["defrosts"], add["defrost_seconds"] = starts, int(defrost_started), defrost_seconds
    out = _add(out, today.isoformat(), add, max_starts=starts_last_hour)
    return out


def _add(days: list[HeatpumpDay], date: str, amounts: dict[str, float], max_starts: int = 0) -> list[HeatpumpDay]:
    i = next((i for i in range(len(days) - 1, -1, -1) if days[i].date == date), None)
    if i is None:
        days.append(HeatpumpDay(date=date))
        days.sort(key=lambda d: d.date)
        i = next(i for i, d in enumerate(days) if d.date == date)
    day = days[i]
    fields = {k: (getattr(day, k) or 0) + v for k, v in amounts.items() if k in HeatpumpDay.model_fields and v}
    if max_starts > (day.max_starts_per_hour or 0):
        fields["max_starts_per_hour"] = max_starts
    if fields:
        days[i] = day.model_copy(update=fields)
    return days


def fold(days: Sequence[HeatpumpDay], months: Sequence[HeatpumpDay],
         keep: int = KEEP_DAYS) -> tuple[list[HeatpumpDay], list[HeatpumpDay]]:
    """(days, months) with all but the newest `keep` days added into their month's record."""
    days, out = list(days), list(months)
    while len(days) > keep:
        day = days.pop(0)
        key = day.date[:7]
        i = next((i for i, m in enumerate(out) if m.date == key), None)
        if i is None:
            out.append(day.model_copy(update={"date": key}))
            out.sort(key=lambda m: m.date)
            continue
        m = out[i]
        update: dict[str, float] = {k: (getattr(m, k) or 0) + (getattr(day, k) or 0) for k in SUMMED}
        update["max_starts_per_hour"] = max(m.max_starts_per_hour or 0, day.max_starts_per_hour or 0)
        if day.outside_sum is None or m.outside_sum is None:
            update.pop("outside_sum"), update.pop("outside_count")
        out[i] = m.model_copy(update=update)
    return days, out


SUMMED = ("days", "heat_heating", "heat_hot_water", "electricity_heating", "electricity_hot_water", "backup_heating",
          "backup_hot_water", "outside_sum", "outside_count", "starts", "defrosts", "defrost_seconds")


def total(label: str, days: Iterable[HeatpumpDay]) -> Totals:
    """The sum of some days."""
    keys = ("heat_heating", "heat_hot_water", "electricity_heating", "electricity_hot_water", "backup_heating",
            "backup_hot_water")
    sums = dict.fromkeys(keys, 0.0)
    n, outside_sum, outside_count, defrosts, starts = 0, 0.0, 0, 0, 0
    for d in days:
        n += d.days or 0
        for k in keys:
            sums[k] += getattr(d, k) or 0.0
        if d.outside_sum is not None and d.outside_count:
            outside_sum, outside_count = outside_sum + d.outside_sum, outside_count + d.outside_count
        defrosts, starts = defrosts + (d.defrosts or 0), starts + (d.starts or 0)
    mean = round(outside_sum / outside_count, 1) if outside_count else None
    return Totals(label=label, days=n, outside_mean=mean, defrosts=defrosts, starts=starts,
                  **{k: round(v, 3) for k, v in sums.items()})


def season_of(date: str, start_month: int = 7) -> str:
    """The heating season a day belongs to, "2025/26" for July 2025 to June 2026 (start_month 7);
    with start_month 1 the season is the calendar year."""
    year, month = int(date[:4]), int(date[5:7])
    first = year if month >= start_month else year - 1
    return str(first) if start_month == 1 else f"{first}/{(first + 1) % 100:02d}"


def grouped(days: Sequence[HeatpumpDay], key: Callable[[HeatpumpDay], str]) -> list[Totals]:
    """Totals per group of days (month, season), oldest first."""
    groups: dict[str, list[HeatpumpDay]] = {}
    for d in days:
        groups.setdefault(key(d), []).append(d)
    return [total(k, v) for k, v in sorted(groups.items())]


def months(days: Sequence[HeatpumpDay]) -> list[Totals]:
    return grouped(days, lambda d: d.date[:7])


def seasons(days: Sequence[HeatpumpDay], start_month: int = 7) -> list[Totals]:
    return grouped(days, lambda d: season_of(d.date, start_month))


def periods(days: Sequence[HeatpumpDay], today: str, start_month: int = 7) -> dict[str, Totals]:
    """Totals of today, yesterday, this month and this season, from the day book.

    Today's booster comes only after midnight (TOTAL_ONLY), so the booster's share of a period
    that holds today is over the days before it: today has none yet ("–", not 0 %), and on the 1st
    of a month neither has the month, where counting today's heat alone made it 0 % in the demo and
    on a real ISG alike."""
    yesterday = (dt.date.fromisoformat(today) - dt.timedelta(days=1)).isoformat()
    season = season_of(today, start_month)
    unbooked = {"unbooked_heat": total("today", (d for d in days if d.date == today)).heat}
    return {"today": total("today", (d for d in days if d.date == today)).model_copy(update=unbooked),
            "yesterday": total("yesterday", (d for d in days if d.date == yesterday)),
            "month": total("month", (d for d in days if d.date[:7] == today[:7])).model_copy(update=unbooked),
            "season": total("season", (d for d in days if season_of(d.date, start_month) == season)
                            ).model_copy(update=unbooked)}
