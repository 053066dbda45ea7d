"""Silences' matching: a shell-style pattern per rule and subject, what counts as "every alert"
(one pattern, or several together), and the limits that keep a pattern cheap to match."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

from app.alerting.conditions import BUILTIN

SilenceRow = tuple[str | None, str | None, float]  # a silence's rule pattern, subject pattern, until
# A silence's patterns are short (a rule name, "md*", a subject); fnmatch on a megabyte pattern
# per alert per tick stalled evaluation for 25 s.
PATTERN_MAX = 200
ALL_SILENCE_HOURS = 7 * 24
SILENCES_SECONDS = 5.0


SILENCES_MAX = 200  # in force at once on one host: more is a script gone wrong, and /alerts lists each
# Values a pattern that "matches everything" must match: every rule's name, and subjects of every
# shape (an array, a disk, an address, a BGP peer's path, a unit, digits only, one letter, non-ASCII).
SUBJECT_PROBES = ("md0", "sda", "nvme0n1", "ZA1049HK", "10.0.0.2", "fe80::1", "default/ipv4Unicast/10.0.0.1",
                  "nginx.service", "wg0/phone", "shelf 1, bay 7", "heatpump", "0", "Z", "-", "_", "Ü", "x" * 200)
_WILDCARD = re.compile(r"(\*|\?|\[!?\]?[^\]]*\])+")


def matches_all(pattern: str | None, kind: str = "subject") -> bool:
    """Whether a silence's pattern matches every alert: none or empty; made of wildcards only
    ("*", "?*", "[a-z]*": no literal character to narrow it); or matching every probe value
    (every rule's name for a rule pattern). Such a silence must be confirmed as "all" and is
    capped like one: "?*" silenced 22 of 22 alerts for 90 days without either."""
    if not pattern:
        return True
    if _WILDCARD.fullmatch(pattern):
        return True
    probes = tuple(BUILTIN) if kind == "rule" else SUBJECT_PROBES
    return all(matches(pattern, p) for p in probes)


def covered_until(rows: Iterable[SilenceRow], rules: Iterable[str]) -> float | None:
    """When silences (rule pattern, subject pattern, until) stop covering every rule for every
    subject, if together they cover them all now; None when some rule is not silenced for all."""
    end: float | None = None
    for name in rules:
        ends = [until for rp, sp, until in rows if matches_all(sp) and (matches_all(rp, "rule") or matches(rp, name))]
        if not ends:
            return None
        end = max(ends) if end is None else min(end, max(ends))
    return end


def matches(pattern: str | None, value: str) -> bool:
    """A silence's matcher: None matches anything; "md*" or "sd?" as in a shell; else exactly."""
    if pattern is None:
        return True
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(value, pattern)
    return pattern == value
