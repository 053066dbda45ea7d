"""btrfs-progs' answers: `btrfs filesystem show --raw`, `btrfs device stats`, `btrfs scrub
status -R` (the key-value form of every btrfs-progs since 3.x, and the header of 5.1 and later)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.base import ParseError
from collectors.storage.common import duration_seconds, number

ERROR_KINDS = ("write", "read", "flush", "corruption", "generation")


@dataclass
class BtrfsDevice:
    devid: int
    path: str | None  # None when btrfs no longer knows it
    size: float | None = None
    used: float | None = None
    missing: bool = False


@dataclass
class BtrfsFs:
    uuid: str
    label: str | None
    total_devices: int | None = None
    used: float | None = None
    devices: list[BtrfsDevice] = field(default_factory=list)
    some_missing: bool = False  # "*** Some devices missing"


_LABEL = re.compile(r"^Label:\s+(?:'(?P<label>.*)'|(?P<none>none))\s+uuid:\s+(?P<uuid>[0-9a-fA-F-]{36})\s*$")
_DEVID = re.compile(r"^\s*devid\s+(\d+)\s+size\s+(\S+)\s+used\s+(\S+)\s+path\s*(.*?)\s*$")


def parse_fi_show(text: str) -> list[BtrfsFs]:
    """Every filesystem in `btrfs filesystem show [--raw]`. A device btrfs lost reads as
    "path  MISSING" (kernel 6.x) or "path /dev/vda MISSING"; a filesystem missing devices it
    no longer lists says "*** Some devices missing"."""
    out: list[BtrfsFs] = []
    fs: BtrfsFs | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith(("warning", "WARNING", "Btrfs v", "btrfs-progs")):
            continue
        if m := _LABEL.match(s):
            fs = BtrfsFs(uuid=m["uuid"].lower(), label=m["label"] if m["none"] is None else None)
            out.append(fs)
            continue
        if fs is None:
            raise ParseError(f"line {lineno}: expected \"Label: ... uuid: ...\", got {line!r}")
        if m := re.match(r"Total devices (\d+) FS bytes used (\S+)", s):
            fs.total_devices, fs.used = int(m[1]), number(m[2])
        elif m := _DEVID.match(line):
            rest = m[4].split()
            missing = "MISSING" in rest
            path = next((r for r in rest if r != "MISSING"), None)
            fs.devices.append(BtrfsDevice(int(m[1]), path, number(m[2]), number(m[3]), missing))
        elif "Some devices missing" in s:
            fs.some_missing = True
        else:
            raise ParseError(f"line {lineno}: not a btrfs filesystem show line: {line!r}")
    return out


_STAT = re.compile(r"^\[(?P<dev>.+)\]\.(?P<kind>\w+?)_(?:io_)?errs\s+(?P<n>\d+)\s*$")


def parse_device_stats(text: str) -> dict[str, dict[str, int]]:
    """`btrfs device stats <mount>`: {device path: {write, read, flush, corruption, generation}}."""
    out: dict[str, dict[str, int]] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _STAT.match(line.strip())
        if not m or m["kind"] not in ERROR_KINDS:
            raise ParseError(f"line {lineno}: expected \"[device].<kind>_errs N\", got {line!r}")
        out.setdefault(m["dev"], {})[m["kind"]] = int(m["n"])
    return out


def parse_error_stats(text: str) -> dict[str, int]:
    """/sys/fs/btrfs/<uuid>/devinfo/<devid>/error_stats (kernel 5.14 and later): "write_errs 0"..."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            kind = parts[0].removesuffix("_errs").removesuffix("_io")
            if kind in ERROR_KINDS:
                out[kind] = int(parts[1])
    return out


@dataclass
class BtrfsScrub:
    status: str  # running | finished | interrupted | aborted | canceled | none
    started: str | None = None
    duration_seconds: float | None = None
    errors: dict[str, int] = field(default_factory=dict)  # read, csum, verify, super, malloc, uncorrectable ...
    bytes_scrubbed: float | None = None
    ratio: float | None = None  # btrfs-progs 5.1+ with a total to scrub

    @property
    def uncorrectable(self) -> int:
        return self.errors.get("uncorrectable", 0)

    @property
    def corrected(self) -> int:
        return self.errors.get("corrected", 0)


_LEGACY = re.compile(r"scrub started at (?P<start>.+?)(?:,| and) (?:was )?(?P<how>\w+) after (?P<dur>[\d:]+)")


def parse_scrub_status(text: str) -> BtrfsScrub:
    """`btrfs scrub status -R <mount>` in the 5.1+ layout (UUID:, Scrub started:, Status:) or the
    legacy one ("scrub started at ... and finished after ...")."""
    scrub = BtrfsScrub(status="none")
    data = 0.0
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        key, sep, value = s.partition(":")
        value = value.strip()
        if key == "Status" and sep:
            scrub.status = {"cancelled": "canceled"}.get(value.lower(), value.lower())
        elif key == "Scrub started" and sep:
            scrub.started = value
        elif key in ("Duration", "Scrub resumed") and sep:
            scrub.duration_seconds = duration_seconds(value) if key == "Duration" else scrub.duration_seconds
        elif key == "Bytes scrubbed" and sep:
            if m := re.search(r"\(([\d.]+)%\)", value):
                scrub.ratio = float(m[1]) / 100
        elif key == "Error summary" and sep and value != "no errors found":
            for word in value.split():  # the human layout: "csum=3 verify=1"
                name, _, n = word.partition("=")
                if n.isdigit():
                    scrub.errors[name] = int(n)
        elif key in ("Corrected", "Uncorrectable", "Unverified") and value.isdigit():
            scrub.errors[key.lower()] = int(value)
        elif key.endswith("_errors") and value.isdigit():
            scrub.errors[key.removesuffix("_errors")] = int(value)
        elif key in ("data_bytes_scrubbed", "tree_bytes_scrubbed") and value.isdigit():
            data += int(value)
        elif m := _LEGACY.search(s):
            scrub.started = m["start"]
            how = m["how"].lower()
            scrub.status = {"interrupted": "interrupted", "aborted": "aborted", "finished": "finished",
                            "running": "running"}.get(how, how)
            scrub.duration_seconds = duration_seconds(m["dur"])
        elif s.startswith("scrub started at") and "running for" in s:
            scrub.started = s.removeprefix("scrub started at ").split(", running for")[0]
            scrub.status = "running"
            if m := re.search(r"running for ([\d:]+)", s):
                scrub.duration_seconds = duration_seconds(m[1])
        elif s == "no stats available":
            scrub.status = "none"
    if data:
        scrub.bytes_scrubbed = data
    if scrub.status == "finished":
        scrub.ratio = 1.0
    return scrub
