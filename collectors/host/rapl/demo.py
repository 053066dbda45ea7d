"""The demo host's RAPL tree: one package (a Xeon E-2278G of 80 W TDP at a NAS's work: about
38 W, more while the array rebuilds), its cores and its DRAM, counters rising with the story's
clock and wrapping at their range as the hardware's do."""

from __future__ import annotations

import json
import math
from pathlib import Path

from collectors.scenes import atomic_write

MAX_UJ = 262143328850
DRAM_MAX_UJ = 65712999613


def joules(t: float, base: float, swing: float) -> float:
    """The energy after t story seconds of `base` W swinging by `swing` W over a 240 s loop."""
    return base * t + swing * 240 / (2 * math.pi) * (1 - math.cos(t / 240 * 2 * math.pi))


_loops: dict[Path, tuple[int, float]] = {}  # root -> (story loops passed, the last t seen)
LOOP = 240.0


def elapsed(root: Path, t: float) -> float:
    """Story seconds since the start: the scene is handed the loop's t, and a counter must not go
    back to where it stood at the loop's start (a reset, which the collector rightly books nothing of)."""
    loops, last = _loops.get(root, (0, t))
    if t < last:
        loops += 1
    _loops[root] = (loops, t)
    return loops * LOOP + t


def write_scene(root: Path, t: float) -> None:
    t = elapsed(root, t)
    zones = {"intel-rapl:0": ("package-0", joules(t, 38.0, 6.0), MAX_UJ),
             "intel-rapl:0:0": ("core", joules(t, 24.0, 5.0), MAX_UJ),
             "intel-rapl:0:1": ("dram", joules(t, 4.0, 0.5), DRAM_MAX_UJ)}
    base = root / "sys/class/powercap"
    atomic_write(base / "intel-rapl" / "enabled", "1\n")
    for zone, (name, energy, limit) in zones.items():
        atomic_write(base / zone / "name", name + "\n")
        atomic_write(base / zone / "max_energy_range_uj", f"{limit}\n")
        atomic_write(base / zone / "energy_uj", f"{round(energy * 1e6) % limit}\n")


class StoryClock:
    """The story's time (demo-state.json), for the collector's rates: the scene's counters rise
    with it, and a demo at --speed 2 (or a test's jump of 80 story seconds) draws what it says."""

    def __init__(self, root: Path) -> None:
        self.state = root / "demo-state.json"

    def __call__(self) -> float:
        try:
            state = json.loads(self.state.read_text())
            return float(state.get("elapsed", state.get("t", 0.0)))
        except (OSError, ValueError):
            return 0.0
