"""Pure parser for Linux ``/proc/mdstat``.

Format source: drivers/md/md.c (``md_seq_show``, ``status_resync``) and each
personality's ``*_status`` function (raid1.c, raid5.c, raid10.c, raid0.c).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.base import ParseError

SYNC_ACTIONS = ("resync", "recovery", "check", "repair", "reshape")

# md0 : active (auto-read-only) raid1 sdb2[0] sdc2[1](F)
_HEADER_RE = re.compile(r"^(?P<name>\S+)\s+:\s+(?P<state>active|inactive)\b(?P<rest>.*)$")
# sdc2[1](W)(F)   -- flags printed by md_seq_show: W write-mostly, J journal, F faulty, S spare, R replacement
_DEVICE_RE = re.compile(r"^(?P<dev>[^\[\]()\s]+)\[(?P<role>\d+)\](?P<flags>(?:\([WJFSR]\))*)$")
# 5853468288 blocks super 1.2 level 6, 64k chunk, algorithm 2 [8/8] [UUUUUUUU]
_BLOCKS_RE = re.compile(r"^(?P<blocks>\d+) blocks\b(?P<rest>.*)$")
_COUNTS_RE = re.compile(r"\[(?P<total>\d+)/(?P<working>\d+)\]\s+\[(?P<map>[U_]*)\]")
_SUPER_RE = re.compile(r"\bsuper (?P<super>\S+)")
# [=>...................]  recovery =  8.5% (16775552/195310144) finish=17.0min speed=259783K/sec
_SYNC_RE = re.compile(
    r"(?P<action>resync|recovery|check|repair|reshape)\s*=\s*(?P<pct>[\d.]+)%"
    r"(?:\s*\((?P<done>\d+)/(?P<total>\d+)\))?"
    r"(?:\s*finish=(?P<finish>[\d.]+)min)?"
    r"(?:\s*speed=(?P<speed>\d+)K/sec)?"
)
#         resync=DELAYED   (md.c prints "resync=" whatever the pending action is)
_WAIT_RE = re.compile(r"^(?P<action>resync|recovery|check|repair|reshape)=(?P<wait>DELAYED|PENDING)$")


@dataclass(frozen=True, slots=True)
class MdMember:
    device: str  # kernel name: "sdb1"
    role: int  # the number in brackets: descriptor slot, not the RaidDevice position
    faulty: bool = False
    spare: bool = False
    write_mostly: bool = False
    replacement: bool = False
    journal: bool = False

    @property
    def state(self) -> str:
        if self.faulty:
            return "failed"
        if self.spare:
            return "spare"
        if self.journal:
            return "journal"
        if self.replacement:
            return "replacement"
        return "active"


@dataclass(frozen=True, slots=True)
class MdSync:
    action: str  # resync | recovery | check | repair | reshape
    ratio: float | None = None  # 0..1, None while DELAYED/PENDING
    done_blocks: int | None = None
    total_blocks: int | None = None
    finish_seconds: float | None = None
    speed_kib: int | None = None
    waiting: str | None = None  # "DELAYED" | "PENDING"


@dataclass(frozen=True, slots=True)
class MdArray:
    name: str
    active: bool
    read_only: str | None  # "read-only" | "auto-read-only" | None
    level: str | None  # "raid6", "raid1", "linear" ... None for inactive arrays without one
    members: tuple[MdMember, ...]
    blocks: int | None = None
    superblock: str | None = None
    disks_total: int | None = None  # [n/m]: n, the raid_disks
    disks_working: int | None = None  # [n/m]: m, in-sync devices
    slot_map: str | None = None  # "UU_U"
    sync: MdSync | None = None
    extra_lines: tuple[str, ...] = field(default=())

    @property
    def missing(self) -> int:
        """Slots without an in-sync device (the ``_`` in ``[UU_]``)."""
        if self.slot_map is not None:
            return self.slot_map.count("_")
        if self.disks_total is not None and self.disks_working is not None:
            return max(self.disks_total - self.disks_working, 0)
        return 0

    @property
    def degraded(self) -> bool:
        return self.missing > 0

    @property
    def failed(self) -> int:
        return sum(1 for m in self.members if m.faulty)

    @property
    def spares(self) -> int:
        return sum(1 for m in self.members if m.spare and not m.faulty)


@dataclass(frozen=True, slots=True)
class MdStat:
    personalities: tuple[str, ...]
    arrays: tuple[MdArray, ...]
    unused_devices: tuple[str, ...] = ()


def parse_mdstat(text: str) -> MdStat:
    """Parse the whole of ``/proc/mdstat``. Raises ``ParseError`` quoting the bad line."""
    if "\x00" in text:
        raise ParseError("not /proc/mdstat: contains NUL bytes (binary data)")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Personalities :")), None)
    if start is None:
        first = next((ln for ln in lines if ln.strip()), "")
        raise ParseError(f"not /proc/mdstat: no 'Personalities :' line (first line: {first[:120]!r})")
    # Personalities : [linear] [multipath] [raid0] [raid1] [raid6] [raid5] [raid4] [raid10]
    personalities = tuple(re.findall(r"\[(\w+)\]", lines[start]))

    arrays: list[MdArray] = []
    unused: tuple[str, ...] = ()
    block: list[str] = []
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        if line.startswith("unused devices:"):
            # unused devices: <none>
            rest = line.split(":", 1)[1].strip()
            unused = tuple(d for d in rest.split() if d != "<none>")
            continue
        # Some captures lose the indentation of detail lines; a line that is not an
        # array header ("md0 : active ...") still belongs to the array above it.
        if line[0].isspace() or (block and not _HEADER_RE.match(line)):
            if not block:
                raise ParseError(f"indented line outside any array: {line.strip()!r}")
            block.append(line)
            continue
        if block:
            arrays.append(_parse_array(block))
        block = [line]
    if block:
        arrays.append(_parse_array(block))
    return MdStat(personalities, tuple(arrays), unused)


def _parse_array(block: list[str]) -> MdArray:
    header = block[0]
    m = _HEADER_RE.match(header)
    if not m:
        raise ParseError(f"unrecognised array line: {header!r}")
    name, active = m["name"], m["state"] == "active"
    tokens = m["rest"].split()
    read_only = None
    if tokens and tokens[0] in ("(read-only)", "(auto-read-only)"):
        read_only = tokens.pop(0)[1:-1]
    level = None
    if tokens and "[" not in tokens[0]:
        level = tokens.pop(0)
    members = tuple(_parse_member(tok, header) for tok in tokens)

    blocks = superblock = total = working = slot_map = None
    sync: MdSync | None = None
    extra: list[str] = []
    for raw in block[1:]:
        line = raw.strip()
        if bm := _BLOCKS_RE.match(line):
            blocks = int(bm["blocks"])
            if sm := _SUPER_RE.search(bm["rest"]):
                superblock = sm["super"]
            if "[" in bm["rest"]:
                cm = _COUNTS_RE.search(bm["rest"])
                if not cm:
                    raise ParseError(f"{name}: malformed [n/m] [U_] in status line: {line!r}")
                total, working, slot_map = int(cm["total"]), int(cm["working"]), cm["map"]
                if len(slot_map) != total:
                    raise ParseError(f"{name}: slot map {slot_map!r} does not have {total} slots: {line!r}")
        elif line.startswith("bitmap:"):
            continue
        elif wm := _WAIT_RE.match(line):
            sync = MdSync(action=wm["action"], waiting=wm["wait"])
        elif any(a in line for a in SYNC_ACTIONS) and "=" in line:
            sync = _parse_sync(name, line)
        else:
            # Unknown but well-formed detail (a newer kernel's line): keep it, do not fail.
            extra.append(line)
    if active and level not in (None, "linear", "raid0", "multipath", "faulty") and total is None:
        raise ParseError(f"{name}: status line with [n/m] missing (truncated file?) after {block[-1].strip()!r}")
    return MdArray(
        name=name,
        active=active,
        read_only=read_only,
        level=level,
        members=members,
        blocks=blocks,
        superblock=superblock,
        disks_total=total,
        disks_working=working,
        slot_map=slot_map,
        sync=sync,
        extra_lines=tuple(extra),
    )


def _parse_sync(name: str, line: str) -> MdSync:
    """A resync, recovery, reshape or check under way: "[==>......]  recovery = 12.6% (...) finish=... speed=..."."""
    m = _SYNC_RE.search(line)
    if not m:
        raise ParseError(f"{name}: malformed sync line: {line!r}")
    return MdSync(
        action=m["action"],
        ratio=min(float(m["pct"]) / 100.0, 1.0),
        done_blocks=int(m["done"]) if m["done"] else None,
        total_blocks=int(m["total"]) if m["total"] else None,
        finish_seconds=float(m["finish"]) * 60 if m["finish"] else None,
        speed_kib=int(m["speed"]) if m["speed"] else None,
    )


def _parse_member(token: str, header: str) -> MdMember:
    m = _DEVICE_RE.match(token)
    if not m:
        raise ParseError(f"malformed member {token!r} in: {header!r}")
    flags = m["flags"]
    return MdMember(
        device=m["dev"],
        role=int(m["role"]),
        faulty="(F)" in flags,
        spare="(S)" in flags,
        write_mostly="(W)" in flags,
        replacement="(R)" in flags,
        journal="(J)" in flags,
    )
