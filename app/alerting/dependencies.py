"""Which alerts another alert explains: while a parent fires, its children send nothing.

When the upstream link dies every probe, tunnel and agent behind it fails too; one notification
about the link says it all. Three kinds of parent:

- built in, a collector that is down (`collector_down`, subject the collector's name) explains
  the alerts raised from that collector's own findings: its state is old or missing;
- built in, an agent host that is silent (`agent_silent` on the server) explains everything of
  that host (the runtime passes it to the host's evaluation as `explained_by`);
- declared by the user in the shape of silences (`[[alerts.dependencies]]`): a parent rule and
  subject, and children as rule and subject patterns.

A suppressed alert still changes state and shows on the alerts page as "suppressed by <parent>";
it is held back like a silenced one, so a child still firing when its parent resolves is told
then, once (the engine's "began firing while muted" path).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.alerting.engine import AlertState
from app.alerting.sources import source_of

Key = tuple[str, str]


@dataclass(frozen=True)
class Match:
    """A rule and a subject, each exact or a shell-style pattern; None matches anything."""

    rule: str | None = None
    subject: str | None = None

    def matches(self, key: Key) -> bool:
        return _fits(self.rule, key[0]) and _fits(self.subject, key[1])

    def may_meet(self, other: Match) -> bool:
        """Whether some alert could match both (patterns tried against each other both ways)."""
        return _meet(self.rule, other.rule) and _meet(self.subject, other.subject)

    def __str__(self) -> str:
        return " ".join(p for p in (self.rule or "*", self.subject) if p)


@dataclass(frozen=True)
class Dependency:
    parent: Match
    children: tuple[Match, ...]


def _fits(pattern: str | None, value: str) -> bool:
    if pattern is None:
        return True
    return fnmatch.fnmatchcase(value, pattern) if any(ch in pattern for ch in "*?[") else pattern == value


def _meet(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return True
    return _fits(a, b) or _fits(b, a)


def find_cycle(deps: Sequence[Dependency]) -> list[int] | None:
    """Indexes of dependencies that explain each other in a ring (A's child may be B's parent and
    B's child A's parent), or None. A parent that matches its own children's patterns is not a
    ring: an alert never explains itself."""
    edges = {i: [j for j, b in enumerate(deps) if j != i and any(c.may_meet(b.parent) for c in a.children)]
             for i, a in enumerate(deps)}
    state: dict[int, int] = {}  # 1: on the current path, 2: done

    def visit(i: int, path: list[int]) -> list[int] | None:
        state[i] = 1
        for j in edges[i]:
            if state.get(j) == 1:  # on the current path: a ring back to j
                return path[path.index(j):] + [j]
            if j not in state:
                found = visit(j, path + [j])
                if found:
                    return found
        state[i] = 2
        return None

    for i in edges:
        if i not in state:
            found = visit(i, [i])
            if found:
                return found
    return None


def explained(states: Mapping[Key, AlertState], keys: Iterable[Key], deps: Sequence[Dependency],
              rule_source: Mapping[str, str], explained_by: str | None = None) -> dict[Key, str]:
    """For each key some firing parent explains, the parent's words ("probe_down gateway").

    ``rule_source`` maps a rule to the collector whose findings raise it (collector_down of that
    collector explains it); ``explained_by`` explains every key of this host (a silent agent)."""
    firing = [st.key for st in states.values() if st.state == "firing"]
    down = {subject for rule, subject in firing if rule == "collector_down"}
    silent = next((subject for rule, subject in firing if rule == "agent_silent"), None)
    if explained_by is None and silent is not None:  # the agent's own silence, kept with its host's alerts
        explained_by = f"agent_silent {silent}"
    out: dict[Key, str] = {}
    for key in keys:
        if explained_by:
            if key[0] != "agent_silent":  # the parent never explains itself
                out[key] = explained_by
            continue
        source = source_of(rule_source, *key)
        if source is not None and source in down:
            out[key] = f"collector_down {source}"
            continue
        for dep in deps:
            parent = next((p for p in firing if p != key and dep.parent.matches(p)), None)
            if parent is not None and any(c.matches(key) for c in dep.children):
                out[key] = f"{parent[0]} {parent[1]}"
                break
    return out
