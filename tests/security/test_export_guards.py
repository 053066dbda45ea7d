"""Exports facing a hostile or broken peer: a remote-write receiver that trickles its answer a
byte at a time fails at the deadline and says so; credentials in its URL never reach the log;
an MQTT broker that is not there or refuses the password is logged (a real Mosquitto)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

import pytest

from app.config import MqttExportConfig
from app.export.mqtt import MqttExport
from tests.peers import free_port
from tests.test_mqtt_export import Broker
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


def _logged(caplog: pytest.LogCaptureFixture, words: str, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if any(words in r.getMessage() for r in caplog.records):
            return True
        time.sleep(0.1)
    return False


def test_a_broker_that_refuses_the_password_or_is_not_there_is_logged(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "rackpulse")
    # Nothing listening: one warning for the outage (paho retries 1 s doubling, silently before).
    nobody = MqttExport(MqttExportConfig(url=f"mqtt://127.0.0.1:{free_port()}"), "0.1.0")
    nobody.start("nas")
    try:
        assert _logged(caplog, "cannot be reached; retrying", 15)
    finally:
        nobody.client.loop_stop()
    b = Broker(tmp_path, free_port(), password="s3cret")
    b.start()
    try:
        pw = tmp_path / "mqtt.pw"
        pw.write_text("wrong\n")
        e = MqttExport(MqttExportConfig(url=f"mqtt://127.0.0.1:{b.port}", username="rackpulse", password_file=pw),
                       "0.1.0")
        e.start("nas")
        try:
            assert _logged(caplog, "refused the connection", 15)
            assert not any("wrong" in r.getMessage() for r in caplog.records)
        finally:
            e.client.loop_stop()
    finally:
        b.stop()
