"""RAPL: what the CPU packages (and their cores, uncore and DRAM) draw, from the kernel's energy
counters. Each zone's energy is booked from its counter's rises, across its wraps; the packages
together are the lab energy source `cpu` (collectors/energy.py), so /energy shows what the
server's CPUs cost even without a metering plug.

Since Linux 5.10 (CVE-2020-8694, "Platypus") energy_uj is readable by root only: rackpulse, not
root, needs the udev rule in this plug-in's README."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from collectors import energy
from collectors.base import Collector, CollectorError, CollectResult, MetricSpec, NoData, Runner, Sample
from collectors.context import HostContext
from collectors.counters import Most
from collectors.host.rapl.config import RaplConfig
from collectors.host.rapl.powercap import PowercapError, Zone, read_zones, rise_uj
from collectors.host.rapl.state import RaplState, ZoneView
from collectors.state import State

UDEV_HINT = ("energy_uj is readable by root only since Linux 5.10 (CVE-2020-8694): give rackpulse's group "
             "read access with the udev rule in collectors/host/rapl/README.md")


class RaplCollector(Collector):
    name: ClassVar[str] = "rapl"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_rapl_power_watts": MetricSpec("A RAPL zone's mean draw since the last read (a package, the "
                                                 "platform, or a part of a package: core, uncore, dram)."),
        "rackpulse_rapl_energy_joules_total": MetricSpec("A RAPL zone's energy since rackpulse first read it: "
                                                         "never falls (across the counter's wraps).", "counter"),
        **energy.SPECS,
    }

    def __init__(self, root: Path, cfg: RaplConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.root, self.cfg, self.clock = root, cfg, clock
        self._last: dict[str, tuple[int, float]] = {}  # zone id -> (energy_uj, when) at the last read
        self._energy: dict[str, float] = {}  # zone id -> joules booked
        self._source: float | None = None

    def counter_limits(self) -> Mapping[str, Most]:
        most = Most(self.cfg.max_watts, 1.0)  # what the CPUs can draw: a reset or a bad read beyond
        return {"rackpulse_rapl_energy_joules_total": most, energy.ENERGY: most}

    def restore(self, state: State) -> None:
        if isinstance(state, RaplState):
            self._energy.update({z.id: z.energy_joules for z in state.zones if z.energy_joules is not None})
            self._source = state.source_joules

    def collect(self) -> CollectResult:
        try:
            zones = read_zones(self.root)
        except PowercapError as exc:
            hint = f" ({UDEV_HINT})" if "permission denied" in str(exc) else ""
            raise CollectorError(f"RAPL: {exc}{hint}") from None
        if not zones:
            raise NoData(f"no RAPL zones under {self.root} (no RAPL on this CPU or kernel, or a virtual machine)")
        now = self.clock()
        result = CollectResult()
        booked = [self._book(z, now, result) for z in zones]
        # The packages make the source; the platform zone (psys) holds them and more: a package
        # sum alongside it would count the CPUs twice, so psys is shown but not added.
        packages = [(v, rise) for (v, rise), z in zip(booked, zones, strict=True) if z.top and not z.platform]
        self._source = (self._source or 0.0) + sum(rise for _, rise in packages)
        watts = (None if not packages or any(v.watts is None for v, _ in packages)
                 else round(sum(v.watts or 0.0 for v, _ in packages), 2))
        result.samples += energy.samples(self.cfg.source, watts, self._source)
        views = [v for v, _ in booked]
        result.state = RaplState(zones=views, source=self.cfg.source, source_watts=watts,
                                 source_joules=round(self._source, 3))
        return result

    def _book(self, z: Zone, now: float, result: CollectResult) -> tuple[ZoneView, float]:
        """This read of one zone: its rise since the last read (joules, booked), the draw over that time."""
        last = self._last.get(z.id)
        total = self._energy.setdefault(z.id, 0.0)
        watts, booked = None, 0.0
        if last is not None and now > last[1]:
            rise = rise_uj(last[0], z.energy_uj, z.max_uj) / 1e6
            seconds = now - last[1]
            if rise <= self.cfg.max_watts * seconds:
                booked = rise
                total = self._energy[z.id] = total + rise
                watts = round(rise / seconds, 2)
            else:
                result.warnings.append(f"RAPL {z.name}: counter moved {rise:.0f} J in {seconds:.0f} s, more than "
                                       f"{self.cfg.max_watts:g} W: a reset or a bad read, not booked")
        self._last[z.id] = (z.energy_uj, now)
        labels = {"zone": z.name}
        if watts is not None:
            result.samples.append(Sample.of("rackpulse_rapl_power_watts", watts, **labels))
        result.samples.append(Sample.of("rackpulse_rapl_energy_joules_total", round(total, 3), **labels))
        return ZoneView(id=z.id, name=z.name, top=z.top, watts=watts, energy_joules=round(total, 3)), booked


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.rapl]."""
    return RaplCollector(host.root / "sys/class/powercap", c)
