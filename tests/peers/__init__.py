"""Real peers the tests start as their own child processes, and stop."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

# Simulated devices the demo app of a test started (demo.peer.DemoPeer); conftest stops them.
DEMO_PEERS: list[Any] = []


def free_port() -> int:
    """A loopback port free right now, for a peer or server the test is about to start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    """Whether some socket listens on this TCP port, read from /proc/net/tcp without connecting.

    A peer that takes each connection as a client (iperf3 runs a test for it) is upset by a
    readiness probe that connects and hangs up: under load its real client then came while the
    server was still tearing the probe down and was reset."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: TCP_LISTEN
                    return True
    return False


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


class Peer(Protocol):
    def up(self) -> None: ...
    def down(self) -> None: ...


P = TypeVar("P", bound=Peer)


@contextlib.contextmanager
def running(factory: Callable[[Path], P], name: str) -> Iterator[P]:
    """A peer up in a fresh folder until the block ends, then down and its folder removed.
    Not under pytest's tmp_path: daemons that drop to their own user (frr, nut) cannot enter it."""
    base = Path(tempfile.mkdtemp(prefix=f"rackpulse-{name}-"))
    peer = factory(base)
    try:
        peer.up()
        yield peer
    finally:
        peer.down()
        shutil.rmtree(base, ignore_errors=True)
