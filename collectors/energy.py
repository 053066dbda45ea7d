"""What every source of the lab's power reports the same way, whichever plug-in reads it (a smart
plug, a UPS, a BMC's DCMI reading): its draw now and its energy, under one metric each with a
`source` label, so /energy, Home Assistant and Prometheus sum them without knowing the plug-ins.

A source with a counter of its own (a plug's) reports that; one that reports only watts is
integrated here: the trapezoid between two readings, nothing guessed across a gap longer than
`gap` (the source was away: its energy then is unknown, not the last draw held)."""

from __future__ import annotations

from collections.abc import Mapping

from collectors.base import MetricSpec, Sample

POWER = "rackpulse_power_watts"
ENERGY = "rackpulse_energy_joules_total"
SPECS = {
    POWER: MetricSpec("A source's power draw now (a smart plug's, a UPS's output, a server's as its BMC's DCMI "
                      "reads it), in "
                      "watts; absent while it is silent."),
    ENERGY: MetricSpec("A source's energy since rackpulse first read it, in joules: never falls (kept across the "
                       "source's reboots and rackpulse's restarts).", "counter"),
}


class Integrator:
    """Energy from watts over time, per source; `energy` is seeded from the stored state."""

    def __init__(self, gap: float) -> None:
        self.gap = gap
        self.energy: dict[str, float] = {}
        self._last: dict[str, tuple[float, float]] = {}  # source -> (when, watts)

    def add(self, source: str, watts: float, at: float) -> float:
        total = self.energy.get(source, 0.0)
        if not watts >= 0:  # below zero (or NaN) is a bad read: no energy, and no reading to span from
            self._last.pop(source, None)
            self.energy[source] = total
            return total
        last = self._last.get(source)
        if last is not None and 0 < at - last[0] <= self.gap:
            total += (last[1] + watts) / 2 * (at - last[0])
        self.energy[source] = total
        self._last[source] = (at, watts)
        return total

    def seed(self, energies: Mapping[str, float | None]) -> None:
        self.energy.update({k: v for k, v in energies.items() if v is not None})


def samples(source: str, watts: float | None, energy: float | None) -> list[Sample]:
    out = [Sample.of(POWER, watts, source=source)] if watts is not None else []
    if energy is not None:
        out.append(Sample.of(ENERGY, round(energy, 1), source=source))
    return out
