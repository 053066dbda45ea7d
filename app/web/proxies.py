"""Who a request came from when reverse proxies stand in front: web.trusted_proxies as networks,
the client address worked out from X-Forwarded-For only past those, and the header that names
a proxy's signed-in user. Read by the guard (app/web/guard.py) and held by the Site."""

from __future__ import annotations

import ipaddress
import logging
import time

log = logging.getLogger("rackpulse.web")


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class Proxies:
    """web.trusted_proxies as networks; which header names a user; warnings rate-limited."""

    def __init__(self, nets: list[str], header: str) -> None:
        self.nets = [ipaddress.ip_network(n, strict=False) for n in nets]
        self.header = header
        self._warned: dict[str, float] = {}

    def trusted(self, addr: str) -> bool:
        try:
            ip = ipaddress.ip_address(addr)
        except ValueError:
            return False
        return any(ip in n for n in self.nets)

    def client(self, peer: str, forwarded: str | None) -> str:
        """The address a request came from: the socket's peer, unless that peer is a trusted proxy;
        then the right-most address of X-Forwarded-For that is not itself a trusted proxy (each proxy
        appends the address it was called from, so everything left of the first untrusted hop may be
        made up by the client). uvicorn's own rewriting is off: it trusts 127.0.0.1 by default, which
        let any local process forge its address and, with a proxy login header, its user."""
        if not forwarded or not self.trusted(peer):
            return peer
        hops = [h.strip() for h in forwarded.split(",") if h.strip()]
        for hop in reversed(hops):
            if not self.trusted(hop):
                return hop if _is_address(hop) else peer
        return hops[0] if hops and _is_address(hops[0]) else peer  # a chain of trusted proxies only

    def ignored(self, addr: str, user: str) -> None:
        now = time.monotonic()
        if now - self._warned.get(addr, -3600.0) >= 600:  # once per address per 10 minutes
            self._warned[addr] = now
            log.warning("proxy login header %s (user %r) from %s ignored: not in web.trusted_proxies",
                        self.header, user[:60], addr)
