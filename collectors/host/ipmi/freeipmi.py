"""FreeIPMI's outputs, parsed: `ipmi-sensors`, `ipmi-sel` and `ipmi-dcmi`. Pure functions from
text to typed records; an error quotes the line it could not read.

Why FreeIPMI rather than ipmitool: with `--comma-separated-output` both tools print CSV, but
FreeIPMI's has a header naming its columns, the sensor's type as a word ("Power Supply"), and a
State column (Nominal / Warning / Critical) that FreeIPMI judges from the IPMI specification's
sensor and event tables (its interpretation files, which an admin can edit:
freeipmi_interpret_sensor.conf(5), freeipmi_interpret_sel.conf(5)). ipmitool prints a discrete
sensor as raw state bits ("0x0300") and its SEL without a severity, so every reader would have to
carry the specification's offset tables itself.

Formats (FreeIPMI 1.6, ipmi-sensors(8), ipmi-sel(8), ipmi-dcmi(8)):

    ID,Name,Type,State,Reading,Units,Lower NR,Lower C,Lower NC,Upper NC,Upper C,Upper NR,Event
    4,FAN3,Fan,Critical,0.00,RPM,N/A,600.00,900.00,N/A,N/A,N/A,'At or Below (<=) Lower Critical Threshold'
    6,PSU2 Status,Power Supply,Critical,N/A,N/A,N/A,...,N/A,'Presence detected' 'Power Supply Failure detected'

    ID,Date,Time,Name,Type,State,Event Direction,Event
    7,Nov-28-2026,09:12:44,DIMM_A1,Memory,Critical,Assertion Event,Uncorrectable memory error

    Number of log entries                  : 10
    Free space remaining                   : 1440 bytes

    Current Power                        : 332 Watts
    Power Measurement                    : Active
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from collectors import finite
from collectors.base import ParseError

SEL_RECORD_BYTES = 16  # every SEL record is 16 bytes (IPMI 2.0, section 31.6)
STATES = ("Nominal", "Warning", "Critical")
_SENSOR_COLUMNS = ("Name", "Type", "State", "Reading", "Units", "Event")
_THRESHOLDS = ("Lower NR", "Lower C", "Lower NC", "Upper NC", "Upper C", "Upper NR")
_SEL_COLUMNS = ("ID", "Date", "Time", "Name", "Type", "State", "Event")


@dataclass(frozen=True)
class SensorReading:
    name: str
    type: str  # "Temperature", "Fan", "Power Supply" ...
    state: str | None  # Nominal | Warning | Critical; None when FreeIPMI cannot judge it (N/A)
    reading: float | None  # None for a discrete sensor, or one that cannot be read now
    unit: str | None  # "C", "RPM", "V", "A", "W" ... as FreeIPMI abbreviates them
    thresholds: dict[str, float]  # "Lower C" -> 600.0 ...: only those the BMC declares
    events: tuple[str, ...]  # "Power Supply Failure detected", "At or Below (<=) Lower Critical Threshold"


@dataclass(frozen=True)
class SelEntry:
    id: int
    time: float | None  # epoch seconds; None for FreeIPMI's PreInit/PostInit (a BMC without its clock yet)
    name: str  # the sensor: "PSU2 Status", "Sensor #32"
    type: str  # "Memory", "Power Supply", "Physical Security" ...
    state: str | None  # Nominal | Warning | Critical
    asserted: bool  # an Assertion Event (False: a Deassertion: the condition went away)
    event: str  # "Uncorrectable memory error ; Event Data3 = 02h"


@dataclass(frozen=True)
class SelInfo:
    entries: int
    free_bytes: int | None

    @property
    def used_ratio(self) -> float | None:
        """How full the SEL is, 0..1: a full SEL drops new events."""
        if self.free_bytes is None:
            return None
        total = self.entries * SEL_RECORD_BYTES + self.free_bytes
        return self.entries * SEL_RECORD_BYTES / total if total else None


def _na(value: str) -> str | None:
    value = value.strip()
    return None if value in ("", "N/A") else value


def _number(value: str, line: str) -> float | None:
    text = _na(value)
    if text is None:
        return None
    try:
        return finite.parse_float(text)
    except ValueError:
        raise ParseError(f"not a number {text!r} in line: {line[:200]!r}") from None


def _csv(text: str, required: tuple[str, ...], what: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(header, [(line, fields)]): the header must name every `required` column. A row with more
    fields than the header is one whose last column (the event) held commas: they are joined back."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return [], []
    try:
        header = next(csv.reader([lines[0]]))
    except csv.Error as exc:  # a field past csv's limit (131,072 characters): not FreeIPMI's output
        raise ParseError(f"{what}: not comma-separated output ({exc}): {lines[0][:200]!r}") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise ParseError(f"{what}: the header lacks {', '.join(missing)}: {lines[0][:200]!r}")
    rows = []
    for line in lines[1:]:
        fields = line.split(",")
        if len(fields) > len(header) and header[-1] == "Event":
            fields = [*fields[:len(header) - 1], ",".join(fields[len(header) - 1:])]
        if len(fields) != len(header):
            raise ParseError(f"{what}: {len(fields)} fields where the header has {len(header)}: {line[:200]!r}")
        rows.append((line, fields))
    return header, rows


def _state(value: str, line: str) -> str | None:
    text = _na(value)
    if text is not None and text not in STATES:
        raise ParseError(f"unknown state {text!r} in line: {line[:200]!r}")
    return text


def parse_sensors(text: str, bad: list[str] | None = None) -> list[SensorReading]:
    """`ipmi-sensors --comma-separated-output --output-sensor-state --output-sensor-thresholds`.
    With `bad`, a number that is not one ("nan") is that value unknown, its line quoted in `bad`:
    one such line hid every sensor of the BMC. Without it, it is a ParseError."""
    header, rows = _csv(text, _SENSOR_COLUMNS, "ipmi-sensors")
    out = []
    for line, fields in rows:
        row = dict(zip(header, fields, strict=True))

        def number(value: str, line: str = line) -> float | None:
            try:
                return _number(value, line)
            except ParseError as exc:
                if bad is None:
                    raise
                bad.append(str(exc))
                return None

        thresholds = {}
        for t in _THRESHOLDS:
            if t in row and (v := number(row[t])) is not None:
                thresholds[t] = v
        out.append(SensorReading(name=row["Name"].strip(), type=row["Type"].strip(), state=_state(row["State"], line),
                                 reading=number(row["Reading"]), unit=_na(row["Units"]),
                                 thresholds=thresholds, events=_events(row["Event"])))
    return out


def judged_state(s: SensorReading) -> str | None:
    """The sensor's state, its reading judged against its own thresholds where FreeIPMI's word says
    less: past an upper non-critical threshold (80 °C over 75) FreeIPMI prints "Nominal" with the
    event "At or Above (>=) Upper Non-Critical Threshold". At or past a critical (or
    non-recoverable) threshold: Critical; at or past a non-critical one: Warning."""
    if s.state == "Critical" or s.reading is None:
        return s.state
    t, r = s.thresholds, s.reading

    def past(upper: str, lower: str) -> bool:
        return (upper in t and r >= t[upper]) or (lower in t and r <= t[lower])

    if past("Upper C", "Lower C") or past("Upper NR", "Lower NR"):
        return "Critical"
    if past("Upper NC", "Lower NC"):
        return "Warning"
    return s.state  # Warning stays Warning; Nominal, Nominal


def _events(value: str) -> tuple[str, ...]:
    """"'Presence detected' 'Power Supply Failure detected'" -> both; "'OK'" -> ()."""
    quoted = re.findall(r"'([^']*)'", value)
    words = quoted if quoted else ([value.strip()] if _na(value) else [])
    return tuple(w for w in words if w and w != "OK")


def parse_sel(text: str) -> list[SelEntry]:
    """`ipmi-sel --comma-separated-output --output-event-state -v` (the -v adds Event Direction)."""
    header, rows = _csv(text, _SEL_COLUMNS, "ipmi-sel")
    out = []
    for line, fields in rows:
        row = dict(zip(header, fields, strict=True))
        try:
            record = int(row["ID"])
        except ValueError:
            raise ParseError(f"ipmi-sel: record id {row['ID']!r} is not a number: {line[:200]!r}") from None
        direction = row.get("Event Direction", "Assertion Event").strip()
        out.append(SelEntry(id=record, time=_sel_time(row["Date"], row["Time"]), name=row["Name"].strip(),
                            type=row["Type"].strip(), state=_state(row["State"], line),
                            asserted=direction != "Deassertion Event", event=row["Event"].strip()))
    return out


def _sel_time(date: str, clock: str) -> float | None:
    """FreeIPMI writes "Nov-28-2026" and "09:12:44" in the BMC's time (taken as UTC, which is what
    BMCs keep); "PreInit"/"PostInit" for an event logged before the BMC had its clock."""
    for fmt in ("%b-%d-%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S"):
        try:
            return datetime.strptime(f"{date.strip()} {clock.strip()}", fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    return None


def parse_sel_info(text: str) -> SelInfo:
    """`ipmi-sel --info`: the number of entries and the free space, in bytes."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            values[key.strip()] = value.strip()
    if "Number of log entries" not in values:
        raise ParseError(f"ipmi-sel --info: no 'Number of log entries' line in: {text[:200]!r}")
    try:
        entries = int(values["Number of log entries"])
        free_text = values.get("Free space remaining", "").split()
        free = int(free_text[0]) if free_text else None
    except ValueError:
        raise ParseError(f"ipmi-sel --info: not a number in: {text[:200]!r}") from None
    return SelInfo(entries=entries, free_bytes=free)


def parse_dcmi_power(text: str) -> float | None:
    """`ipmi-dcmi --get-system-power-statistics`: the current power in watts; None while the BMC
    says "Power Measurement : Not Available" (DCMI present, measurement off)."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            values[key.strip().lower()] = value.strip()
    if values.get("power measurement", "active").lower() != "active":
        return None
    current = values.get("current power")
    if current is None:
        raise ParseError(f"ipmi-dcmi: no 'Current Power' line in: {text[:200]!r}")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*watts?", current, re.I)
    if not m:
        raise ParseError(f"ipmi-dcmi: cannot read the power {current!r}")
    return float(m[1])
