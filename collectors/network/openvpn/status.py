"""Pure parsers for OpenVPN's status output and management-interface replies.

Format source: openvpn src/openvpn/multi.c ``multi_print_status`` (server: version 1
"OpenVPN CLIENT LIST", version 2 comma- and version 3 tab-separated with HEADER lines
naming the columns, which differ between 2.3 and 2.6) and sig.c ``print_status``
(client / static-key mode: "OpenVPN STATISTICS"). Management replies end in CRLF.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from collectors.base import ParseError


@dataclass(frozen=True, slots=True)
class VpnClient:
    common_name: str
    real_address: str
    virtual_address: str | None
    bytes_received: int
    bytes_sent: int
    connected_since: int | None  # unix time when the status gives it (v2/v3)
    client_id: str | None = None


@dataclass(frozen=True, slots=True)
class VpnStatus:
    mode: str  # "server" | "client"
    version: int  # 1, 2, 3 for server status; 0 for client statistics
    title: str | None
    updated: int | None
    clients: tuple[VpnClient, ...] = ()
    undef_clients: int = 0  # connections that have not finished authentication ("UNDEF")
    stats: dict[str, int] = field(default_factory=dict)  # client mode: TUN/TAP read bytes, ...
    global_stats: dict[str, str] = field(default_factory=dict)

    @property
    def bytes_in(self) -> int:
        return sum(c.bytes_received for c in self.clients) if self.mode == "server" else \
            self.stats.get("TCP/UDP read bytes", 0)

    @property
    def bytes_out(self) -> int:
        return sum(c.bytes_sent for c in self.clients) if self.mode == "server" else \
            self.stats.get("TCP/UDP write bytes", 0)


def parse_status(text: str) -> VpnStatus:
    """Parse a status file (any version) or a management `status N` reply."""
    if "\x00" in text:
        raise ParseError("not an OpenVPN status: contains NUL bytes")
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    # Management replies may carry asynchronous ">CLIENT:..." notifications: not status.
    lines = [ln for ln in lines if ln and not ln.startswith(">")]
    if not lines:
        raise ParseError("OpenVPN status is empty")
    first = lines[0]
    if first == "OpenVPN CLIENT LIST":
        return _parse_v1(lines)
    if first.startswith("TITLE,") or first.startswith("TITLE\t"):
        return _parse_v23(lines, "\t" if first.startswith("TITLE\t") else ",")
    if first == "OpenVPN STATISTICS":
        return _parse_client(lines)
    raise ParseError(f"not an OpenVPN status: first line {first[:100]!r}")


def _need_end(lines: list[str]) -> None:
    if lines[-1] != "END":
        raise ParseError(f"OpenVPN status ends without END (truncated?): last line {lines[-1][:100]!r}")


def _updated(line: str) -> int | None:
    """`Updated,Thu Jun 18 08:12:15 2015` (v1 and client statistics): OpenVPN's local time."""
    try:
        return int(time.mktime(time.strptime(line.partition(",")[2].strip(), "%a %b %d %H:%M:%S %Y")))
    except ValueError:
        return None


def _int(value: str, line: str) -> int:
    if not value.strip().isdigit():
        raise ParseError(f"expected a number, got {value!r} in: {line[:160]!r}")
    return int(value)


def _dedupe(clients: list[VpnClient]) -> tuple[VpnClient, ...]:
    # OpenVPN can list the same connection twice while it re-keys; identical rows count once.
    seen: dict[tuple[str, str, str | None], VpnClient] = {}
    for c in clients:
        seen.setdefault((c.common_name, c.real_address, c.client_id), c)
    return tuple(seen.values())


def _parse_v1(lines: list[str]) -> VpnStatus:
    _need_end(lines)
    updated = None
    clients: list[VpnClient] = []
    routes: dict[str, str] = {}
    section = "head"
    undef = 0
    stats: dict[str, str] = {}
    for line in lines[1:-1]:
        if line.startswith("Updated,"):
            updated = _updated(line)
            continue
        if line == "ROUTING TABLE":
            section = "routes"
            continue
        if line == "GLOBAL STATS":
            section = "global"
            continue
        if line.startswith("Common Name,") or line.startswith("Virtual Address,"):
            section = "clients" if line.startswith("Common Name,") else section
            continue
        parts = line.split(",")
        if section == "clients":
            # Common Name,Real Address,Bytes Received,Bytes Sent,Connected Since
            if len(parts) < 5:
                raise ParseError(f"client line with {len(parts)} fields, expected 5: {line!r}")
            if parts[0] == "UNDEF":
                undef += 1
                continue
            clients.append(VpnClient(parts[0], parts[1], None, _int(parts[2], line), _int(parts[3], line), None))
        elif section == "routes":
            # Virtual Address,Common Name,Real Address,Last Ref
            if len(parts) >= 3:
                routes[parts[2]] = parts[0]
        elif section == "global" and len(parts) >= 2:
            stats[parts[0]] = parts[1]
    clients = [VpnClient(c.common_name, c.real_address, routes.get(c.real_address), c.bytes_received, c.bytes_sent,
                         None) for c in clients]
    return VpnStatus("server", 1, None, updated, _dedupe(clients), undef, global_stats=stats)


