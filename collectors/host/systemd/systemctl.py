"""Pure parsing of systemctl's answers: `systemctl list-units --all --output=json` (systemd 246+)
and `systemctl show --timestamp=unix --property=... UNIT...` (systemd 248+: blocks of
Key=value lines, one per unit, separated by a blank line; timestamps as "@<seconds>"; an unset
one empty). Property names from org.freedesktop.systemd1(5)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors import finite
from collectors.base import ParseError

PROPERTIES = ("Id", "Description", "LoadState", "ActiveState", "SubState", "Result", "NRestarts", "ExecMainStatus",
              "ExecMainExitTimestamp", "ActiveEnterTimestamp", "InactiveEnterTimestamp", "Unit",
              "LastTriggerUSec", "NextElapseUSecRealtime")


@dataclass(frozen=True, slots=True)
class ListedUnit:
    unit: str
    load: str  # loaded, not-found, masked
    active: str  # active, inactive, failed, activating, deactivating, reloading
    sub: str  # running, exited, dead, failed, waiting ...
    description: str


@dataclass(frozen=True, slots=True)
class UnitProps:
    id: str
    description: str
    load: str
    active: str
    sub: str
    result: str | None  # success, exit-code, signal, timeout, core-dump, watchdog ...
    restarts: int | None  # NRestarts (services)
    exit_status: int | None
    exited_at: float | None  # ExecMainExitTimestamp
    active_since: float | None  # ActiveEnterTimestamp
    inactive_since: float | None
    triggers: str | None  # a timer's Unit=: the service it starts
    last_trigger: float | None  # a timer's LastTriggerUSec
    next_elapse: float | None


def parse_list_units(data: str | bytes) -> list[ListedUnit]:
    try:
        doc = finite.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ParseError(f"systemctl list-units --output=json: not JSON ({exc})") from None
    if not isinstance(doc, list):
        raise ParseError("systemctl list-units --output=json: expected a list")
    return [ListedUnit(str(u["unit"]), str(u.get("load", "")), str(u.get("active", "")), str(u.get("sub", "")),
                       str(u.get("description", "")))
            for u in doc if isinstance(u, dict) and isinstance(u.get("unit"), str)]


def parse_show(text: str) -> list[UnitProps]:
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        props: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition("=")
            if not sep:
                raise ParseError(f"systemctl show: not Key=value: {line[:80]!r}")
            props[key.strip()] = value.strip()
        if not props.get("Id"):
            continue
        out.append(UnitProps(
            id=props["Id"], description=props.get("Description", ""), load=props.get("LoadState", ""),
            active=props.get("ActiveState", ""), sub=props.get("SubState", ""), result=props.get("Result") or None,
            restarts=_int(props.get("NRestarts")), exit_status=_int(props.get("ExecMainStatus")),
            exited_at=timestamp(props.get("ExecMainExitTimestamp")),
            active_since=timestamp(props.get("ActiveEnterTimestamp")),
            inactive_since=timestamp(props.get("InactiveEnterTimestamp")), triggers=props.get("Unit") or None,
            last_trigger=timestamp(props.get("LastTriggerUSec")), next_elapse=timestamp(props.get("NextElapseUSecRealtime"))))
    return out


def timestamp(value: str | None) -> float | None:
    """ "@1732500000" (--timestamp=unix), "" or "n/a" (never) -> epoch seconds or None."""
    if not value or not value.startswith("@"):
        return None
    try:
        t = float(value[1:])
    except ValueError:
        return None
    return t if t > 0 else None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "", "[not set]") else None
    except ValueError:
        return None
