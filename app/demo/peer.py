"""A simulated device of the demo (upsd, ISG) running in a thread on a loopback port."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Callable


class DemoPeer:
    def __init__(self, port: int, stop: Callable[[], None]) -> None:
        self.port = port
        self._stop = stop

    def stop(self) -> None:
        """Shut the server down, close its socket and wait for its thread."""
        self._stop()


def serve_in_thread(server: socketserver.BaseServer, name: str, poll: float = 0.1) -> DemoPeer:
    """A socketserver serving from a daemon thread until the peer is stopped."""
    thread = threading.Thread(target=server.serve_forever, args=(poll,), daemon=True, name=name)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(5)

    return DemoPeer(int(server.server_address[1]), stop)  # type: ignore[index]
