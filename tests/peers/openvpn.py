"""A real OpenVPN 2.6 server and two clients over UDP on 127.0.0.1 inside one private
network namespace, with a throwaway EC PKI made by openssl.

The server writes a status file and offers its management interface on a unix socket
with a password (both reachable from the host). The namespace's sysfs is mounted at
``sys_root`` by a mount made from inside the netns, so the tun counters can be read
from the host exactly as a user with OpenVPN in a namespace would configure it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

from tests.peers import stop_all

UDP_BLAST = """
import socket, sys
dev, dst, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
for _ in range(n):
    try:
        s.sendto(b"x" * size, (dst, 9))
    except OSError:
        pass
"""


def _run(*argv: str, cwd: Path | None = None) -> None:
    subprocess.run(list(argv), check=True, capture_output=True, cwd=cwd)


class OpenvpnPeers:
    def __init__(self, base: Path, status_version: int = 2) -> None:
        self.base = base
        self.ns = f"rpvpn{uuid.uuid4().hex[:6]}"
        self.status_version = status_version
        self.port = 20000 + int(uuid.uuid4().int % 20000)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.sys_root = base / "sys"
        self.status_file = base / "server.status"
        self.mgmt = base / "mgmt.sock"
        self.password_file = base / "mgmt.pw"
        self.config_file = base / "server.conf"

    def _pki(self) -> None:
        d = self.base
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        _run("openssl", "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "30",
             "-subj", "/CN=rackpulse-test-ca", cwd=d)
        (d / "ext-server.cnf").write_text("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyAgreement\n"
                                          "extendedKeyUsage=serverAuth\n")
        (d / "ext-client.cnf").write_text("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyAgreement\n"
                                          "extendedKeyUsage=clientAuth\n")
        for n in ("server", "client1", "client2"):
            _run("openssl", "req", *ec, "-keyout", f"{n}.key", "-out", f"{n}.csr", "-subj", f"/CN={n}", cwd=d)
            ext = "ext-server.cnf" if n == "server" else "ext-client.cnf"
            _run("openssl", "x509", "-req", "-in", f"{n}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{n}.crt", "-days", "30", "-extfile", ext, cwd=d)
        _run("openvpn", "--genkey", "tls-crypt", "tc.key", cwd=d)

    def up(self) -> None:
        d = self.base
        self._pki()
        self.password_file.write_text("s3cret-mgmt\n")
        self.config_file.write_text(f"""dev ovs
dev-type tun
proto udp4
local 127.0.0.1
port {self.port}
topology subnet
server 10.8.0.0 255.255.255.0
ca {d}/ca.crt
cert {d}/server.crt
key {d}/server.key
dh none
tls-crypt {d}/tc.key
keepalive 2 10
status {self.status_file} 1
status-version {self.status_version}
management {self.mgmt} unix {self.password_file}
verb 3
""")
        _run("ip", "netns", "add", self.ns)
        _run("ip", "-n", self.ns, "link", "set", "lo", "up")
        self.sys_root.mkdir()
        # A sysfs mounted from inside the namespace shows that namespace's interfaces.
        _run("nsenter", f"--net=/run/netns/{self.ns}", "mount", "-t", "sysfs", "sysfs", str(self.sys_root))
        self.procs["server"] = self._openvpn(self.config_file, d / "server.log")
        for i in (1, 2):
            conf = d / f"client{i}.conf"
            conf.write_text(f"""client
dev ovc{i}
dev-type tun
proto udp4
remote 127.0.0.1 {self.port}
nobind
ca {d}/ca.crt
cert {d}/client{i}.crt
key {d}/client{i}.key
tls-crypt {d}/tc.key
remote-cert-tls server
status {d}/client{i}.status 1
verb 3
""")
            self.procs[f"client{i}"] = self._openvpn(conf, d / f"client{i}.log")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            logs = [(d / f"client{i}.log").read_text(errors="replace") for i in (1, 2)
                    if (d / f"client{i}.log").exists()]
            if sum("Initialization Sequence Completed" in log for log in logs) == 2:
                return
            time.sleep(0.1)
        raise RuntimeError("OpenVPN clients did not connect:\n" + (d / "server.log").read_text(errors="replace")[-2000:])

    def _openvpn(self, conf: Path, log: Path) -> subprocess.Popen[bytes]:
        return subprocess.Popen(["ip", "netns", "exec", self.ns, "openvpn", "--config", str(conf), "--log", str(log)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def make_drops(self, client: int = 1, datagrams: int = 1000) -> None:
        """Freeze the client and push datagrams into its tun: the small queue overflows."""
        dev = f"ovc{client}"
        _run("ip", "-n", self.ns, "link", "set", dev, "txqueuelen", "20")
        pid = self._pid(client)
        os.kill(pid, signal.SIGSTOP)
        try:
            _run("ip", "netns", "exec", self.ns, "python3", "-c", UDP_BLAST, dev, "10.8.0.77", str(datagrams), "200")
        finally:
            os.kill(pid, signal.SIGCONT)

    def _pid(self, client: int) -> int:
        # `ip netns exec` execs openvpn in place, so the child's pid is openvpn's.
        return self.procs[f"client{client}"].pid

    def down(self) -> None:
        stop_all(self.procs.values())
        subprocess.run(["umount", str(self.sys_root)], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
