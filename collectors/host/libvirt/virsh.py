"""`virsh domstats --raw` and `virsh list --name`, read as typed records: pure functions from text.

domstats prints each domain as a ``Domain: 'name'`` line followed by indented ``key=value`` lines
(virsh(1), "domstats"; the keys are those of virConnectGetAllDomainStats: ``state.state``,
``state.reason``, ``cpu.time`` in nanoseconds, ``balloon.current`` in KiB, ``vcpu.current``,
``net.<n>.rx.bytes``, ``block.<n>.rd.bytes`` ...). A hypervisor that does not keep a group of
statistics (the test driver keeps only the state) leaves its keys out: such a figure is unknown,
not zero."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# virDomainState, and the reasons virsh's domstate --reason names (libvirt-domain.h)
STATES = ("no state", "running", "blocked", "paused", "shutting down", "shut off", "crashed", "suspended")
REASONS: dict[int, tuple[str, ...]] = {
    1: ("unknown", "booted", "migrated", "restored", "from snapshot", "unpaused", "migration canceled",
        "save canceled", "woken up", "crashed", "post-copy"),
    3: ("unknown", "user", "migrating", "saving", "dumping", "I/O error", "watchdog", "from snapshot",
        "shutting down", "snapshot", "crashed", "starting up", "post-copy", "post-copy failed"),
    4: ("unknown", "user"),
    5: ("unknown", "shut down", "destroyed", "crashed", "migrated", "saved", "failed", "from snapshot", "daemon"),
    6: ("unknown", "panicked"),
    7: ("unknown",),
}


class VirshFormatError(ValueError):
    """A line of virsh's output that is not what its format says; the message quotes it."""


@dataclass
class DomainStats:
    name: str
    state: int = 0
    reason: int = 0
    values: dict[str, str] = field(default_factory=dict)  # every key=value, as printed

    @property
    def state_word(self) -> str:
        return STATES[self.state] if 0 <= self.state < len(STATES) else f"state {self.state}"

    @property
    def reason_word(self) -> str:
        words = REASONS.get(self.state, ())
        return words[self.reason] if 0 <= self.reason < len(words) else f"reason {self.reason}"

    bad: dict[str, str] = field(default_factory=dict)  # key=value read as a number and refused

    def number(self, key: str) -> float | None:
        """The value as a number; None when it is missing. Every statistic virsh prints is a
        count, a size or a time: one that is not a finite number of zero or more (``inf``,
        ``nan``, ``-5``, a word) is a bad read, kept in `bad` to be said once, and unknown."""
        raw = self.values.get(key)
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            self.bad[key] = raw
            return None
        return value

    def total(self, group: str, key: str) -> float | None:
        """The sum of ``<group>.<n>.<key>`` over the group's devices; None when it keeps none.
        The devices summed are those the answer holds, whatever ``<group>.count`` claims
        (``net.count=1000000000000`` ran a loop a trillion times long)."""
        if self.number(f"{group}.count") is None:
            return None
        prefix, suffix = f"{group}.", f".{key}"
        present = [v for k in list(self.values) if k.startswith(prefix) and k.endswith(suffix)
                   and k[len(prefix):-len(suffix)].isdigit() and (v := self.number(k)) is not None]
        return sum(present) if present else None


def parse_domstats(text: str) -> list[DomainStats]:
    out: list[DomainStats] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("Domain: "):
            name = line[len("Domain: "):].strip()
            if len(name) < 2 or name[0] != "'" or name[-1] != "'":
                raise VirshFormatError(f"line {lineno}: a domain's name in quotes expected: {line!r}")
            out.append(DomainStats(name[1:-1]))
            continue
        key, eq, value = line.strip().partition("=")
        if not out or not eq or not line[:1].isspace():
            raise VirshFormatError(f"line {lineno}: key=value under a Domain line expected: {line!r}")
        d = out[-1]
        d.values[key] = value
        if key in ("state.state", "state.reason"):
            try:
                setattr(d, key.split(".")[1], int(value))
            except ValueError:
                raise VirshFormatError(f"line {lineno}: a number expected: {line!r}") from None
    return out


def parse_names(text: str) -> list[str]:
    """``virsh list --name``: one name a line, a blank line at the end."""
    return [line.strip() for line in text.splitlines() if line.strip()]
