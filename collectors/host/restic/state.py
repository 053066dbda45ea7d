"""What the restic collector read: each repository, the newest snapshot of each host and set of
paths in it, its size, and its last check."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class ResticGroup(Record):
    """The snapshots of one host and one set of paths, as `restic snapshots` groups them."""

    host: str
    paths: list[str]
    newest: float  # its newest snapshot's time
    newest_id: str = ""
    tags: list[str] = []  # its newest snapshot's
    count: int = 1

    @property
    def where(self) -> str:
        return f"{self.host}:{', '.join(self.paths)}"


class ResticCheck(Record):
    ended: float
    ok: bool
    error: str | None = None  # restic's first error line when not ok


class ResticRepoView(Record):
    name: str
    location: str  # where it is, as said on the page (repository_file: that file's name)
    offsite: bool = False
    max_age: float = 26 * 3600.0
    error: str | None = None  # it could not be opened: a wrong password, nothing there, unreachable
    groups: list[ResticGroup] = []
    missing: list[str] = []  # followed hosts and paths that no snapshot covers
    size_bytes: float | None = None
    check_every: float | None = None
    check: ResticCheck | None = None  # the last check that ran to its end
    check_note: str | None = None  # why a due check did not run (the repository locked)
    checking: bool = False  # a check runs now


class ResticState(State):
    repos: list[ResticRepoView] = []
    source_label: ClassVar[str] = "repo"

    def unreadable_sources(self) -> dict[str, float | None]:
        """Repositories that could not be opened: their alerts are held, not resolved."""
        return {r.name: None for r in self.repos if r.error}

    def sources(self) -> set[str]:
        return {r.name for r in self.repos}
