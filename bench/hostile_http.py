"""A hostile HTTPS API for bench/hostile.py: every GET answered with one body (100,000 guests, 50 MB,
JSON nested 200,000 deep, counts of 10**12), or, for "trickle", a byte every 0.2 s that never ends.
In a thread of the bench's own process, on a free loopback port, with the demo's self-signed
certificate (app/demo/pve_api.py)."""

from __future__ import annotations

import http.server
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.demo.pve_api import make_certificate


class HostileApi:
    def __init__(self, kind: str, body: Callable[[], bytes] | None) -> None:
        self.kind, self.stopping = kind, threading.Event()
        payload = body() if body else b""
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - the standard library's name
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if outer.kind == "trickle":
                    self.send_header("Content-Length", str(10**9))
                    self.end_headers()
                    while not outer.stopping.is_set():
                        try:
                            self.wfile.write(b"{")
                            self.wfile.flush()
                        except OSError:
                            return
                        time.sleep(0.2)
                    return
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

        certs = Path(tempfile.mkdtemp(prefix="rackpulse-hostile-certs-"))
        cert, key = make_certificate(certs)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.url = f"https://127.0.0.1:{self.port}"

    def start(self) -> None:
        threading.Thread(target=self.server.serve_forever, name="hostile-api", daemon=True).start()

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
