"""The starter config as TOML text: what was found, each part commented with what it is and
what to change. Only keys whose value differs from the default are set; the rest is said."""

from __future__ import annotations

import time
from pathlib import Path

from app.logsafe import escape
from app.starter.discover import Found
from collectors.starter import q


def _disk_words(d: object) -> str:
    dev = getattr(d, "device", "")
    model = getattr(d, "model", None) or "model unknown"
    serial = getattr(d, "serial", None) or getattr(d, "wwn", None) or "no serial"
    return f"now {dev}: {model}, serial {serial}"


def render(found: Found, host_root: Path, now: float | None = None) -> str:
    day = time.strftime("%Y-%m-%d", time.localtime(now))
    out = [
        f"# rackpulse configuration, written by `rackpulse init` on {day} from what {found.host} has.",
        "# Rename the bay labels to where each disk really sits, delete what you do not want, then",
        "# `rackpulse check-config` and `rackpulse serve`. Every key with its default and meaning:",
        "# rackpulse.example.toml.",
        "",
        f"host = {q(found.host)}",
    ]
    if host_root != Path("/"):
        out.append(f"host_root = {q(str(host_root))}")
    out += ["", "[web]", "## Only this machine can open the pages; another address needs a password",
            "## (`rackpulse hash-password`).", '# listen = "127.0.0.1"', "# port = 9842", "",
            "[storage]", '# url = "sqlite:///rackpulse.db"', ""]
    if found.notes:
        out += [f"## could not read: {n}" for n in found.notes] + [""]
    for part in found.parts.values():  # each plug-in's own section, in plug-in order
        if part:
            out += [*part, ""]
    out += _bays(found)
    out += _data_sets(found)
    # Each item is one line. Names the host chose (an interface, a model, a note) stand in comments
    # as they are: a newline in one would start a line of config ("tun0\n[collectors.ceph]\nceph
    # = [\"/bin/sh\", ...]" ran as root on the next `collect`). Control characters are shown
    # escaped; values are TOML-quoted by q() already, which leaves none.
    return "\n".join(escape(line) for line in out)


def _bays(found: Found) -> list[str]:
    out = []
    if found.bays:
        out += ["## Bays: one per controller port or enclosure slot a disk sits in now. Rename each label",
                '## to where it is ("shelf 1, bay 3"): the label follows the port, so a replacement disk',
                "## lands in the same bay. A disk on no port the kernel names is matched by serial below."]
    for b in found.bays:
        out += ["[[disks.bays]]", f"label = {q(b.label)}"]
        out.append(f"path = {q(b.path)}" if b.path else f"enclosure_slot = {q(b.enclosure_slot or '')}")
        if b.disk is not None:
            out[-1] += f"  # {_disk_words(b.disk)}"
    placed = {id(b.disk) for b in found.bays}
    for d in found.disks:
        if id(d) not in placed and d.serial:
            out += ["[[disks.bays]]", f"label = {q('bay of ' + d.device)}",
                    f"serial = {q(d.serial)}  # {_disk_words(d)}"]
    return [*out, ""] if out else []


def _data_sets(found: Found) -> list[str]:
    if not found.arrays_mounted:
        return []
    out = ["## Data sets on /data: each array's mount point found here is judged as one without a",
           "## section. Name your own to judge a folder, or to set max_age, offsite_required (a fresh",
           "## copy must be off site), guests (VMIDs) and heartbeats (jobs whose success is a copy)."]
    for mountpoint, device, fstype in found.arrays_mounted:
        name = mountpoint.strip("/").replace("/", "-") or "root"
        out += ["# [[data.sets]]", f"# name = {q(name)}", f"# path = {q(mountpoint)}  # {device}, {fstype}",
                "# max_age = 93600.0", "# offsite_required = false"]
    return [*out, ""]
