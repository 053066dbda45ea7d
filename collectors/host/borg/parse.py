"""Pure readers of borg's answers: `borg list --json --format …` (archives with their time,
hostname and command line), `borg info --json` (cache.stats) and what a failed command says.
borg 1.x writes times in the local zone without an offset; borg 2 adds one."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

from collectors import finite
from collectors.backup import Taken
from collectors.base import CollectorError

FORMAT = "{archive}{time}{hostname}{command_line}"  # keys borg's --json then carries per archive
# Options of `borg create` that take a value: what follows them on its command line is no path.
_VALUED = {"-e", "--exclude", "--exclude-from", "--pattern", "--patterns-from", "--comment", "--timestamp",
           "-C", "--compression", "--chunker-params", "-c", "--checkpoint-interval", "--files-cache",
           "--stdin-name", "--stdin-user", "--stdin-group", "--stdin-mode", "--upload-ratelimit", "--upload-buffer",
           "--remote-path", "--rsh", "--lock-wait", "--exclude-if-present", "--paths-from-command"}


class BorgFormatError(CollectorError):
    """An answer that is not borg's JSON; the message quotes it."""


def parse_time(text: str) -> float:
    try:
        return dt.datetime.fromisoformat(text.strip()).timestamp()  # no offset: the local zone, as borg 1 means
    except ValueError:
        raise BorgFormatError(f"an archive time borg does not write: {text!r:.80}") from None


def created_paths(command_line: Sequence[str]) -> tuple[str, ...]:
    """The paths a `borg create` command line backed up: what follows the ARCHIVE argument
    (REPO::NAME, or ::NAME with BORG_REPO) that is neither an option nor an option's value."""
    args = list(command_line)
    at = next((i for i, a in enumerate(args) if "::" in a), None)
    if at is None:
        return ()
    out, skip = [], False
    for a in args[at + 1:]:
        if skip:
            skip = False
        elif a.startswith("-"):
            skip = a in _VALUED
        else:
            out.append(a)
    return tuple(out)


def parse_list(text: str) -> list[Taken]:
    try:
        data = finite.loads(text)
    except ValueError as exc:
        raise BorgFormatError(f"borg list: not JSON ({exc}): {text[:120]!r}") from None
    archives = data.get("archives") if isinstance(data, dict) else None
    if not isinstance(archives, list):
        raise BorgFormatError(f"borg list: no archives list in {text[:120]!r}")
    out = []
    for a in archives:
        if not isinstance(a, dict) or not isinstance(a.get("time") or a.get("start"), str):
            raise BorgFormatError(f"borg list: an archive without its time: {json.dumps(a)[:160]}")
        line = a.get("command_line")
        out.append(Taken(parse_time(a.get("time") or a["start"]), str(a.get("hostname") or ""),
                         created_paths(line) if isinstance(line, list) else (),
                         id=str(a.get("name") or a.get("archive") or "")))
    return out


def parse_info(text: str) -> float | None:
    """`borg info --json`: what the repository stores, deduplicated and compressed (unique_csize)."""
    try:
        data = finite.loads(text)
    except ValueError:
        raise BorgFormatError(f"borg info: not JSON: {text[:120]!r}") from None
    stats = (data.get("cache") or {}).get("stats") if isinstance(data, dict) else None
    size = stats.get("unique_csize") if isinstance(stats, dict) else None
    return float(size) if isinstance(size, int | float) and not isinstance(size, bool) else None


def failure(returncode: int, stderr: str) -> str:
    """What a failed borg command says, in a line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    text = " ".join(lines)
    if "passphrase supplied" in text and "is incorrect" in text:
        return "wrong passphrase (passphrase_file)"
    if "does not exist" in text and "Repository" in text:
        return "no repository there"
    if locked(stderr):
        return next(ln for ln in lines if "lock" in ln.lower())
    return lines[0] if lines else f"borg exited with {returncode}"


def locked(stderr: str) -> bool:
    return "Failed to create/acquire the lock" in stderr or "lock" in stderr.lower() and "timeout" in stderr.lower()


def check_errors(returncode: int, stderr: str) -> tuple[bool, str | None]:
    """(whether `borg check` found the repository sound, its first error line). borg exits 1 for
    warnings and 2 for errors; its report goes to stderr."""
    if returncode == 0:
        return True, None
    for ln in stderr.splitlines():
        ln = ln.strip()
        if ln and not ln.startswith(("Starting", "Completed", "Finished", "Checking", "Analyzing", "Archive consistency")):
            return False, ln[:300]
    return False, failure(returncode, stderr)
