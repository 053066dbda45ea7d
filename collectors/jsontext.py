"""JSON printed by a tool (vtysh, mmcli), read into Python with errors that quote what it printed
instead: "% Unknown command", an error line, a truncated object. Non-finite numbers are read as
collectors.finite reads them."""

from __future__ import annotations

from typing import Any

from collectors import finite
from collectors.base import ParseError


def tool_json(text: str | bytes, what: str, opens: str = "{[") -> Any:
    """The parsed document, or None when the tool printed nothing; ParseError quoting the start of
    the output when it is not JSON opening with one of `opens`."""
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    stripped = raw.strip()
    if not stripped:
        return None
    if stripped[0] not in opens:
        kind = {"{": "a JSON object", "[": "a JSON list"}.get(opens, "JSON")
        raise ParseError(f"{what}: not {kind}: {stripped.splitlines()[0][:160]!r}")
    try:
        return finite.loads(stripped)
    except ValueError as exc:
        raise ParseError(f"{what}: malformed JSON ({exc}): {stripped[:80]!r}") from None
