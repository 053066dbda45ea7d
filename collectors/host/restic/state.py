"""What the restic collector read: each repository, the newest snapshot of each host and set of
paths in it, its size, and its last check (the records all backup plug-ins share)."""

from __future__ import annotations

from typing import ClassVar

from collectors.backup import BackupState


class ResticState(BackupState):
    kind: ClassVar[str] = "restic"
