"""Every disk of every host in one table (/disks/all): a row per disk, sortable, filterable, as CSV.

Rows come from each host's SMART state (this host's and every agent's, already in memory): no
query per request, so 500 disks over 20 hosts is a loop over records."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from collectors.disks.smart.smartctl import attribute_label, counted, counter_keys
from collectors.disks.smart.state import Disk, SmartState
from collectors.findings import natural

LEVELS = {"ok": 0, "unknown": 1, "warning": 2, "failing": 3}


@dataclass(frozen=True, slots=True)
class DiskRow:
    host: str
    key: str
    bay: str | None
    model: str | None
    serial: str | None
    device: str
    capacity_bytes: int | None
    power_on_hours: int | None
    temperature: float | None
    health: str  # ok, warning, failing, unknown
    worst: str  # the first reason, or the attribute nearest its threshold
    wear_used: float | None
    testing: str | None  # "short 40 %" while a self-test runs
    href: str

    @property
    def years(self) -> float | None:
        return round(self.power_on_hours / 8766, 1) if self.power_on_hours is not None else None

    @property
    def attention(self) -> bool:
        return self.health in ("warning", "failing")


def worst_of(d: Disk) -> str:
    """What a person looks at first: rackpulse's first reason; else the counter that stands highest;
    else the ATA attribute nearest its threshold; else NVMe wear."""
    if d.reasons:
        return d.reasons[0]
    counters = [(v, k) for k in counter_keys({k: v for k, v in d.attributes.items() if v is not None})
                if (v := d.attributes[k])]
    if counters:
        value, key = max(counters)
        return f"{counted(key, value)} ({attribute_label(key)})"
    margins = [(a.value - a.thresh, a) for a in d.table.ata
               if a.thresh and a.value is not None and a.id is not None]
    if margins:
        _, a = min(margins, key=lambda m: m[0])
        return f"{a.id} {a.name.replace('_', ' ')}: {a.value} (fails at {a.thresh})"
    if d.wear_used is not None:
        return f"{d.wear_used:g} % worn"
    return "–"


def rows_of(host: str, state: SmartState | None, base: str) -> list[DiskRow]:
    out = []
    for d in state.disks if state else []:
        testing = None
        if d.selftests.running:
            testing = d.selftests.running + (f" {d.selftests.percent_done} %" if d.selftests.percent_done is not None
                                             else "")
        out.append(DiskRow(host, d.key, d.bay, d.model, d.serial, d.device, d.capacity_bytes, d.power_on_hours,
                           d.temperature, d.health_name if d.health is not None else "unknown", worst_of(d),
                           d.wear_used, testing, f"{base}/disks/{quote(d.key, safe='')}"))
    return out


SORTS = {
    "host": lambda r: (natural(r.host), natural(r.bay)),
    "bay": lambda r: (r.bay is None, natural(r.bay), natural(r.host)),
    "model": lambda r: (r.model or "", natural(r.host)),
    "serial": lambda r: r.serial or r.key,
    "age": lambda r: -1 if r.power_on_hours is None else r.power_on_hours,
    "temperature": lambda r: -1000.0 if r.temperature is None else r.temperature,
    "health": lambda r: (LEVELS.get(r.health, 1), natural(r.host), natural(r.bay)),
    "wear": lambda r: -1.0 if r.wear_used is None else r.wear_used,
}


def table(rows: Iterable[DiskRow], sort: str = "health", desc: bool | None = None,
          attention: bool = False, query: str = "") -> list[DiskRow]:
    """Filtered ("needs attention", a word in host, bay, model or serial) and sorted; health sorts
    the worst first unless asked otherwise."""
    q = query.strip().lower()
    picked = [r for r in rows if (not attention or r.attention)
              and (not q or q in f"{r.host} {r.bay or ''} {r.model or ''} {r.serial or r.key} {r.device}".lower())]
    if sort not in SORTS or (sort == "health" and desc is not False):
        # The worst first, and within a level by host and bay as on the bay map.
        return sorted(picked, key=lambda r: (-LEVELS.get(r.health, 1), natural(r.host), r.bay is None,
                                             natural(r.bay)))
    return sorted(picked, key=SORTS[sort], reverse=bool(desc))


COLUMNS = ("host", "bay", "device", "model", "serial", "capacity_bytes", "power_on_hours", "years", "temperature",
           "health", "worst", "wear_used", "testing")


def as_csv(rows: Sequence[DiskRow]) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow(["" if (v := getattr(r, c)) is None else _safe(v) for c in COLUMNS])
    return out.getvalue()


def _safe(v: object) -> object:
    """A cell a spreadsheet would run as a formula (a model or bay label starting with =, +, -, @)
    is quoted with an apostrophe (OWASP's CSV injection advice)."""
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return v
