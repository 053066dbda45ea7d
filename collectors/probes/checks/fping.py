"""fping's answers, from text to records: the per-ping lines of ``-C`` and the summary lines of
``-c``, both on standard error, one line per target (fping(8), "-C" and "-c"):

    10.0.0.1 : 0.10 0.09 - 0.11                                       (-C 4: one lost)
    10.0.0.1 : xmt/rcv/%loss = 5/3/40%, min/avg/max = 0.13/0.23/0.32  (-c 5)
    10.0.0.9 : xmt/rcv/%loss = 3/0/100%

Lines of other kinds (ICMP errors fping reports as it goes, "duplicate" notes) are not
results and are skipped; a text with no result line at all is an error quoting its first line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from collectors.base import ParseError
from collectors.finite import parse_float

_PER_PING = re.compile(r"^(?P<target>\S+)\s+:\s+(?P<rtts>(?:(?:\d+(?:\.\d+)?|-)\s*)+)$")
_SUMMARY = re.compile(r"^(?P<target>\S+)\s+:\s+xmt/rcv/%loss\s+=\s+(?P<sent>\d+)/(?P<rcvd>\d+)/(?P<loss>\d+)%"
                      r"(?:,\s+min/avg/max\s+=\s+(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+))?\s*$")


@dataclass(frozen=True)
class PingResult:
    target: str
    sent: int
    received: int
    rtts_ms: tuple[float, ...] = ()  # each answered ping, when fping ran with -C
    min_ms: float | None = None
    avg_ms: float | None = None
    max_ms: float | None = None

    @property
    def loss(self) -> float:
        return 1.0 - self.received / self.sent if self.sent else 1.0

    @property
    def p95_ms(self) -> float | None:
        """The 95th percentile of the answered pings (nearest rank); None without -C's list."""
        if not self.rtts_ms:
            return None
        ordered = sorted(self.rtts_ms)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def _per_ping(target: str, fields: list[str]) -> PingResult:
    rtts = tuple(parse_float(f) for f in fields if f != "-")
    return PingResult(target, len(fields), len(rtts), rtts, min(rtts, default=None),
                      round(sum(rtts) / len(rtts), 6) if rtts else None, max(rtts, default=None))


def parse_fping(text: str) -> dict[str, PingResult]:
    """Every target's result in fping's output (``-C`` or ``-c``, with ``-q``), by target."""
    out: dict[str, PingResult] = {}
    for line in text.splitlines():
        line = line.strip()
        if m := _SUMMARY.match(line):
            sent, rcvd = int(m["sent"]), int(m["rcvd"])
            num = {k: parse_float(m[k]) if m[k] else None for k in ("min", "avg", "max")}
            out[m["target"]] = PingResult(m["target"], sent, rcvd, (), num["min"], num["avg"], num["max"])
        elif m := _PER_PING.match(line):
            out[m["target"]] = _per_ping(m["target"], m["rtts"].split())
    if not out:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        raise ParseError(f"fping gave no result line: {first[:200]!r}" if first else "fping printed nothing")
    return out


def fping_argv(fping: list[str], targets: list[str], count: int, interval_ms: int, interface: str | None,
               timeout_ms: int) -> list[str]:
    """fping -C: each ping's time, so a percentile and a smokeping-like spread can be drawn.
    -q: only the final lines; -p: the gap between pings to a target; -t: how long to wait for
    one answer; -I: the source interface."""
    argv = [*fping, "-C", str(count), "-q", "-p", str(interval_ms), "-t", str(timeout_ms)]
    if interface:
        argv += ["-I", interface]
    return [*argv, "--", *targets]