def _parse_v23(lines: list[str], sep: str) -> VpnStatus:
    _need_end(lines)
    version = 3 if sep == "\t" else 2
    headers: dict[str, list[str]] = {}
    clients: list[VpnClient] = []
    title = updated = None
    undef = 0
    gstats: dict[str, str] = {}
    for line in lines[:-1]:
        parts = line.split(sep)
        kind = parts[0]
        if kind == "TITLE":
            title = sep.join(parts[1:])
        elif kind == "TIME":
            # TIME,Thu Jun 18 08:12:15 2015,1434608935
            updated = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else None
        elif kind == "HEADER" and len(parts) > 2:
            headers[parts[1]] = parts[2:]
        elif kind == "CLIENT_LIST":
            cols = headers.get("CLIENT_LIST")
            if cols is None:
                raise ParseError(f"CLIENT_LIST before its HEADER line: {line[:160]!r}")
            if len(parts) - 1 < len(cols) - 1:
                raise ParseError(f"CLIENT_LIST with {len(parts) - 1} fields, header has {len(cols)}: {line[:160]!r}")
            row = dict(zip(cols, parts[1:], strict=False))
            if row.get("Common Name") == "UNDEF":
                undef += 1
                continue
            since = row.get("Connected Since (time_t)", "")
            clients.append(VpnClient(
                common_name=row["Common Name"],
                real_address=row.get("Real Address", ""),
                virtual_address=row.get("Virtual Address") or None,
                bytes_received=_int(row.get("Bytes Received", ""), line),
                bytes_sent=_int(row.get("Bytes Sent", ""), line),
                connected_since=int(since) if since.isdigit() else None,
                client_id=row.get("Client ID"),
            ))
        elif kind == "GLOBAL_STATS" and len(parts) >= 3:
            gstats[parts[1]] = parts[2]
        elif kind in ("ROUTING_TABLE", "HEADER"):
            continue
        else:
            raise ParseError(f"unknown line in OpenVPN status: {line[:160]!r}")
    return VpnStatus("server", version, title, updated, _dedupe(clients), undef, global_stats=gstats)


def _parse_client(lines: list[str]) -> VpnStatus:
    _need_end(lines)
    stats: dict[str, int] = {}
    updated = None
    for line in lines[1:-1]:
        if line.startswith("Updated,"):
            updated = _updated(line)
            continue
        key, sep, value = line.rpartition(",")
        if not sep:
            raise ParseError(f"statistics line without a comma: {line[:160]!r}")
        stats[key] = _int(value, line)
    return VpnStatus("client", 0, None, updated, stats=stats)


# SUCCESS: nclients=1,bytesin=7811,bytesout=7667
_LOAD_RE = re.compile(r"^SUCCESS: nclients=(\d+),bytesin=(\d+),bytesout=(\d+)")


def parse_load_stats(reply: str) -> tuple[int, int, int]:
    line = reply.strip().splitlines()[-1].strip() if reply.strip() else ""
    m = _LOAD_RE.match(line)
    if not m:
        raise ParseError(f"unexpected load-stats reply: {line[:160]!r}")
    return int(m[1]), int(m[2]), int(m[3])


def parse_state(reply: str) -> str:
    """`state` -> the state name ("CONNECTED", "RECONNECTING", ...); the reply ends with END."""
    rows = [ln.strip() for ln in reply.splitlines() if ln.strip() and not ln.startswith(">")]
    rows = [r for r in rows if r != "END"]
    if not rows:
        raise ParseError("empty state reply")
    # 1434608935,CONNECTED,SUCCESS,10.8.0.6,127.0.0.1,1194,,
    parts = rows[-1].split(",")
    if len(parts) < 2 or not parts[0].isdigit():
        raise ParseError(f"unexpected state reply: {rows[-1][:160]!r}")
    return parts[1]


def parse_openvpn_config(text: str) -> dict[str, list[str]]:
    """Directives of an OpenVPN config file: {"txqueuelen": ["1000"], "push": ['"sndbuf 393216"'], ...}.

    Repeated directives keep their last value except ``push``, whose values are all kept
    (joined) because each one is a separate option for the clients.
    """
    out: dict[str, list[str]] = {}
    inline: str | None = None  # inside <ca>...</ca>: certificate lines, not directives
    for raw in text.splitlines():
        line = raw.strip()
        if inline is not None:
            if line == f"</{inline}>":
                inline = None
            continue
        if line.startswith("<") and line.endswith(">") and not line.startswith("</"):
            inline = line[1:-1]
            continue
        if not line or line[0] in "#;":
            continue
        key, _, rest = line.partition(" ")
        key = key.lstrip("-").lower()
        if key == "push":
            out.setdefault("push", []).append(rest.strip())
        else:
            out[key] = rest.split()
    return out
