"""A read-only client for the Proxmox VE and Proxmox Backup Server APIs: GET with an API token.

The standard library's http.client rather than a client library: a pinned certificate must be
checked after the TLS handshake and *before* the request, so that the token never reaches a
server that is not the one pinned; http.client gives the socket between the two."""

from __future__ import annotations

import hashlib
import http.client
import logging
import re
import ssl
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit

from pydantic import Field, SecretStr, field_validator

from collectors.base import CollectorError
from collectors.bounded import BoundExceeded, loads, read_body
from collectors.config import CollectorBase, secret_value

# The privilege a 403 names, for its words: PVE says "Permission check failed (/nodes/pve1,
# Sys.Audit)"; PBS only "permission check failed".
S = TypeVar("S")
DENIED = re.compile(r"\((?P<path>/[^,]*), (?P<priv>[A-Za-z.]+)\)")


log = logging.getLogger("collectors.proxmoxapi")
_SAID_CAPPED: set[str] = set()


class ApiError(Exception):
    """The API could not be read: unreachable, a refused certificate, a wrong token, a 5xx."""


class Denied(ApiError):
    """403: the token lacks a privilege. `privilege` and `on` when the server said which."""

    def __init__(self, path: str, reason: str) -> None:
        m = DENIED.search(reason)
        self.path, self.reason = path, reason
        self.privilege: str | None = m["priv"] if m else None
        self.on: str | None = m["path"] if m else None
        super().__init__(f"{path}: {reason}")


def fingerprint_of(der: bytes) -> str:
    """A certificate's SHA-256 as the Proxmox pages show it: AA:BB:..."""
    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


