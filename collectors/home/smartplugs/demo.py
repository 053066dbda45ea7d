"""The demo's three smart plugs: the rack (a Shelly Plus Plug S), the network cupboard (a Tasmota
plug) and the desk (a Shelly whose draw rises in the evening), their payloads as the plugs publish
them. The demo has no broker: `ScenePlugs` hands the collector what each plug would have said at
story time, and the collector reads it as it reads MQTT messages (the same parsing and counting)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from collectors.home.smartplugs.state import PlugView, SmartplugsState

LOOP = 240.0
# name: (kind, topic, base watts, swing, the counter when the story starts, in Wh)
PLUGS = {"rack": ("shelly", "shellyplugpm-rack", 330.0, 14.0, 843_210.0),  # the r720, the r430, the switch
         "network": ("tasmota", "network-plug", 34.0, 3.0, 301_455.0),
         "desk": ("shelly", "shellyplugpm-desk", 75.0, 45.0, 96_030.0)}


def watts(name: str, t: float) -> float:
    _, _, base, swing, _ = PLUGS[name]
    return base + swing * math.sin(2 * math.pi * t / LOOP)


def counter_wh(name: str, t: float) -> float:
    """The plug's own counter: the integral of `watts` since the story began."""
    _, _, base, swing, start = PLUGS[name]
    joules = base * t + swing * LOOP / (2 * math.pi) * (1 - math.cos(2 * math.pi * t / LOOP))
    return start + joules / 3600


def messages(t: float) -> list[tuple[str, bytes]]:
    out = []
    for name, (kind, topic, *_rest) in PLUGS.items():
        w, wh = round(watts(name, t), 1), round(counter_wh(name, t), 3)
        if kind == "shelly":
            out.append((f"{topic}/status/switch:0", json.dumps(
                {"id": 0, "source": "timer", "output": True, "apower": w, "voltage": 231.0,
                 "aenergy": {"total": wh}}).encode()))
        else:
            out.append((f"tele/{topic}/SENSOR", json.dumps(
                {"Time": "2026-11-28T18:00:00", "ENERGY": {"Total": round(wh / 1000, 5), "Power": round(w),
                                                           "Voltage": 231}}).encode()))
    return out


def seeded() -> SmartplugsState:
    """Where the plugs' energy stands when the demo starts: forty days at their usual draw, so that
    the history the demo seeds climbs to it at the live pace and /energy opens on a month's bill."""
    return SmartplugsState(plugs=[PlugView(name=name, kind=kind, energy_joules=base * 40 * 86400)
                                  for name, (kind, _t, base, _s, _c) in PLUGS.items()])


def demo_section(interval: float) -> dict[str, object]:
    return {"interval": interval,
            "plugs": [{"name": name, "kind": kind, "topic": topic} for name, (kind, topic, *_r) in PLUGS.items()]}


class ScenePlugs:
    """What the plugs say at the story's time (the demo's demo-state.json): the collector's `feed`."""

    def __init__(self, root: Path) -> None:
        self.state = root / "demo-state.json"

    def __call__(self) -> list[tuple[str, bytes]]:
        try:
            state = json.loads(self.state.read_text())
            # not the loop's t: a counter that went back to its start each loop read as a plug
            # rebooting, and each "reboot" booked its whole counter again (a month an hour)
            t = float(state.get("elapsed", state.get("t", 0.0)))
        except (OSError, ValueError):
            return []  # the story has not written its first state yet
        return messages(t)
