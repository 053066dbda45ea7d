"""Log lines that stay one line each: whatever a device, an agent or a login form sends ends up
in messages, and a newline in it must not forge a second log line."""

from __future__ import annotations

import logging
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def escape(text: str) -> str:
    """Newlines and other control characters as visible escapes (\\n, \\x1b)."""
    return _CONTROL.sub(lambda m: {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(m.group(), f"\\x{ord(m.group()):02x}"),
                        text)


class OneLineFormatter(logging.Formatter):
    """The message escaped; a traceback (our own, not input) keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        record.message = escape(record.message)
        return super().formatMessage(record)


def setup(level: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
