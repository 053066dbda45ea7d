"""What demo scenes share: writing the demo's host tree the way the kernel's files change,
whole, never half."""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path


def atomic_write(path: Path, text: str | bytes, touch: bool = False) -> None:
    """Write beside, then rename over: a collector reading at that moment sees old or new, never a
    torn file. A file that already says `text` is left alone: the demo writes its whole tree every
    second, and most of it changes far less often (that rewriting was the idle demo's CPU).
    `touch`: a file its program rewrites on a timer whether or not anything changed (OpenVPN's
    status file, whose age the collector checks) gets a fresh time instead.

    Every file written is stamped with this process's own clock (time.time()), not left to the
    kernel's: the same thing on a real clock, and under a fixed clock (libfaketime, the calendar
    sweep) a status file is as old as the story says, not months old."""
    data = text.encode() if isinstance(text, str) else text
    try:
        if path.read_bytes() == data:
            if touch:
                now = time.time()
                os.utime(path, (now, now))
            return
    except OSError:  # not there yet (or not a file): written below
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # one per writer
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o644)
    now = time.time()
    os.utime(tmp, (now, now))
    os.replace(tmp, path)


def replay_name(args: list[str]) -> str:
    """The file a command's answer is kept in for the demo's `replay` stand-in: its arguments
    as one name ("/" would make a folder); a name past what a file system takes (systemctl
    show with its property list) ends in a hash of the whole instead."""
    name = " ".join(args).replace("/", "%")
    if len(name.encode()) > 200:
        digest = hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:16]
        name = name.encode()[:100].decode("utf-8", "ignore") + " " + digest
    return name


def write_answer(folder: Path, args: list[str], stdout: str, rc: int = 0) -> None:
    """What the demo's stand-in prints for `<tool> args...`, and its exit status."""
    atomic_write(folder / (replay_name(args) + ".out"), stdout)
    atomic_write(folder / (replay_name(args) + ".rc"), f"{rc}\n")


def write_symlinks(folder: Path, links: dict[str, str]) -> None:
    """The folder holding exactly these symlinks (name -> target), as /dev/disk/by-id does."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in os.listdir(folder):
        if old not in links:
            os.unlink(folder / old)
    for name, target in links.items():
        p = folder / name
        if p.is_symlink() and os.readlink(p) == target:
            continue
        if p.is_symlink():
            p.unlink()
        os.symlink(target, p)
