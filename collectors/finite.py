"""Numbers a page, a rule or a database can hold: finite, and within ±LIMIT.

A UPS that says `battery.runtime: inf`, a JSON answer with `1e400` (Python reads it as
infinity) or `NaN` must not reach a page filter, `int()` or a rollup's sum. Every entrance uses
this module: text parsers read numbers with `parse_float` (a non-finite one is unreadable, so
the value is unknown), tool JSON is read with `loads` (a non-finite number becomes null), and
the scheduler, the agent ingest and a restart pass every state through `clean` (what is left
becomes None: "unknown", never an error three layers further on).
"""

from __future__ import annotations

import json
import math
from typing import Any

# Far beyond any counter, size or temperature a host has (a quettabyte is 1e30 bytes); the
# agent batch format caps sample values at the same figure.
LIMIT = 1e30
INT_LIMIT = 2**63  # SQL integer columns are 64-bit


def is_sane(x: float) -> bool:
    """Whether x is a number rackpulse keeps: finite and within ±LIMIT."""
    return math.isfinite(x) and -LIMIT <= x <= LIMIT


def parse_float(text: str) -> float:
    """float(), refusing what it would accept but no page can show: "inf", "nan", "1e400"."""
    value = float(text)
    if not is_sane(value):
        raise ValueError(f"{text.strip()[:40]!r} is not a finite number")
    return value


def _json_float(text: str) -> float | None:
    value = float(text)
    return value if is_sane(value) else None


def _json_int(text: str) -> int | float | None:
    if len(text) > 20:  # int() of a 100,000-digit literal is slow, and no tool counts that high
        return None
    value = int(text)
    return value if -INT_LIMIT <= value <= INT_LIMIT else None


# No tool or API a plug-in reads nests deeper than a dozen levels.
MAX_DEPTH = 64


class TooDeep(ValueError):
    """JSON nested past MAX_DEPTH: refused before parsing, never a RecursionError."""


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads for a tool's answer: NaN, Infinity, -Infinity, 1e400 and integers beyond
    64 bits become null (the value is unknown; the rest of the answer is read as usual). Nesting
    deeper than `max_depth` is TooDeep (a ValueError), checked in one pass before parsing: JSON
    nested 200,000 deep raised an uncaught RecursionError."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if depth(text, max_depth) > max_depth:
        raise TooDeep(f"JSON nested deeper than {max_depth} levels; not read")
    try:
        return json.loads(text, parse_constant=lambda _: None, parse_float=_json_float, parse_int=_json_int)
    except RecursionError:  # a parser's own limit, in case: still only a bad answer
        raise TooDeep("JSON nested too deep to read") from None


def depth(text: str, limit: int = MAX_DEPTH) -> int:
    """The deepest nesting of [ and { outside strings, up to just past `limit`. A document with
    fewer brackets than the limit cannot be deeper, and is not scanned."""
    opens = text.count("[") + text.count("{")
    if opens <= limit:
        return opens
    level = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            level += 1
            if level > deepest:
                deepest = level
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            level -= 1
    return deepest


def _bad(x: Any) -> bool:
    if isinstance(x, float):
        return not is_sane(x)
    return isinstance(x, int) and not isinstance(x, bool) and not -INT_LIMIT <= x <= INT_LIMIT


def count_bad(obj: Any) -> int:
    """How many numbers inside a JSON-like value are not finite or beyond the limits."""
    if isinstance(obj, dict):
        return sum(count_bad(v) for v in obj.values())
    if isinstance(obj, list | tuple):
        return sum(count_bad(v) for v in obj)
    return 1 if _bad(obj) else 0


def clean(obj: Any) -> tuple[Any, int]:
    """obj with every bad number replaced by None, and how many there were. The same object
    comes back when nothing was bad (a state is walked every run: no copy in the usual case)."""
    bad = count_bad(obj)
    return (_replace(obj), bad) if bad else (obj, 0)


def _replace(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _replace(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_replace(v) for v in obj]
    return None if _bad(obj) else obj
