"""The Engine API over its unix socket, with httpx (a maintained client; the API is plain HTTP).
Read-only: only GET requests are ever sent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from collectors.base import CollectorError, NoData

if TYPE_CHECKING:
    import httpx

API = "/v1.41"  # Docker 20.10 and later, and Podman's compat API, answer it


class EngineClient:
    def __init__(self, socket: str, timeout: float) -> None:
        self.socket, self.timeout = socket, timeout
        self._client: httpx.Client | None = None

    def __enter__(self) -> EngineClient:
        path = Path(self.socket)
        if not path.exists():
            raise NoData(f"no container engine socket at {self.socket} (Docker or Podman not running here)")
        if not os.access(path, os.R_OK | os.W_OK):
            raise CollectorError(f"{self.socket}: permission denied (add rackpulse's user to the docker group, "
                                 "or point socket at a read-only proxy)")
        # imported here: a host without an engine (an agent on a Pi) never loads httpx (and its CLI's imports)
        import httpx

        self._client = httpx.Client(transport=httpx.HTTPTransport(uds=self.socket), base_url="http://engine",
                                    timeout=self.timeout)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()

    def get(self, path: str) -> bytes:
        import httpx

        assert self._client is not None
        try:
            r = self._client.get(API + path)
        except httpx.TimeoutException:
            raise CollectorError(f"{self.socket}: GET {path} timed out after {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise CollectorError(f"{self.socket}: GET {path}: {exc}") from None
        if r.status_code == 404:
            raise LookupError(path)  # a container removed between the list and its inspect
        if r.status_code >= 400:
            raise CollectorError(f"{self.socket}: GET {path}: HTTP {r.status_code} {r.text[:200]}")
        return r.content
