"""Bounded reads of what comes from outside: every plug-in that reads an HTTP body or JSON goes
through these, so none of them can forget a bound (100,000 Proxmox guests took 1.6 GB in one
collection; JSON nested 200,000 deep raised an uncaught RecursionError; an API trickling bytes
held its thread past the run's timeout and the collector never ran again).

- `read_body`: the whole body under a byte cap (the commands' 16 MiB) and a deadline for all of
  it, not per socket read (a trickle of one byte a second never tripped a socket timeout).
- `loads`: JSON no deeper than MAX_DEPTH; deeper is an error in words, never a RecursionError.
- `capped`: at most `limit` items of a list (guests, VMs, sensors, plugs), the rest said once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from collectors import finite
from collectors.base import DEFAULT_MAX_BYTES, CollectorError
from collectors.finite import MAX_DEPTH

CHUNK = 64 * 1024
T = TypeVar("T")


class Readable(Protocol):
    def read1(self, n: int = -1) -> bytes: ...

    def read(self, n: int | None = None) -> bytes: ...


class BoundExceeded(CollectorError):
    """An answer past a bound: too big, too slow, too deep; the message says which and how much."""


def read_body(resp: Readable, what: str, deadline_seconds: float, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """All of `resp` (an http.client response, or anything with read1) within `deadline_seconds`
    and `max_bytes`. read1 returns what one socket read brings, so the deadline is checked between
    reads however slowly the bytes come; each read still ends at the socket's own timeout."""
    end = time.monotonic() + deadline_seconds
    parts: list[bytes] = []
    size = 0
    while True:
        # http.client marks a response with a Content-Length done only on a read() at its end: a
        # read1 there returns b"" and leaves it open, and the keep-alive connection's next request
        # failed with ResponseNotReady
        chunk = resp.read1(CHUNK) if getattr(resp, "length", None) != 0 else resp.read()
        if not chunk:
            resp.read()
            return b"".join(parts)
        size += len(chunk)
        if size > max_bytes:
            raise BoundExceeded(f"{what}: the answer is over {max_bytes // (1024 * 1024)} MiB; not read further")
        parts.append(chunk)
        if time.monotonic() > end:
            raise BoundExceeded(f"{what}: the answer took over {deadline_seconds:g} s to arrive ({size} bytes by "
                                "then); not read further")


def loads(body: bytes | str, what: str, max_depth: int = MAX_DEPTH, max_objects: int | None = None
          ) -> Any:  # Any: JSON, read by the caller
    """json.loads, refusing nesting past `max_depth` (collectors.finite.depth: a bracket count, so a
    200,000-deep document costs one pass, not Python's recursion) and, with `max_objects`, an
    answer of more objects than that: the parse stops there, before the rest is built (100,000
    guests parsed whole were +77 MB before any cap on the list could apply)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if finite.depth(text, max_depth) > max_depth:
        raise BoundExceeded(f"{what}: JSON nested deeper than {max_depth} levels; not read")
    hook = None
    if max_objects is not None:
        made = [0]

        def hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
            made[0] += 1
            if made[0] > max_objects:
                raise BoundExceeded(f"{what}: more than {max_objects} objects in one answer; not read further")
            return dict(pairs)
    try:
        return json.loads(text, object_pairs_hook=hook)
    except (ValueError, RecursionError) as exc:
        raise CollectorError(f"{what}: not JSON ({str(exc)[:80]})") from None


def capped(items: Sequence[T], limit: int, what: str, warnings: list[str] | None = None) -> list[T]:
    """The first `limit` items; past it, the rest left out and said once in `warnings`."""
    if len(items) <= limit:
        return list(items)
    if warnings is not None:
        warnings.append(f"{what}: {len(items)} of them, more than {limit}; the first {limit} are read")
    return list(items[:limit])
