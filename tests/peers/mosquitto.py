"""A real Mosquitto broker on a free loopback port, as a child process of the test."""

from __future__ import annotations

import getpass
import socket
import subprocess
import time
from pathlib import Path


class Broker:
    def __init__(self, folder: Path, port: int, password: str | None = None) -> None:
        self.folder, self.port, self.password = folder, port, password
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # As root, mosquitto drops to its own user and could no longer read the test's files.
        conf = [f"listener {self.port} 127.0.0.1", "persistence false", f"user {getpass.getuser()}"]
        if self.password:
            pw = self.folder / "passwd"
            pw.write_text("")
            subprocess.run(["mosquitto_passwd", "-b", str(pw), "rackpulse", self.password], check=True)
            conf += ["allow_anonymous false", f"password_file {pw}"]
        else:
            conf.append("allow_anonymous true")
        (self.folder / "mosquitto.conf").write_text("\n".join(conf) + "\n")
        self.proc = subprocess.Popen(["mosquitto", "-c", str(self.folder / "mosquitto.conf")],
                                     stdout=subprocess.DEVNULL, stderr=open(self.folder / "mosquitto.log", "ab"))  # noqa: SIM115
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"mosquitto did not start: {(self.folder / 'mosquitto.log').read_text()[-500:]}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

