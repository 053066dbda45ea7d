"""hwmon chips under host_root/sys/class/hwmon, read once per poll into sensors in base units.
Shared by the hwmon collector (rails, fans, every sensor) and host basics (its temperatures).

Format source: the kernel's Documentation/hwmon/sysfs-interface.rst: ``in*_input`` in
millivolts, ``fan*_input`` in RPM, ``temp*_input`` in millidegrees Celsius, ``*_label``,
``*_min``, ``*_max``, ``*_crit``, ``*_alarm``; the chip's name in ``name``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from collectors import finite
from collectors.base import NoData, host_path

_FILE_RE = re.compile(r"^(in|fan|temp|pwm|curr|power)(\d+)(?:_(\w+))?$")
SCALE = {"in": 0.001, "temp": 0.001, "fan": 1.0, "curr": 0.001, "power": 1e-6, "pwm": 1.0}


@dataclass
class Sensor:
    chip: str
    kind: str  # in, fan, temp, pwm, curr, power
    index: int
    label: str | None
    value: float | None  # base units: V, RPM, °C, A, W; pwm 0..255
    attrs: dict[str, float] = field(default_factory=dict)  # min, max, crit, alarm ... in base units

    @property
    def name(self) -> str:
        return f"{self.kind}{self.index}"


def parse_hwmon_dir(chip: str, files: dict[str, str]) -> list[Sensor]:
    """Pure: {file name: content} of one hwmon directory -> sensors in base units."""
    sensors: dict[tuple[str, int], Sensor] = {}
    for fname, raw in sorted(files.items()):
        m = _FILE_RE.match(fname)
        if not m:
            continue
        kind, idx, prop = m[1], int(m[2]), m[3] or "input" if m[1] != "pwm" else (m[3] or "value")
        s = sensors.setdefault((kind, idx), Sensor(chip, kind, idx, None, None))
        text = raw.strip()
        if prop == "label":
            s.label = text
            continue
        try:
            num = finite.parse_float(text)
        except ValueError:
            continue  # "enable"-style text attributes and broken reads are skipped
        scaled = num if prop in ("alarm", "beep", "pulses", "type", "enable", "mode") else num * SCALE[kind]
        if prop in ("input", "value"):
            s.value = scaled
        else:
            s.attrs[prop] = scaled
    return [s for s in sensors.values() if s.value is not None]


def read_hwmon(host_root: Path) -> list[Sensor]:
    base = host_path(host_root, "/sys/class/hwmon")
    try:
        entries = sorted(os.listdir(base), key=lambda n: (len(n), n))
    except FileNotFoundError:
        raise NoData(f"{base} does not exist (no hwmon drivers)") from None
    names: dict[str, int] = {}
    out = []
    for entry in entries:
        d = base / entry
        files: dict[str, str] = {}
        try:
            listing = os.listdir(d)
        except OSError:
            continue
        for f in listing:
            if _FILE_RE.match(f) or f == "name":
                try:
                    # One raw read per file: some drivers answer EAGAIN forever to buffered reads.
                    fd = os.open(d / f, os.O_RDONLY | os.O_NONBLOCK)
                    try:
                        files[f] = os.read(fd, 4096).decode("utf-8", "replace")
                    finally:
                        os.close(fd)
                except OSError:
                    continue
        chip = files.pop("name", entry).strip() or entry
        names[chip] = names.get(chip, 0) + 1
        if names[chip] > 1:  # two chips of one kind: nct6779, nct6779-2
            chip = f"{chip}-{names[chip]}"
        out += parse_hwmon_dir(chip, files)
    if not out and not entries:
        raise NoData("no hwmon chips")
    return out
