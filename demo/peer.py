"""A simulated device of the demo (upsd, ISG) running in a thread on a loopback port."""

from __future__ import annotations

from collections.abc import Callable


class DemoPeer:
    def __init__(self, port: int, stop: Callable[[], None]) -> None:
        self.port = port
        self._stop = stop

    def stop(self) -> None:
        """Shut the server down, close its socket and wait for its thread."""
        self._stop()
