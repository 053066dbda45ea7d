"""Log lines that stay one line each: whatever a device, an agent or a login form sends ends up
in messages, and a newline in it must not forge a second log line."""

from __future__ import annotations

import logging
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# user:password@ in any URL, and the query parameters that carry a credential by their name.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@]*):([^/\s@]*)@")
_QUERY_SECRET = re.compile(r"(?i)([?&](?:token|access_token|api_?key|key|password|passwd|secret|auth)=)[^&#\s]+")


def redact(text: str) -> str:
    """Credentials inside URLs replaced by ***: `https://u:pw@host/?token=x` -> `https://u:***@host/?token=***`."""
    return _QUERY_SECRET.sub(r"\1***", _USERINFO.sub(r"\1\2:***@", text))


def escape(text: str) -> str:
    """Newlines and other control characters as visible escapes (\\n, \\x1b)."""
    return _CONTROL.sub(lambda m: {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(m.group(), f"\\x{ord(m.group()):02x}"),
                        text)


class OneLineFormatter(logging.Formatter):
    """The message escaped; a traceback (our own, not input) keeps its lines. Credentials in
    URLs are redacted from the whole line, a library's message and a traceback included (httpx
    and paho name the URL they failed on)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        record.message = escape(record.message)
        return super().formatMessage(record)

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def setup(level: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
