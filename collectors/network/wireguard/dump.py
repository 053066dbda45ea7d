"""`wg show all dump`, as wg(8) documents it: tab-separated lines. For each interface a line
`interface private-key public-key listen-port fwmark`, then one per peer: `interface public-key
preshared-key endpoint allowed-ips latest-handshake transfer-rx transfer-tx persistent-keepalive`.
A value not set is "(none)" (endpoint, preshared key, allowed IPs) or "off" (fwmark, keepalive);
latest-handshake is Unix seconds, 0 for never. The private and preshared keys are never kept."""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.base import ParseError


@dataclass
class WgPeer:
    interface: str
    public_key: str
    endpoint: str | None
    allowed_ips: list[str]
    latest_handshake: float | None  # Unix seconds; None: never
    rx_bytes: int
    tx_bytes: int
    keepalive: int | None  # seconds; None: off


@dataclass
class WgInterface:
    name: str
    public_key: str
    listen_port: int | None
    peers: list[WgPeer] = field(default_factory=list)


def _int(value: str, line: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ParseError(f"wg dump: {what} {value!r} is not a number in line {line!r}") from None


def parse_dump(text: str) -> list[WgInterface]:
    """The interfaces and their peers; ParseError quoting the line for one that has neither 5 nor 9 fields."""
    out: dict[str, WgInterface] = {}
    for raw in text.splitlines():
        if not raw.strip():
            continue
        cols = raw.split("\t")
        shown = "\t".join(cols[:1] + ["<key>"] * (len(cols) > 1) + cols[3:]) if len(cols) == 5 else raw
        if len(cols) == 5:  # the interface: never keep (or quote) its private key
            port = None if cols[3] in ("0", "(none)") else _int(cols[3], shown, "listen-port")
            out[cols[0]] = WgInterface(cols[0], cols[2], port)
        elif len(cols) == 9:
            name, key, _psk, endpoint, ips, handshake, rx, tx, keepalive = cols
            line = "\t".join([name, key, "<psk>", endpoint, ips, handshake, rx, tx, keepalive])
            iface = out.setdefault(name, WgInterface(name, "", None))
            hs = _int(handshake, line, "latest-handshake")
            iface.peers.append(WgPeer(
                name, key, None if endpoint == "(none)" else endpoint,
                [] if ips == "(none)" else [ip for ip in ips.split(",") if ip],
                float(hs) if hs > 0 else None, _int(rx, line, "transfer-rx"), _int(tx, line, "transfer-tx"),
                None if keepalive == "off" else _int(keepalive, line, "persistent-keepalive")))
        else:
            raise ParseError(f"wg dump: {len(cols)} tab-separated fields, expected 5 (an interface) or 9 (a peer), "
                             f"in line {shown[:200]!r}")
    return list(out.values())
