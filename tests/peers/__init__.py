"""Real peers the tests start as their own child processes, and stop."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterable
from typing import Any

# Simulated devices the demo app of a test started (app.demo_peer.DemoPeer); conftest stops them.
DEMO_PEERS: list[Any] = []


def free_port() -> int:
    """A loopback port free right now, for a peer or server the test is about to start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_all(procs: Iterable[subprocess.Popen[bytes]], grace: float = 10) -> None:
    """TERM every child, then wait for each; KILL the ones that outlive the grace period."""
    procs = list(procs)
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
