"""One lock per database between the rollup fold (exclusive) and writers (shared): a fold never
sees half of a late write it must refold, and writers do not wait on each other."""

from __future__ import annotations

import threading

from sqlalchemy import Engine


class SharedLock:
    """Many writers share it; make_rollups takes it alone, only to move its claim.

    A sample committed while make_rollups folds the same bucket would be missed by the fold
    and never rolled up. Writers of samples hold it shared for their transaction; the claim
    moves only between transactions, so a writer sees either the old claim (its samples
    are committed before the fold starts) or the new one (it folds its late samples itself).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._exclusive = False

    def shared(self) -> _Held:
        return _Held(self, exclusive=False)

    def exclusive(self) -> _Held:
        return _Held(self, exclusive=True)

    def _acquire(self, exclusive: bool) -> None:
        with self._cond:
            if exclusive:
                self._cond.wait_for(lambda: not self._exclusive)
                self._exclusive = True  # new shared holders wait from now on
                self._cond.wait_for(lambda: self._shared == 0)
            else:
                self._cond.wait_for(lambda: not self._exclusive)
                self._shared += 1

    def _release(self, exclusive: bool) -> None:
        with self._cond:
            if exclusive:
                self._exclusive = False
            else:
                self._shared -= 1
            self._cond.notify_all()


class _Held:
    def __init__(self, lock: SharedLock, exclusive: bool) -> None:
        self.lock, self.exclusive = lock, exclusive

    def __enter__(self) -> None:
        self.lock._acquire(self.exclusive)

    def __exit__(self, *exc: object) -> None:
        self.lock._release(self.exclusive)


# One per engine: every Store on the same database (one per host) shares it.
_LOCKS: dict[int, SharedLock] = {}


def rollup_lock(engine: Engine) -> SharedLock:
    return _LOCKS.setdefault(id(engine), SharedLock())
