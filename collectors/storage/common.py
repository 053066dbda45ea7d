"""What the storage collectors share: running their tool, reading numbers the tools print in
several ways, and naming a device's disk and bay."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, Protocol, TypeVar

from collectors import finite
from collectors.base import CommandNotFound, CommandResult, NoData, ParseError, Runner
from collectors.location import BayRule, DiskLocation, base_device, bay_of, parse_by_id_name

P = ParamSpec("P")
R = TypeVar("R")

_PART = re.compile(r"-part\d+$")
_SIZE = re.compile(r"^([0-9]+(?:[.,][0-9]+)?)\s*([KMGTPE]?)(i?)B?$", re.IGNORECASE)
_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}


def run_tool(runner: Runner, argv: Sequence[str], timeout: float, tool: str) -> CommandResult:
    """Run a storage tool; one that is not installed means this host does not use it."""
    try:
        return runner(list(argv), timeout)
    except CommandNotFound as exc:
        raise NoData(f"{exc} ({tool} not installed)") from None


def first_line(res: CommandResult) -> str:
    """The first line a failed command said, for an error message."""
    for stream in (res.stderr, res.stdout):
        for line in stream.decode("utf-8", "replace").splitlines():
            if line.strip():
                return line.strip()[:300]
    return f"exit status {res.returncode}"


def number(value: Any) -> float | None:
    """A count or size as the tools print it: 12, "12", "1.5K", "3,5G" (a decimal comma), "-"."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if finite.is_sane(value) else None  # float() of a 400-digit int overflows
    text = str(value).strip()
    if text in ("", "-", "none", "None"):
        return None
    m = _SIZE.match(text)
    if not m:
        return None
    base = 1024 if m[3] or m[2] else 1
    try:
        size = finite.parse_float(m[1].replace(",", ".")) * base ** _POWERS[m[2].upper()]
    except (ValueError, OverflowError):
        return None  # 400 digits, or a yottabyte beyond LIMIT: not a size any pool has
    return size if finite.is_sane(size) else None


def integer(value: Any) -> int | None:
    n = number(value)
    return int(n) if n is not None else None


def duration_seconds(text: str) -> float | None:
    """"55h33m", "00:32:11", "1 days 02:03:04", "0h2m", "1 Hours 10 Minutes" -> seconds."""
    text = text.strip().lower()
    total, found = 0.0, False
    if m := re.search(r"(\d+)\s*days?", text):
        total += int(m[1]) * 86400
        found = True
        text = text[m.end():]
    if m := re.search(r"(\d+):(\d{2}):(\d{2})", text):
        return total + int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])
    for unit, mult in (("h", 3600), ("m", 60), ("s", 1)):
        if m := re.search(rf"(\d+)\s*{unit}[a-z]*", text):
            total += int(m[1]) * mult
            found = True
    return total if found else None


@dataclass
class Identity:
    """A device as a storage tool names it, resolved to a disk: what the bay rules match on."""

    name: str
    device: str | None = None  # kernel name of the whole disk, when the host sees it
    serial: str | None = None
    model: str | None = None
    wwn: str | None = None
    bay: str | None = None

    def known(self) -> bool:
        """Whether the disk is known by its serial (else an earlier identity may say more)."""
        return self.serial is not None

    def filled_from(self, earlier: Identity) -> Identity:
        """This identity with what it lacks taken from an earlier one (a disk that was pulled)."""
        return Identity(self.name, *(getattr(self, k) or getattr(earlier, k)
                                     for k in ("device", "serial", "model", "wwn", "bay")))


def identify(name: str, locs: dict[str, DiskLocation], rules: Iterable[BayRule], *,
             by_path: str | None = None, enclosure_slot: str | None = None, slot: str | None = None,
             serial: str | None = None, wwn: str | None = None, model: str | None = None) -> Identity:
    """Which disk a tool's device name means and where it sits.

    The name may be a /dev/disk/by-id link (the serial is in the name, so a pulled disk is
    still known), a kernel name (sdh, sdh1, nvme0n1p3), a full path, or something only the
    tool knows (a ZFS guid, a controller slot): then what the tool itself said is used."""
    ident = Identity(name, serial=serial, wwn=wwn, model=model)
    short = name.removeprefix("/dev/").removeprefix("disk/by-id/").removeprefix("disk/by-path/")
    short = short.removeprefix("mapper/")
    whole = _PART.sub("", short)
    loc = next((d for d in locs.values() if whole in d.ids or d.by_path == whole), None)
    if loc is None and "/" not in short:
        loc = locs.get(base_device(short))
    parsed = parse_by_id_name(whole)
    if loc is not None:
        ident.device = loc.device
        ident.serial = ident.serial or loc.serial
        ident.model = ident.model or loc.model
        ident.wwn = ident.wwn or loc.wwn
        by_path = by_path or loc.by_path
        enclosure_slot = enclosure_slot or loc.enclosure_slot
    if parsed is not None:
        ident.serial = ident.serial or parsed.serial
        ident.model = ident.model or parsed.model
        ident.wwn = ident.wwn or parsed.wwn
    probe = DiskLocation(device=ident.device or "", serial=ident.serial, model=ident.model, wwn=ident.wwn,
                         by_path=by_path, enclosure_slot=enclosure_slot, slot=slot)
    ident.bay = bay_of(rules, probe)
    return ident


class Placed(Protocol):
    """A device with an identity and a bay: a ZFS vdev, a btrfs device, a RAID drive, an OSD."""

    @property
    def bay(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def serial(self) -> str | None: ...


def describe(d: Placed) -> str:
    """Where a device is and what it is, in the words md members use; the unknown is said to be unknown."""
    bay = d.bay or "bay unknown"
    model = d.model or "model unknown"
    serial = f"serial {d.serial}" if d.serial else "serial unknown"
    return f"{bay}, {model} {serial}"



def json_shape(what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A JSON parser whose document has another shape somewhere (a list where an object was, a
    number for a name: a newer tool, a broken controller) raises a ParseError saying so, not
    the TypeError or AttributeError that walking it would."""
    def wrap(parse: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(parse)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return parse(*args, **kwargs)
            except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
                raise ParseError(f"{what}: unexpected JSON shape ({type(exc).__name__}: {exc})") from None
        return run
    return wrap
