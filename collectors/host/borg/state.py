"""What the borg collector read: each repository, the newest archive of each host and set of
paths, its size, and its last check (the records all backup plug-ins share)."""

from __future__ import annotations

from typing import ClassVar

from collectors.backup import BackupState


class BorgState(BackupState):
    kind: ClassVar[str] = "borg"
