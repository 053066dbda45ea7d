"""A stand-in for the Proxmox VE (and Backup Server) API: HTTPS with a self-signed certificate,
answering GET /api2/json/<path> with {"data": ...} from `<answers>/<path>.json`. Proxmox cannot
run on this machine; its answers are written from the API's own schema (SOURCES.md says where).

It checks the token header as the real API does (401 "authentication failure" otherwise), and
`<answers>/_control.json` makes a path misbehave: {"/cluster/status": {"status": 403, "reason":
"Permission check failed (/, Sys.Audit)"}, "/cluster/tasks": {"delay": 30}}. Every request's
path is appended to `<answers>/_requests.log`, so a test can see that nothing reached it.
Files are read at each request: a test or the demo changes the scene by rewriting them.

usage: python -m app.demo.pve_api --port P --answers DIR --certs DIR --authorization-file F
"""

from __future__ import annotations

import argparse
import datetime
import http.server
import json
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from app.demo.peer import DemoPeer, serve_in_thread


def make_certificate(folder: Path, name: str = "localhost") -> tuple[Path, Path]:
    """A self-signed certificate for `name` and 127.0.0.1, as a fresh Proxmox node has."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


def handler(answers: Path, authorization: str) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out as two writes: with Nagle's algorithm each answer waited for
        # the client's delayed ACK (40 ms a GET on loopback), which no real pveproxy does
        disable_nagle_algorithm = True

        def _send(self, status: int, reason: str, data: Any, raw: bytes | None = None) -> None:
            # a stored answer goes out as its file's bytes: parsing and writing 100,000 guests
            # again for every GET took over 30 s on a loaded machine (a test's timeout, not the cap)
            body = b'{"data": ' + raw + b"}" if raw is not None else json.dumps({"data": data}).encode()
            self.send_response(status, reason)
            self.send_header("Content-Type", "application/json;charset=UTF-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            path = unquote(urlsplit(self.path).path).removeprefix("/api2/json")
            with (answers / "_requests.log").open("a") as log:
                log.write(path + "\n")
            if self.headers.get("Authorization") != authorization:
                self._send(401, "authentication failure", None)
                return
            control = answers / "_control.json"
            rule = json.loads(control.read_text()).get(path, {}) if control.exists() else {}
            if rule.get("delay"):
                time.sleep(float(rule["delay"]))
            if rule.get("status"):
                self._send(int(rule["status"]), str(rule.get("reason", "error")), None)
                return
            file = answers / (path.strip("/") + ".json")
            if not file.resolve().is_relative_to(answers.resolve()) or not file.is_file():
                self._send(501, f"Method 'GET {path}' not implemented", None)
                return
            self._send(200, "OK", None, raw=file.read_bytes())

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

    return Handler


def start(answers: Path, certs: Path, authorization: str) -> DemoPeer:
    """The stand-in in a thread of the demo's process, on a free loopback port."""
    cert, key = certs / "cert.pem", certs / "key.pem"
    if not cert.exists():
        cert, key = make_certificate(certs)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler(answers, authorization))
    server.daemon_threads = True
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    return serve_in_thread(server, "demo-proxmox")

# The demo's Proxmox tokens (the stand-ins check the header as the real APIs do).
PVE_TOKEN, PBS_TOKEN = "monitor@pve!rackpulse", "monitor@pbs!rackpulse"
DEMO_SECRET = "d3m0-0000-4e1a-9c1f-5b7a2e3d4c5b"


def start_demo(root: Path) -> tuple[DemoPeer, DemoPeer]:
    """The demo's Proxmox VE and Backup Server: the scene's answers (collectors/host/proxmox/demo.py
    writes them under root/demo-proxmox) over HTTPS, with one self-signed certificate."""
    folder = root / "demo-proxmox"
    return (start(folder / "pve", folder / "certs", f"PVEAPIToken={PVE_TOKEN}={DEMO_SECRET}"),
            start(folder / "pbs", folder / "certs", f"PBSAPIToken={PBS_TOKEN}:{DEMO_SECRET}"))


def demo_sections(root: Path, interval: float, pve_port: int | None, pbs_port: int | None,
                  replay: Callable[[str], list[str]]) -> dict[str, Any]:
    """[collectors.proxmox] and [collectors.pbs] for the demo's stand-ins, off without them (a
    test's demo app runs none); restic and borg, answered by their scenes (app/demo/backups.py)."""
    from app.demo.backups import backup_sections

    backups = backup_sections(root, interval, replay)
    if not (pve_port and pbs_port):
        return {"proxmox": {"enabled": False}, "pbs": {"enabled": False}, **backups}
    from app.files import private_file

    folder = root / "demo-proxmox"
    secret = folder / "token"
    if not secret.exists():
        private_file(secret)
        secret.write_text(DEMO_SECRET + "\n")
    common = {"token_secret_file": str(secret), "ca_file": str(folder / "certs" / "cert.pem")}
    # less often than the rest: real ones are read every minute and every five; the story's
    # failing stretch (60 story-seconds) is still seen several times
    return {"proxmox": {"url": f"https://127.0.0.1:{pve_port}", "token_id": PVE_TOKEN, "interval": interval * 2,
                        **common},
            "pbs": {"url": f"https://127.0.0.1:{pbs_port}", "token_id": PBS_TOKEN, "interval": interval * 3, **common},
            **backups}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--answers", type=Path, required=True)
    ap.add_argument("--certs", type=Path, required=True, help="cert.pem and key.pem (made when missing)")
    ap.add_argument("--authorization-file", type=Path, required=True, help="the header the token sends")
    args = ap.parse_args()
    cert, key = args.certs / "cert.pem", args.certs / "key.pem"
    if not cert.exists():
        cert, key = make_certificate(args.certs)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port),
                                             handler(args.answers, args.authorization_file.read_text().strip()))
    server.daemon_threads = True
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(f"pve stand-in on https://127.0.0.1:{args.port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
