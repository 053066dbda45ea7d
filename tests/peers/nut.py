"""A real NUT upsd with the dummy-ups driver simulating a 12 V battery UPS, on a free
loopback port. Both run in the foreground (-F) as this process's children."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.peers import free_port

DEV = """device.mfr: APC
device.model: Back-UPS ES 700G (simulated)
ups.mfr: APC
ups.model: Back-UPS ES 700G (simulated)
ups.status: {status}
ups.load: {load}
battery.charge: {charge}
battery.charge.low: 10
battery.runtime: {runtime}
battery.voltage: {volts}
battery.voltage.nominal: 12.0
input.voltage: {input_v}
input.voltage.nominal: 230
ups.realpower.nominal: 390
output.voltage: 230.0
"""
STATES = {
    "OL": dict(status="OL", charge=100, volts=13.6, runtime=1500, input_v=231.0, load=23),
    "OB": dict(status="OB DISCHRG", charge=64, volts=12.3, runtime=840, input_v=0.0, load=31),
    "OBLB": dict(status="OB DISCHRG LB", charge=8, volts=11.1, runtime=95, input_v=0.0, load=31),
    "OLCHRG": dict(status="OL CHRG", charge=47, volts=13.9, runtime=700, input_v=231.0, load=23),
}


class NutPeer:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = free_port()
        self.env = {**os.environ, "NUT_CONFPATH": str(base), "NUT_STATEPATH": str(base / "state")}
        self.driver: subprocess.Popen[bytes] | None = None
        self.upsd: subprocess.Popen[bytes] | None = None

    def up(self) -> None:
        b = self.base
        (b / "state").mkdir(parents=True)
        (b / "nut.conf").write_text("MODE=standalone\n")
        (b / "ups.conf").write_text(f'maxretry = 3\n[ups12v]\n  driver = dummy-ups\n  port = {b}/ups12v.dev\n'
                                    '  mode = dummy-once\n  desc = "12 V battery UPS (test)"\n')
        (b / "upsd.conf").write_text(f"LISTEN 127.0.0.1 {self.port}\nMAXAGE 4\n")
        (b / "upsd.users").write_text("[monitor]\n  password = monpass\n  upsmon secondary\n")
        self.set_state("OL", wait=False)
        shutil.chown(b, "root", "nut")
        os.chmod(b, 0o750)
        for f in ("ups.conf", "upsd.conf", "upsd.users", "nut.conf"):
            shutil.chown(b / f, "root", "nut")
            os.chmod(b / f, 0o640)
        shutil.chown(b / "state", "nut", "nut")
        os.chmod(b / "state", 0o770)
        self.start_driver()
        self.upsd = subprocess.Popen(["/lib/nut/upsd", "-F", "-u", "nut"], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_status("OL")

    def start_driver(self) -> None:
        self.driver = subprocess.Popen(["/lib/nut/dummy-ups", "-F", "-a", "ups12v", "-u", "nut"], env=self.env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop_driver(self) -> None:
        assert self.driver is not None
        self.driver.terminate()
        self.driver.wait(10)

    def freeze_driver(self, frozen: bool) -> None:
        assert self.driver is not None
        os.kill(self.driver.pid, signal.SIGSTOP if frozen else signal.SIGCONT)

    def set_state(self, name: str, wait: bool = True) -> None:
        dev = self.base / "ups12v.dev"
        tmp = dev.with_suffix(".tmp")
        tmp.write_text(DEV.format(**STATES[name]))
        os.chmod(tmp, 0o644)
        # dummy-ups re-reads its file only when st_mtime, whole seconds, differs from the last one
        # it read (drivers/dummy-ups.c): two states written within one second, the second is
        # never seen. CI once waited 15 s for "OL" after an "OB DISCHRG LB" of the same second.
        last = int(dev.stat().st_mtime) if dev.exists() else None
        if last is not None and int(tmp.stat().st_mtime) <= last:
            os.utime(tmp, (last + 1, last + 1))
        os.replace(tmp, dev)
        if wait:
            self.wait_status(STATES[name]["status"])

    def status(self) -> str | None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                s.sendall(b"GET VAR ups12v ups.status\n")
                line = s.recv(1000).decode()
        except OSError:
            return None
        return line.split('"')[1] if line.startswith("VAR") else None

    def wait_status(self, want: str, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.status() == want:
                return
            time.sleep(0.1)
        raise RuntimeError(f"UPS never reported {want!r} (last {self.status()!r})")

    def down(self) -> None:
        for p in (self.upsd, self.driver):
            if p is None:
                continue
            try:
                os.kill(p.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
