"""One plug's energy, counted so that nothing is lost or counted twice: from the plug's own
counter when it has one (a plug that reboots starts its counter again at 0: what it counts from
there is new energy, not a negative step), from its watts over time when it has none."""

from __future__ import annotations

from dataclasses import dataclass

from collectors.home.smartplugs.payloads import Reading
from collectors.home.smartplugs.state import PlugView


@dataclass
class Meter:
    name: str
    kind: str
    quiet: float  # seconds without a message before the plug is "no data"
    integrated: bool  # no counter: energy from watts over time
    watts: float | None = None
    counter: float | None = None  # the plug's own counter at its last message, J
    energy: float | None = None  # since first heard, J: only ever grows
    heard: float | None = None
    error: str | None = None

    def update(self, reading: Reading, at: float) -> None:
        if self.integrated:
            self._integrate(reading.watts, at)
        elif reading.counter_joules is not None:
            self._count(reading.counter_joules)
        if reading.watts is not None:
            self.watts = reading.watts
        self.heard, self.error = at, None

    def _count(self, counter: float) -> None:
        if self.counter is None:  # the first message: where the plug's counter stands, no energy yet
            self.energy = self.energy or 0.0
        elif counter >= self.counter:
            self.energy = (self.energy or 0.0) + counter - self.counter
        else:  # the plug rebooted (or its counter was reset): it counted `counter` since
            self.energy = (self.energy or 0.0) + counter
        self.counter = counter

    def _integrate(self, watts: float | None, at: float) -> None:
        if watts is None:
            return
        if self.heard is not None and self.watts is not None and 0 < at - self.heard <= self.quiet:
            # the trapezoid between two readings; across a silence nothing is guessed
            self.energy = (self.energy or 0.0) + (self.watts + watts) / 2 * (at - self.heard)
        else:
            self.energy = self.energy or 0.0

    def view(self, now: float) -> PlugView:
        silent = self.heard is None or now - self.heard > self.quiet
        return PlugView(name=self.name, kind=self.kind, watts=None if silent else self.watts,
                        energy_joules=self.energy, counter_joules=self.counter,
                        method="integrated" if self.integrated else "counter", last_seen=self.heard,
                        silent=silent, error=self.error)

    def restore(self, v: PlugView) -> None:
        self.energy, self.counter, self.heard = v.energy_joules, v.counter_joules, v.last_seen
        self.watts = v.watts
