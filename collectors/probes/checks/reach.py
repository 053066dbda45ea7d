"""HTTP and TCP checks, and the expiry of the certificate a TLS server shows.

Each check returns a `Reach` and never raises: a refused connection, a timeout, a wrong status
or a bad certificate is a failed probe with the reason in words, not a collector error."""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

BODY_LIMIT = 1024 * 1024  # expect_text is looked for in the first MB


@dataclass(frozen=True)
class Reach:
    ok: bool
    seconds: float
    error: str | None = None
    status: int | None = None
    cert_expires: float | None = None  # the certificate's notAfter, Unix time
    cert_subject: str | None = None


def cert_expiry(der: bytes) -> tuple[float, str]:
    """(notAfter as Unix time, subject) of a DER certificate."""
    from cryptography import x509  # only for a TLS probe: an agent without one never loads it

    cert = x509.load_der_x509_certificate(der)
    return cert.not_valid_after_utc.timestamp(), cert.subject.rfc4514_string()


def tls_context(verify: bool) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if not verify:  # a self-signed home-lab service: still read its certificate's expiry
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def _peer_cert(sock: socket.socket) -> tuple[float | None, str | None]:
    der = sock.getpeercert(binary_form=True) if isinstance(sock, ssl.SSLSocket) else None
    if not der:
        return None, None
    return cert_expiry(der)


def _why(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate not trusted: {exc.verify_message}"
    if isinstance(exc, TimeoutError):  # socket.timeout is the same class since 3.10
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"name not resolved: {exc.strerror}"
    return f"{type(exc).__name__}: {exc}"


def check_http(url: str, expect_status: int, expect_text: str | None, timeout: float, verify_tls: bool) -> Reach:
    parts = urlsplit(url)
    t0 = time.perf_counter()
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=timeout,
                                           context=tls_context(verify_tls))
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request("GET", path, headers={"User-Agent": "rackpulse-probe", "Accept": "*/*"})
        # Read the certificate now: an answer that closes the connection takes the socket with it.
        expires, subject = _peer_cert(conn.sock) if conn.sock else (None, None)
        resp = conn.getresponse()
        body = resp.read(BODY_LIMIT) if expect_text is not None else b""
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return Reach(False, time.perf_counter() - t0, _why(exc))
    finally:
        conn.close()
    seconds = time.perf_counter() - t0
    if resp.status != expect_status:
        return Reach(False, seconds, f"status {resp.status} {resp.reason}, expected {expect_status}", resp.status,
                     expires, subject)
    if expect_text is not None and expect_text.encode() not in body:
        return Reach(False, seconds, f"the page does not contain {expect_text!r}", resp.status, expires, subject)
    return Reach(True, seconds, None, resp.status, expires, subject)


def check_tcp(host: str, port: int, tls: bool, timeout: float, verify_tls: bool) -> Reach:
    t0 = time.perf_counter()
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            if not tls:
                return Reach(True, time.perf_counter() - t0)
            with tls_context(verify_tls).wrap_socket(raw, server_hostname=host) as sock:
                expires, subject = _peer_cert(sock)
                return Reach(True, time.perf_counter() - t0, None, None, expires, subject)
    except (OSError, ValueError) as exc:
        return Reach(False, time.perf_counter() - t0, _why(exc))
