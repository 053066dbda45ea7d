"""Pure parser for ``mdadm --detail /dev/mdX``.

Format source: mdadm's Detail.c (the ``key : value`` header, then the device table
``Number Major Minor RaidDevice State`` whose state words come from ``map_dev`` and
the rdev flags: active, sync, spare, rebuilding, faulty, removed, writemostly,
failfast, journal, replacement, blocked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.base import ParseError

_KV_RE = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z /]*?)\s*:\s?(?P<value>.*)$")
#    0       8        1        0      active sync   /dev/sda1
#    -       0        0        1      removed
#    -     254        0        -        /dev/vda        (container member)
#    1       8       17        1      active sync set-B   /dev/sdb1   (raid10 near copies)
_ROW_RE = re.compile(
    r"^\s*(?P<number>\d+|-)\s+(?P<major>\d+)\s+(?P<minor>\d+)\s+(?P<raid_device>\d+|-)"
    r"(?:\s+(?P<state>[A-Za-z][\w -]*?))?(?:\s+(?P<device>/\S+))?\s*$"
)


@dataclass(frozen=True, slots=True)
class MdadmDevice:
    number: int | None
    major: int
    minor: int
    raid_device: int | None  # position in the array; None for spares/faulty/container members
    state: tuple[str, ...]  # ("active", "sync") / ("spare", "rebuilding") / ("faulty",) / ("removed",)
    device: str | None  # "/dev/sda1"; None for a removed slot

    @property
    def role(self) -> str:
        s = set(self.state)
        if "removed" in s:
            return "missing"
        if "faulty" in s:
            return "failed"
        if "rebuilding" in s:
            return "rebuilding"
        if "spare" in s:
            return "spare"
        if "journal" in s:
            return "journal"
        if "active" in s or "sync" in s:
            return "active"
        return "unknown"


@dataclass(frozen=True, slots=True)
class MdadmDetail:
    device: str  # "/dev/md0"
    fields: dict[str, str]
    devices: tuple[MdadmDevice, ...]

    @property
    def uuid(self) -> str | None:
        # 0.90 metadata appends "(local to host NAME)"
        value = self.fields.get("UUID")
        return value.split()[0] if value else None

    @property
    def level(self) -> str | None:
        return self.fields.get("Raid Level")

    @property
    def state(self) -> tuple[str, ...]:
        return tuple(s.strip() for s in self.fields.get("State", "").split(",") if s.strip())

    @property
    def events(self) -> str | None:
        # 1.x metadata: "57"; 0.90 metadata: "0.1182"
        return self.fields.get("Events")

    def count(self, key: str) -> int | None:
        value = self.fields.get(key)
        return int(value) if value is not None and value.isdigit() else None


def parse_mdadm_detail(text: str) -> MdadmDetail:
    """Parse one array's ``mdadm --detail`` output. Raises ``ParseError`` quoting the bad line."""
    if "\x00" in text:
        raise ParseError("not mdadm --detail output: contains NUL bytes")
    lines = [ln for ln in text.splitlines()]
    first = next((ln for ln in lines if ln.strip()), "")
    if first.startswith("mdadm:"):
        raise ParseError(f"mdadm reported: {first.strip()!r}")
    # /dev/md0:
    if not re.match(r"^/\S+:\s*$", first):
        raise ParseError(f"not mdadm --detail output: first line {first[:120]!r}")
    device = first.strip()[:-1]
    fields: dict[str, str] = {}
    devices: list[MdadmDevice] = []
    in_table = False
    for line in lines[lines.index(first) + 1 :]:
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("Number") and "RaidDevice" in stripped:
            in_table = True
            continue
        if in_table:
            m = _ROW_RE.match(line)
            if not m:
                raise ParseError(f"{device}: malformed device row: {stripped!r}")
            devices.append(
                MdadmDevice(
                    number=None if m["number"] == "-" else int(m["number"]),
                    major=int(m["major"]),
                    minor=int(m["minor"]),
                    raid_device=None if m["raid_device"] == "-" else int(m["raid_device"]),
                    state=tuple((m["state"] or "").split()),
                    device=m["device"],
                )
            )
            continue
        kv = _KV_RE.match(line)
        if kv:
            fields[kv["key"].strip()] = kv["value"].strip()
        # Lines without a colon (the "(Linux-MD 08/16/22 ...)" continuation of a
        # container GUID) carry nothing we use.
    if not fields:
        raise ParseError(f"{device}: no 'key : value' lines (truncated output?)")
    if "Raid Level" not in fields:
        raise ParseError(f"{device}: no 'Raid Level' line (truncated output?)")
    return MdadmDetail(device=device, fields=fields, devices=tuple(devices))
