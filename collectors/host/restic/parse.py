"""Pure readers of restic's answers: `snapshots --json` (restic's Snapshot: time, paths,
hostname, tags, id), `stats --json` (total_size) and what a failed command says on stderr
("Fatal: wrong password or no key found"; restic 0.17 also gives exit codes 10, 11 and 12)."""

from __future__ import annotations

import datetime as dt
import json
import re

from collectors import finite
from collectors.backup import Taken
from collectors.base import CollectorError

# restic writes RFC 3339 with up to nine digits of a second ("…T04:11:33.50048557Z"); Python
# reads six at most.
_FRACTION = re.compile(r"(\.\d{1,6})\d*")
# restic 0.17's exit codes for a repository it could not open (cmd/restic/main.go).
EXIT_WORDS = {10: "no repository there", 11: "the repository is locked", 12: "wrong password or no key found"}


class ResticFormatError(CollectorError):
    """An answer that is not restic's JSON; the message quotes it."""


def parse_time(text: str) -> float:
    """restic's time of a snapshot as Unix time."""
    try:
        return dt.datetime.fromisoformat(_FRACTION.sub(r"\1", text.strip()).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ResticFormatError(f"a snapshot time restic does not write: {text!r:.80}") from None


def parse_snapshots(text: str) -> list[Taken]:
    """`restic snapshots --json`: a list of snapshots (null or [] for none)."""
    try:
        data = finite.loads(text or "null")
    except ValueError as exc:
        raise ResticFormatError(f"restic snapshots: not JSON ({exc}): {text[:120]!r}") from None
    if data is None:
        return []
    if not isinstance(data, list):
        raise ResticFormatError(f"restic snapshots: a list expected, got {text[:120]!r}")
    out = []
    for s in data:
        if not isinstance(s, dict) or not isinstance(s.get("time"), str):
            raise ResticFormatError(f"restic snapshots: a snapshot without its time: {json.dumps(s)[:160]}")
        out.append(Taken(parse_time(s["time"]), str(s.get("hostname") or ""),
                            tuple(str(p) for p in s.get("paths") or ()), tuple(str(t) for t in s.get("tags") or ()),
                            str(s.get("short_id") or s.get("id") or "")[:8]))
    return out


def parse_stats(text: str) -> float | None:
    """`restic stats --json --mode raw-data`: the bytes the repository stores (total_size)."""
    try:
        data = finite.loads(text)
    except ValueError:
        raise ResticFormatError(f"restic stats: not JSON: {text[:120]!r}") from None
    size = data.get("total_size") if isinstance(data, dict) else None
    return float(size) if isinstance(size, int | float) and not isinstance(size, bool) else None


def failure(returncode: int, stderr: str) -> str:
    """What a failed restic command says, in a line: its "Fatal:" line, made plain."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    fatal = next((ln.removeprefix("Fatal: ") for ln in lines if ln.startswith("Fatal:")), None)
    if (fatal and "unable to open config file" in fatal) or "Is there a repository at the following location?" in lines:
        return "no repository there (restic found no config file)"
    lock = next((ln.removeprefix("unable to create lock in backend: ") for ln in lines if "already locked" in ln), None)
    if lock:  # "repository is already locked by PID 13211 on nas by root (UID 0, GID 0)"
        return lock
    if fatal:
        return fatal
    if returncode in EXIT_WORDS:
        return EXIT_WORDS[returncode]
    return lines[0] if lines else f"restic exited with {returncode}"


def check_errors(returncode: int, stdout: str, stderr: str) -> tuple[bool, str | None]:
    """(whether `restic check` found the repository sound, its first error line). A check that
    could not take its lock found nothing: (True, None) is not said for it; see locked()."""
    if returncode == 0:
        return True, None
    said = [ln.strip() for ln in stderr.splitlines()]
    # its progress goes to stdout ("check all packs"); an error there names a pack or says error
    said += [ln.strip() for ln in stdout.splitlines() if ln.strip().startswith(("pack ", "error"))]
    for ln in said:
        if ln and not ln.startswith(("Fatal:", "Load(", "using temporary cache", "[")) and "retrying" not in ln:
            return False, ln[:300]
    return False, failure(returncode, stderr)


def locked(returncode: int, stderr: str) -> bool:
    """The check did not run: another process holds the repository's lock (a backup, a prune)."""
    return returncode == 11 or "already locked" in stderr or "unable to create lock" in stderr
