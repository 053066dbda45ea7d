"""The manual's curl scripts (docs/people-and-api.md), run as written (bash, real curl) against a real `rackpulse serve`
watching a fixture host whose md0 has failed: list what fires, acknowledge it with a note, put
the host in maintenance for a reboot and lift it. A token made with `rackpulse tokens create`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from app.demo.agent import to_toml
from tests.agent_hosts import ROOT, rackpulse, stop, wait_for
from tests.alerting.test_serve_episodes import FAILED
from tests.peers import free_port


def get_json(url: str, headers: dict[str, str]) -> Any:
    req = urllib.request.Request(url, headers=headers)  # noqa: S310 - loopback
    with urllib.request.urlopen(req, timeout=5) as r:  # noqa: S310
        return json.loads(r.read())


def get_status(url: str, headers: dict[str, str]) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:  # noqa: S310
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def readme_scripts() -> list[str]:
    text = (ROOT / "docs" / "people-and-api.md").read_text()
    tail = text.split("<!-- The three scripts below are run by tests/test_api_scripts.py", 1)[1]
    return re.findall(r"```sh\n(.*?)```", tail, re.S)[:3]


def serve(tmp: Path) -> tuple[object, str, Path]:
    (tmp / "root" / "proc").mkdir(parents=True)
    (tmp / "root" / "proc" / "mdstat").write_text(FAILED)
    port = free_port()
    off = {"enabled": False}
    cfg = {"host": "nas", "host_root": str(tmp / "root"), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp / 'r.db'}"},
           "collectors": {**{n: off for n in ("smart", "frr", "bonding", "openvpn", "snmp", "nut", "hwmon",
                                              "heatpump")}, "mdraid": {"interval": 0.5, "detail": False}},
           "alerts": {"interval": 0.5}}
    path = tmp / "rackpulse.toml"
    path.write_text(to_toml(cfg))
    return rackpulse("serve", "--config", str(path), log=tmp / "serve.log"), f"http://127.0.0.1:{port}", path


def run(script: str, env: dict[str, str]) -> str:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_readmes_curl_scripts_list_ack_and_silence_for_a_reboot(tmp_path: Path) -> None:
    listing, ack, reboot = readme_scripts()
    assert "curl" in listing and "/alerts/ack" in ack and "DELETE" in reboot
    proc, base, config = serve(tmp_path)
    try:
        # The server made the database's tables before it answers: a token made before that failed
        # on a loaded machine (no such table yet).
        wait_for(lambda: get_json(base + "/healthz", {}), 60, "the server answering")
        made = subprocess.run([sys.executable, "-m", "app.cli", "tokens", "create", "script", "--scope", "write",
                               "--config", str(config)], cwd=ROOT, capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        token = made.stdout.strip().splitlines()[-1]
        env = {**os.environ, "RACKPULSE": base, "RACKPULSE_TOKEN": token}
        auth = {"Authorization": f"Bearer {token}"}
        # the alert fires after the rule's own wait; the server says when it is firing
        wait_for(lambda: any(a["rule"] == "array_degraded" for a in get_json(base + "/api/v1/alerts", auth)),
                 60, "array_degraded firing")

        said = run(listing, env)
        assert '"rule":"array_degraded"' in said and '"subject":"md0"' in said

        assert '"acked":true' in run(ack, env)
        fired = get_json(base + "/api/v1/alerts", auth)[0]
        assert fired["acked_at"] and fired["ack_note"] == "replacing sdh, disk ordered"

        run(reboot, env)
        maint = get_json(base + "/api/v1/maintenance", auth)
        assert maint == []  # made and lifted again
        admin = subprocess.run([sys.executable, "-m", "app.cli", "tokens", "create", "auditor", "--scope", "admin",
                                "--config", str(config)], cwd=ROOT, capture_output=True, text=True, check=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.strip().splitlines()[-1]
        # the audit log is an admin's: the write token the scripts use may not read it
        assert get_status(base + "/api/v1/audit", auth) == 403
        who = [(r["actor"], r["action"]) for r in get_json(base + "/api/v1/audit",
                                                           {"Authorization": f"Bearer {admin}"})]
        assert ("token:script", "POST /api/v1/maintenance") in who
        assert ("token:script", "DELETE /api/v1/maintenance/1") in who
        assert ("token:script", "POST /api/v1/alerts/ack") in who
    finally:
        stop(proc)
