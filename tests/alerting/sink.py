"""A real HTTP webhook receiver on loopback whose behaviour a test switches: ok, fail, hang."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any


class Sink:
    def __init__(self) -> None:
        self.mode = "ok"
        self.attempts = 0  # every POST, answered or refused
        self.received: list[tuple[str, dict[str, str], bytes]] = []  # (path, headers, body)
        self.release = threading.Event()  # a hanging request waits for this
        self.hanging = threading.Event()  # set while a request hangs
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.attempts += 1
                if outer.mode.startswith("redirect ") and self.path != "/followed":
                    self.send_response(307)  # 307 keeps the method and body: what a follower would re-POST
                    self.send_header("Location", outer.mode.split(" ", 1)[1])
                    self.end_headers()
                    return
                if outer.mode == "hang":
                    outer.hanging.set()
                    outer.release.wait(30)
                if outer.mode != "ok" and not outer.mode.startswith("redirect "):
                    self.send_response(503)
                    self.end_headers()
                    return
                outer.received.append((self.path, dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *a: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def json(self, path: str | None = None) -> list[Any]:
        return [json.loads(b) for p, _, b in list(self.received) if path is None or p == path]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
