"""How much a counter rose within a recent window (restarts in the last 10 minutes), from the
readings a collector has taken: its own memory, kept in the process."""

from __future__ import annotations


class RecentIncrease:
    def __init__(self, window: float) -> None:
        self.window = window
        self._seen: dict[str, list[tuple[float, int]]] = {}

    def rose(self, key: str, value: int | None, now: float) -> int | None:
        """value minus the reading at the window's start (the newest at or before it, else the
        first there is); 0 after a reset to a lower count."""
        if value is None:
            return None
        seen = self._seen.setdefault(key, [])
        seen.append((now, value))
        older = [i for i, (t, _) in enumerate(seen) if t <= now - self.window]
        if older:
            del seen[:older[-1]]
        return max(0, value - seen[0][1])
