"""BFD sessions from ``vtysh -c 'show bfd peers json'`` and ``... counters json`` (FRR bfdd).

Format source: FRR bfdd/bfdd_vty.c (``_display_peer_json``, ``__display_peer_counters_json``):
a list of sessions, each with "peer", "local", "vrf", "interface", "multihop", "id" and
"remote-id" (the discriminators), "status" (up, down, init, shutdown, adm-down), "uptime" while
up or "downtime" while not (seconds), "diagnostic" and "remote-diagnostic" in words ("ok",
"control detection time expired", "neighbor signaled session down" ...). The counters list has
"session-up" and "session-down" per session: the down count is the flap count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collectors.base import ParseError
from collectors.jsontext import tool_json


@dataclass(frozen=True, slots=True)
class BfdSession:
    peer: str
    local: str
    vrf: str
    interface: str
    multihop: bool
    status: str  # up, down, init, shutdown, adm-down
    uptime_seconds: float | None  # while up
    downtime_seconds: float | None  # while not
    diagnostic: str
    remote_diagnostic: str
    local_discriminator: int | None
    remote_discriminator: int | None
    flaps: int | None = None  # session-down events (from the counters)

    @property
    def key(self) -> str:
        # A session is one per (vrf, peer, local, interface, multihop); the page names it by the
        # first two, and by the interface for a link-local peer that repeats on every link.
        return f"{self.vrf}/{self.peer}" + (f"%{self.interface}" if self.interface else "")

    @property
    def up(self) -> bool:
        return self.status == "up"

    @property
    def admin_down(self) -> bool:
        return self.status in ("shutdown", "adm-down")


def _json_list(text: str | bytes, what: str) -> list[Any]:
    # Asked for a document opening with "[": it parses to a list or is refused (no object gets by).
    return tool_json(text, what, "[") or []


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def parse_bfd_peers(text: str | bytes, counters: str | bytes = b"") -> list[BfdSession]:
    """`show bfd peers json` (and, when given, `show bfd peers counters json` for the flaps)."""
    flaps: dict[tuple[str, str, str, str], int] = {}
    for c in _json_list(counters, "show bfd peers counters json"):
        if isinstance(c, dict) and _int(c.get("session-down")) is not None:
            flaps[(_str(c.get("vrf")) or "default", _str(c.get("peer")), _str(c.get("local")),
                   _str(c.get("interface")))] = int(c["session-down"])
    out = []
    for i, s in enumerate(_json_list(text, "show bfd peers json")):
        if not isinstance(s, dict) or not isinstance(s.get("peer"), str):
            raise ParseError(f"show bfd peers json: session {i} has no peer address: {str(s)[:120]!r}")
        status = _str(s.get("status")) or "unknown"
        vrf = _str(s.get("vrf")) or "default"
        local, iface = _str(s.get("local")), _str(s.get("interface"))
        out.append(BfdSession(
            peer=s["peer"], local=local, vrf=vrf, interface=iface, multihop=s.get("multihop") is True,
            status=status,
            uptime_seconds=_num(s.get("uptime")) if status == "up" else None,
            downtime_seconds=_num(s.get("downtime")) if status != "up" else None,
            diagnostic=_str(s.get("diagnostic")), remote_diagnostic=_str(s.get("remote-diagnostic")),
            local_discriminator=_int(s.get("id")), remote_discriminator=_int(s.get("remote-id")),
            flaps=flaps.get((vrf, s["peer"], local, iface)),
        ))
    return out
