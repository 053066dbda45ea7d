"""Files rackpulse creates that hold what nobody else should read (databases, outboxes, tokens),
and files it rewrites (bay labels, `rackpulse init`): whole, under a lock, never torn."""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


def private_file(path: Path) -> None:
    """Create ``path`` (and its folder) readable by its owner only, before SQLite or a writer does:
    SQLite gives the -wal and -shm files the database file's permissions, whatever the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass  # an existing file keeps the permissions its owner gave it


_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold `path`'s lock for a read-modify-write: a thread lock for this process, and flock on
    `<path>.lock` for another process (`rackpulse serve` and a CLI command) on the same file."""
    key = path.resolve()
    with _locks_guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(key.with_name(key.name + ".lock"), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock


def atomic_write(path: Path, data: str | bytes, mode: int = 0o600) -> None:
    """Replace `path` whole: written to a temp file of its own beside it (two writers never share
    one), flushed to disk, then renamed over, and the folder synced. A crash at any moment leaves
    the old file or the new one, never a torn or empty one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dirfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)