class Api:
    """One API (a PVE node, a PBS) for one collector run: a keep-alive connection, GET only."""

    def __init__(self, url: str, authorization: str, timeout: float, ca_file: Path | None = None,
                 fingerprint: str | None = None, verify: bool = True, max_items: int = 20_000) -> None:
        self.max_items = max_items
        u = urlsplit(url)
        self.host, self.port, self.prefix = u.hostname or "", u.port or 443, u.path.rstrip("/")
        self.authorization, self.timeout, self.pin = authorization, timeout, fingerprint
        if fingerprint or not verify:
            # pinned: the fingerprint is the check (the usual self-signed certificate has no CA to trust)
            self.context = ssl.create_default_context()
            self.context.check_hostname = False
            self.context.verify_mode = ssl.CERT_NONE
        else:
            self.context = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
        self._conn: http.client.HTTPSConnection | None = None

    def _connect(self) -> http.client.HTTPSConnection:
        if self._conn is not None and self._conn.sock is not None:
            return self._conn
        conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self.context)
        where = f"{self.host}:{self.port}"
        try:
            conn.connect()
        except ssl.SSLCertVerificationError as exc:
            conn.close()
            raise ApiError(f"{where}: certificate not trusted ({exc.verify_message}): set ca_file to the CA "
                           f"that signed it (a PVE cluster's /etc/pve/pve-root-ca.pem) or pin its fingerprint") from None
        except TimeoutError:
            conn.close()
            raise ApiError(f"{where}: no answer within {self.timeout:g}s") from None
        except (OSError, ssl.SSLError) as exc:
            conn.close()
            raise ApiError(f"{where} unreachable: {exc.strerror or exc}") from None
        if self.pin:
            der = conn.sock.getpeercert(binary_form=True) if conn.sock else None
            got = hashlib.sha256(der or b"").hexdigest()
            if got != self.pin:
                conn.close()
                raise ApiError(f"{where}: certificate {fingerprint_of(der or b'')} does not match the pinned "
                               f"fingerprint: refused, the token was not sent")
        self._conn = conn
        return conn

    def get(self, path: str, **params: object) -> Any:  # Any: the API's JSON "data", read by the caller
        """GET `path` (under /api2/json) and return its "data"."""
        target = f"{self.prefix}/api2/json{quote(path)}" + (f"?{urlencode(params)}" if params else "")
        for attempt in (1, 2):
            conn = self._connect()
            try:
                conn.request("GET", target, headers={"Authorization": self.authorization, "Accept": "application/json"})
                resp = conn.getresponse()
                body = read_body(resp, f"GET {path}", self.timeout)
                break
            except BoundExceeded as exc:
                self.close()
                raise ApiError(str(exc)) from None
            except TimeoutError:
                self.close()
                raise ApiError(f"GET {path}: no answer within {self.timeout:g}s") from None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self.close()  # an idle keep-alive connection the server closed: once more
                if attempt == 2:
                    raise ApiError(f"GET {path}: {exc.__class__.__name__}") from None
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                raise ApiError(f"GET {path}: {exc.__class__.__name__}: {exc}") from None
        if resp.status == 401:
            raise ApiError(f"GET {path}: 401 {resp.reason}: the token id or secret is wrong, or the token "
                           f"expired")
        if resp.status == 403:
            raise Denied(path, resp.reason)
        if resp.status != 200:
            raise ApiError(f"GET {path}: HTTP {resp.status} {resp.reason}")
        try:
            # Objects bounded before they are built (100,000 guests parsed whole were +77 MB): a guest
            # is one or two of them (its backup's verification), so an answer a little past max_items
            # is still read, and capped to its first max_items below.
            data = loads(body, f"GET {path}", max_objects=3 * self.max_items + 1000)["data"]
            if isinstance(data, list) and len(data) > self.max_items:
                if path not in _SAID_CAPPED:  # once per path and process: it says so every run otherwise
                    _SAID_CAPPED.add(path)
                    log.warning("GET %s: %d items, more than max_items (%d): the first %d are read", path, len(data),
                                self.max_items, self.max_items)
                data = data[: self.max_items]
            return data
        except CollectorError as exc:
            raise ApiError(str(exc)) from None
        except (KeyError, TypeError):
            raise ApiError(f"GET {path}: not the API's JSON ({body[:80]!r})") from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class ApiTokenConfig(CollectorBase):
    """What the Proxmox VE and Backup Server sections share: where, the token, and how the
    server's certificate is checked."""

    # The server: https://HOST:PORT (8006 for Proxmox VE, 8007 for a Backup Server). Empty: not configured.
    url: str = ""
    # USER@REALM!TOKENID
    token_id: str = ""
    # The token's secret inline, or (better) in a file readable only by rackpulse.
    token_secret: SecretStr | None = None
    token_secret_file: Path | None = None
    # The certificate is checked against the system's CAs, or against `ca_file`, or pinned by its
    # SHA-256 `fingerprint`. verify = false checks nothing, and the page says so.
    ca_file: Path | None = None
    fingerprint: str | None = None
    verify: bool = True
    # The most items of one list an answer may hold (guests and storages of /cluster/resources, a
    # datastore's snapshots): past it the first ones are read and the rest said once in the log
    # (100,000 guests took 1.6 GB in one collection). Each answer is also capped at 16 MiB.
    max_items: Annotated[int, Field(ge=1)] = 20_000

    @field_validator("url")
    @classmethod
    def _https(cls, v: str) -> str:
        if v and not re.fullmatch(r"https://[^/\s]+(:\d+)?/?", v):
            raise ValueError(f"{v!r}: give the server as https://HOST:PORT (the API speaks only HTTPS)")
        return v.rstrip("/")

    @field_validator("token_id")
    @classmethod
    def _token_id(cls, v: str) -> str:
        if v and not re.fullmatch(r"[^@\s!]+@[^@\s!]+![A-Za-z][A-Za-z0-9._-]*", v):
            raise ValueError(f"{v!r}: a token id reads USER@REALM!TOKENID, e.g. monitor@pve!rackpulse")
        return v

    @field_validator("fingerprint")
    @classmethod
    def _fingerprint(cls, v: str | None) -> str | None:
        if v is None:
            return None
        hexed = v.replace(":", "").lower()
        if not re.fullmatch(r"[0-9a-f]{64}", hexed):
            raise ValueError("fingerprint: the certificate's SHA-256, 64 hex digits (colons allowed)")
        return hexed

    def tls_words(self) -> str:
        """How the certificate is checked, for the page."""
        if self.fingerprint:
            return "certificate pinned by its SHA-256 fingerprint"
        if not self.verify:
            return "certificate NOT verified (verify = false)"
        return f"certificate verified against {self.ca_file}" if self.ca_file else "certificate verified against the system's CAs"

    def open(self, scheme: str, separator: str) -> Api:
        """The API with this token: `scheme` PVEAPIToken (ID=SECRET) or PBSAPIToken (ID:SECRET)."""
        if not self.token_id:
            raise CollectorError(f"{self.__class__.__name__}: set token_id (USER@REALM!TOKENID) and token_secret_file")
        try:
            secret = secret_value(self.token_secret, self.token_secret_file)
        except OSError as exc:
            raise CollectorError(f"token_secret_file: {exc.strerror}: {self.token_secret_file}") from None
        if not secret:
            raise CollectorError("no token secret: set token_secret_file (or token_secret)")
        return Api(self.url, f"{scheme}={self.token_id}{separator}{secret}", self.command_timeout, self.ca_file,
                   self.fingerprint, self.verify, self.max_items)

    def __repr__(self) -> str:  # the secret is never shown, in logs or errors
        return f"{self.__class__.__name__}({self.url or 'not configured'}, token={self.token_id!r})"


