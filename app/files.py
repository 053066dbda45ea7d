"""Files rackpulse creates that hold what nobody else should read: databases, outboxes, tokens."""

from __future__ import annotations

import os
from pathlib import Path


def private_file(path: Path) -> None:
    """Create ``path`` (and its folder) readable by its owner only, before SQLite or a writer does:
    SQLite gives the -wal and -shm files the database file's permissions, whatever the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass  # an existing file keeps the permissions its owner gave it
