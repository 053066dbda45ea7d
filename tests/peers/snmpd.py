"""A real net-snmp snmpd on a free UDP port on 127.0.0.1, with a v2c community and two
SNMPv3 users, plus a veth pair (unique names, no addresses) whose link the test can
bounce to make a flapping port."""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from pathlib import Path


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Snmpd:
    community = "rackpulse-ro"
    user, auth_pw, priv_pw = "monitor", "monitor-authpass", "monitor-privpass"
    user256, auth256_pw = "monauth", "monauth-authpass"

    def __init__(self, base: Path, extra: str = "") -> None:
        self.base = base
        self.extra = extra  # more snmpd.conf lines, e.g. `override` values for UPS-MIB
        self.port = free_udp_port()
        tag = uuid.uuid4().hex[:5]
        self.veth = (f"rpfa{tag}", f"rpfb{tag}")
        self.proc: subprocess.Popen[bytes] | None = None

    def up(self) -> None:
        persist = self.base / "persist"
        persist.mkdir(mode=0o700)
        conf = self.base / "snmpd.conf"
        conf.write_text(f"""agentAddress udp:127.0.0.1:{self.port}
rocommunity {self.community} 127.0.0.1
createUser {self.user} SHA "{self.auth_pw}" AES "{self.priv_pw}"
createUser {self.user256} SHA-256 "{self.auth256_pw}"
rouser {self.user} priv
rouser {self.user256} auth
sysName rackpulse-test-switch
{self.extra}
""")
        subprocess.run(["ip", "link", "add", self.veth[0], "type", "veth", "peer", "name", self.veth[1]], check=True)
        subprocess.run(["ip", "link", "set", self.veth[0], "up"], check=True)
        subprocess.run(["ip", "link", "set", self.veth[1], "up"], check=True)
        self.proc = subprocess.Popen(
            ["snmpd", "-f", "-C", "-c", str(conf), "-Lf", str(self.base / "snmpd.log"), "-p", str(self.base / "pid")],
            env={"SNMP_PERSISTENT_DIR": str(persist), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            r = subprocess.run(["snmpget", "-v2c", "-c", self.community, "-t", "0.3", "-r", "0",
                                f"127.0.0.1:{self.port}", "1.3.6.1.2.1.1.5.0"], capture_output=True)
            if r.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("snmpd did not answer: " + (self.base / "snmpd.log").read_text(errors="replace")[-1000:])

    def set_link(self, up: bool) -> None:
        subprocess.run(["ip", "link", "set", self.veth[1], "up" if up else "down"], check=True)

    def down(self) -> None:
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        subprocess.run(["ip", "link", "del", self.veth[0]], capture_output=True)
