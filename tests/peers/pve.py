"""The Proxmox VE and Backup Server API stand-in (app/demo/pve_api.py) as a child process: HTTPS
with its own self-signed certificate on a free port, answering from a copy of a fixture folder
the test may rewrite (a guest stops, a backup ages, a path answers 403)."""

from __future__ import annotations

import hashlib
import json
import shutil
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.paths import FIXTURES
from tests.peers import free_port, stop_all

ROOT = Path(__file__).resolve().parents[2]
TOKEN_ID = "monitor@pve!rackpulse"
PBS_TOKEN_ID = "monitor@pbs!rackpulse"
SECRET = "5f0c4e9a-1b2d-4c3e-9f8a-7d6e5c4b3a21"


class PveStandin:
    scene = "healthy"
    # the header the API expects: PVE joins id and secret with "=", PBS with ":"
    authorization = f"PVEAPIToken={TOKEN_ID}={SECRET}"

    def __init__(self, base: Path) -> None:
        scene = self.scene
        self.base, self.port = base, free_port()
        self.answers, self.certs = base / "answers", base / "certs"
        shutil.copytree(FIXTURES / "proxmox" / scene, self.answers)
        self.secret_file = base / "pve.token"
        self.secret_file.write_text(SECRET + "\n")
        self.secret_file.chmod(0o600)
        (base / "authorization").write_text(self.authorization + "\n")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> Path:
        return self.certs / "cert.pem"

    @property
    def fingerprint(self) -> str:
        der = ssl.PEM_cert_to_DER_cert(self.ca_file.read_text())
        return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())

    def up(self) -> None:
        self.proc = subprocess.Popen(  # noqa: S603 - our interpreter, an argv list
            [sys.executable, "-m", "app.demo.pve_api", "--port", str(self.port), "--answers", str(self.answers),
             "--certs", str(self.certs), "--authorization-file", str(self.base / "authorization")],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # printed once it listens: no deadline to guess
        if b"stand-in on" not in line:
            raise RuntimeError(f"the PVE stand-in did not start: {line!r} {self.proc.stdout.read()!r}")

    def down(self) -> None:
        if self.proc is not None:
            stop_all([self.proc])

    # -- the scene ------------------------------------------------------------------------

    def read(self, path: str) -> Any:
        return json.loads((self.answers / (path.strip("/") + ".json")).read_text())

    def write(self, path: str, data: Any) -> None:
        file = self.answers / (path.strip("/") + ".json")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(data))

    def misbehave(self, path: str, **rule: Any) -> None:
        """403 with a reason, a 5xx, or a delay for one path (`_control.json`)."""
        control = self.answers / "_control.json"
        rules = json.loads(control.read_text()) if control.exists() else {}
        rules[path] = rule
        control.write_text(json.dumps(rules))

    def requests(self) -> list[str]:
        log = self.answers / "_requests.log"
        return log.read_text().splitlines() if log.exists() else []

    def edit(self, path: str, match: dict[str, Any], **changes: Any) -> None:
        """Change the items of a list answer that match `match`."""
        items = self.read(path)
        for d in items:
            if all(d.get(k) == v for k, v in match.items()):
                d.update(changes)
        self.write(path, items)


class PbsStandin(PveStandin):
    scene = "pbs"
    authorization = f"PBSAPIToken={PBS_TOKEN_ID}:{SECRET}"
