"""The kernel's powercap sysfs for RAPL (Running Average Power Limit), read as typed zones: pure
functions over a tree, so the same code reads /sys or a fixture.

The layout (Documentation/power/powercap/powercap.rst): /sys/class/powercap holds one entry per
zone, ``intel-rapl:<package>`` for a package (its ``name`` "package-0", or "psys", the platform)
and ``intel-rapl:<package>:<n>`` for its subzones ("core", "uncore", "dram"). Each has
``energy_uj``, a counter in microjoules that wraps to 0 after ``max_energy_range_uj``. AMD's
Zen CPUs are served by the same driver under the same names. ``intel-rapl-mmio:*`` zones are the
same package counters read another way (MMIO): reading both would count the CPU twice, so they
are left out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PREFIX = "intel-rapl:"


class PowercapError(Exception):
    """A zone that exists but cannot be read; the message names the file."""


@dataclass(frozen=True)
class Zone:
    id: str  # "intel-rapl:0:1"
    name: str  # "package-0/uncore": a subzone under its package's name, unique on the host
    energy_uj: int
    max_uj: int  # the counter's range: it wraps to 0 after this
    top: bool  # a package or the platform, not a part of one

    @property
    def platform(self) -> bool:
        return self.name == "psys"


def _read_int(path: Path) -> int:
    try:
        text = path.read_text().strip()
    except PermissionError:
        raise PowercapError(f"{path}: permission denied") from None
    except OSError as exc:
        raise PowercapError(f"{path}: {exc.strerror}") from None
    try:
        return int(text)
    except ValueError:
        raise PowercapError(f"{path}: not a counter: {text[:40]!r}") from None


def read_zones(root: Path) -> list[Zone]:
    """Every RAPL zone under ``root`` (a /sys/class/powercap), packages before their parts."""
    if not root.is_dir():
        return []
    # by number where a part is one ("intel-rapl:10" after ":2"); a part that is not (no kernel
    # names one so, but a tree may hold anything) after the numbers, not a TypeError
    entries = sorted((p for p in root.iterdir() if p.name.startswith(PREFIX)),
                     key=lambda p: [(0, int(x), "") if x.isdigit() else (1, 0, x)
                                    for x in p.name[len(PREFIX):].split(":")])
    names: dict[str, str] = {}
    out = []
    for path in entries:
        parts = path.name[len(PREFIX):].split(":")
        try:
            own = (path / "name").read_text().strip()
        except OSError:
            continue  # a zone without a name is not one the driver made whole
        top = len(parts) == 1
        name = own if top else f"{names.get(PREFIX + parts[0], PREFIX + parts[0])}/{own}"
        names[path.name] = name
        out.append(Zone(path.name, name, _read_int(path / "energy_uj"), _read_int(path / "max_energy_range_uj"), top))
    return out


def rise_uj(before: int, now: int, max_uj: int) -> int:
    """How far the counter moved: across one wrap when it reads lower than before."""
    return now - before if now >= before else now + (max_uj - before)
