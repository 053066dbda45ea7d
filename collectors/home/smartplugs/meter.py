"""One plug's energy, counted so that nothing is lost or counted twice: from the plug's own
counter when it has one (a plug that reboots starts its counter again at 0: what it counts from
there is new energy, not a negative step), from its watts over time when it has none.

Never more than the plug can pass: a step of its counter above `max_watts` over the time since
the last one is a bad read, skipped and said (a counter flapping 1,000,000 Wh / 0 booked
10,000 kWh in 20 s); a counter that really moved (a plug replaced) reads the same value SETTLE
times in a row and becomes the new base, the jump booked nowhere. Watts below zero, or above
`max_watts`, are a bad read too (−1,000,000 W for 10 s booked −6.26 kWh)."""

from __future__ import annotations

from dataclasses import dataclass

from collectors.home.smartplugs.payloads import Reading
from collectors.home.smartplugs.state import PlugView

SLACK_J = 3600.0  # a counter's own rounding: one whole Wh (Shelly's aenergy, Tasmota's Total)
SETTLE = 3


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
    max_watts: float = 3680.0
    started: float | None = None  # when rackpulse began listening: "silent" only after `quiet` since
    counted: float | None = None  # when the counter was last taken
    suspect: tuple[float, int] | None = None  # an impossible counter value, and how often in a row

    def update(self, reading: Reading, at: float) -> None:
        watts, self.error = reading.watts, None
        if watts is not None and not 0 <= watts <= self.max_watts:
            self.error = f"{watts:g} W is a bad read (a plug passes 0 to {self.max_watts:g} W): skipped"
            watts = None
        if self.integrated:
            self._integrate(watts, at)
        elif reading.counter_joules is not None:
            self._count(reading.counter_joules, at)
        if watts is not None:
            self.watts = watts
        self.heard = at

    def _count(self, counter: float, at: float) -> None:
        if self.counter is None:  # the first message: where the plug's counter stands, no energy yet
            self.energy = self.energy or 0.0
            self.counter, self.counted = counter, at
            return
        # a fall is a reboot (or a reset): it counted `counter` since
        step = counter - self.counter if counter >= self.counter else counter
        most = self.max_watts * max(at - (self.counted if self.counted is not None else at), 0.0) + SLACK_J
        if step > most:
            times = self.suspect[1] + 1 if self.suspect and abs(self.suspect[0] - counter) <= SLACK_J else 1
            if times < SETTLE:
                self.suspect = (counter, times)
                self.error = (f"counter {self.counter / 3600:g} Wh -> {counter / 3600:g} Wh: more than "
                              f"{self.max_watts:g} W could pass since the last reading, a bad read, skipped")
                return
            self.error = f"counter moved to {counter / 3600:g} Wh and stayed: taken as its new base, the jump not booked"
        else:
            self.energy = (self.energy or 0.0) + step
        self.counter, self.counted, self.suspect = counter, at, None

    def _integrate(self, watts: float | None, at: float) -> None:
        if watts is None:
            return
        if self.heard is not None and self.watts is not None and 0 < at - self.heard <= self.quiet:
            # the trapezoid between two readings; across a silence nothing is guessed
            self.energy = (self.energy or 0.0) + (self.watts + watts) / 2 * (at - self.heard)
        else:
            self.energy = self.energy or 0.0

    def view(self, now: float) -> PlugView:
        since = self.heard if self.heard is not None else self.started
        silent = since is None or now - since > self.quiet  # not "no data yet" 5 s after the start
        return PlugView(name=self.name, kind=self.kind, watts=None if silent else self.watts,
                        energy_joules=self.energy, counter_joules=self.counter,
                        method="integrated" if self.integrated else "counter", last_seen=self.heard,
                        silent=silent, error=self.error)

    def restore(self, v: PlugView) -> None:
        self.energy, self.counter, self.heard = v.energy_joules, v.counter_joules, v.last_seen
        self.counted = v.last_seen
        self.watts = v.watts
