"""Exports facing a hostile or broken peer: a remote-write receiver that trickles its answer a
byte at a time fails at the deadline and says so; credentials in its URL never reach the log."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

import pytest

from tests.test_remote_write import sender, store, write


class Trickler:
    """Accepts, reads the request, then answers one byte every 0.2 s for at most 60 s."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.5)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(1 << 20)
            deadline = time.monotonic() + 60
            for byte in (b"HTTP/1.1 204 No Content\r\n" * 100):
                if self.stop.is_set() or time.monotonic() > deadline:
                    return
                try:
                    conn.send(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.2)

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def test_a_receiver_that_trickles_its_answer_fails_at_the_deadline_and_is_logged(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    peer = Trickler()
    try:
        st = store(tmp_path)
        now = int(time.time())
        for i in range(6):
            write(st, now - 600 + i * 10, 30.0)
        rw = sender(f"http://rackpulse:pw-XYZ@127.0.0.1:{peer.port}/api/v1/write", st, timeout=1.0)
        t0 = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="rackpulse"):
            assert rw.tick(now=now + 20) == 0
        took = time.monotonic() - t0
        # One deadline for the whole exchange (1 s): a per-read timeout would wait 60 s here.
        assert took < 30, took
        assert rw.stats.failures == 1 and "no complete answer within 1s" in (rw.stats.last_error or "")
        assert any("remote write to" in r.getMessage() and "no complete answer" in r.getMessage()
                   for r in caplog.records)
        assert not any("pw-XYZ" in r.getMessage() for r in caplog.records)
    finally:
        peer.close()
