"""`show stat` (CSV) and `show info` (key: value lines) as HAProxy's management guide documents
them (section 9.1, "CSV format"): the header names the fields, so a field HAProxy adds or a column
an older version lacks changes nothing here. Pure functions: text in, typed rows out."""

from __future__ import annotations

from dataclasses import dataclass

from collectors.base import ParseError

TYPES = {"0": "frontend", "1": "backend", "2": "server", "3": "listener"}


@dataclass(frozen=True)
class StatRow:
    proxy: str  # pxname
    name: str  # svname: FRONTEND, BACKEND, or the server's name
    kind: str  # frontend, backend, server, listener
    status: str  # UP, DOWN, "UP 1/3", NOLB, MAINT, DRAIN, "no check", OPEN, FULL ...
    sessions: int | None = None  # scur
    limit: int | None = None  # slim
    queue: int | None = None  # qcur
    active: int | None = None  # act: servers up (a backend), or 1/0 (a server)
    backup: int | None = None  # bck
    check_status: str = ""  # L4CON, L7STS ...
    check_desc: str = ""  # "Layer4 connection problem"
    last_check: str = ""  # last_chk: "Connection refused", "HTTP status 503"
    responses_5xx: int | None = None  # hrsp_5xx, a counter
    sessions_total: int | None = None  # stot, a counter
    downtime: int | None = None  # seconds DOWN in all, for a server or backend


def _int(value: str, field: str, line: str) -> int | None:
    if value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ParseError(f"show stat: {field} is {value!r}, not a number, in {line[:160]!r}") from None


def parse_stat(text: str) -> list[StatRow]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not lines[0].startswith("# pxname,svname,"):
        first = lines[0][:160] if lines else "nothing"
        raise ParseError(f"show stat: the header line '# pxname,svname,…' expected, got {first!r}")
    header = lines[0][2:].rstrip(",").split(",")
    at = {name: i for i, name in enumerate(header)}
    for needed in ("pxname", "svname", "status", "type"):
        if needed not in at:
            raise ParseError(f"show stat: no {needed} field in the header {lines[0][:160]!r}")
    out = []
    for line in lines[1:]:
        f = line.split(",")
        if len(f) < len(header) - 1:  # the trailing comma is optional
            raise ParseError(f"show stat: {len(f)} fields where the header has {len(header)}: {line[:160]!r}")

        def get(name: str, fields: list[str] = f) -> str:
            i = at.get(name)
            return fields[i] if i is not None and i < len(fields) else ""

        def num(name: str, current: str = line) -> int | None:
            return _int(get(name), name, current)

        kind = TYPES.get(get("type"))
        if kind is None:
            raise ParseError(f"show stat: type {get('type')!r} is none of 0-3 in {line[:160]!r}")
        out.append(StatRow(get("pxname"), get("svname"), kind, get("status"), num("scur"), num("slim"), num("qcur"),
                           num("act"), num("bck"), get("check_status"), get("check_desc"), get("last_chk"),
                           num("hrsp_5xx"), num("stot"), num("downtime")))
    return out


def parse_info(text: str) -> dict[str, str]:
    """`show info`: "Name: value" lines; the version, uptime and connection counts are read from it."""
    out = {}
    for line in text.splitlines():
        if ":" in line:
            key, _, value = line.partition(":")
            out[key.strip()] = value.strip()
    if "Name" not in out and "Version" not in out:
        raise ParseError(f"show info: no Name or Version line in {text[:120]!r}")
    return out