def denied_words(exc: Denied, token_id: str, grant: str) -> str:
    """What the token may not read, the privilege it lacks (when the server said) and how to grant it."""
    lacks = f"lacks {exc.privilege} on {exc.on}" if exc.privilege else f"was refused ({exc.reason})"
    return f"the token {token_id} {lacks}, so {exc.path} cannot be read: {grant}"


def age(seconds: float) -> str:
    """An age in words, as both Proxmox plug-ins say it: "40 min", "5 h", "3 days"."""
    if seconds < 3600:
        return f"{max(0, int(seconds // 60))} min"
    if seconds < 48 * 3600:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"


class ApiFormatError(ValueError):
    """An answer that is not what the API documents; the message quotes the item."""


def items(data: Any, what: str) -> list[Mapping[str, Any]]:
    """A list answer's objects, or the error quoting what came instead."""
    if not isinstance(data, list) or not all(isinstance(d, Mapping) for d in data):
        raise ApiFormatError(f"{what}: expected a list of objects, got {str(data)[:120]!r}")
    return data


def number(d: Mapping[str, Any], key: str) -> float | None:
    """A field as a number; None when absent; the error quoting the item when it is not one."""
    v = d.get(key)
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        raise ApiFormatError(f"{key}={v!r} is not a number in {dict(d)!r:.200}") from None


class Reader:
    """One collector run's reads. A part the token may not read (403) is said once, in words
    naming what it lacks and how to grant it, and left out; `soft` also leaves out a part a
    server cannot answer for now (a node that is away answers 5xx for its own parts)."""

    def __init__(self, api: Api, token_id: str, grant: str) -> None:
        self.api, self.token_id, self.grant = api, token_id, grant
        self.denied: list[str] = []
        self.missed: list[str] = []  # the paths this run could not read (refused, or not answered)

    def __call__(self, path: str, default: Any, **params: object) -> Any:  # Any: the API's JSON
        try:
            return self.api.get(path, **params)
        except Denied as exc:
            said = denied_words(exc, self.token_id, self.grant.format(token=self.token_id))
            if said not in self.denied:
                self.denied.append(said)
            self.missed.append(path)
            return default

    def soft(self, path: str, default: Any, **params: object) -> Any:
        try:
            return self(path, default, **params)
        except ApiError:
            self.missed.append(path)
            return default


def read_state(cfg: ApiTokenConfig, header: tuple[str, str], product: str, grant: str,
               read: Callable[[Reader], S]) -> S:
    """Open the API with the token (`header`: the scheme and what joins id and secret), read, close;
    anything the server or its answers make impossible is one CollectorError naming the server."""
    api = cfg.open(*header)
    try:
        return read(Reader(api, cfg.token_id, grant))
    except (ApiError, ApiFormatError) as exc:
        raise CollectorError(f"{product} {cfg.url}: {exc}") from None
    finally:
        api.close()
