"""Email through Apprise, end to end: a real `rackpulse serve` watching a fixture host whose md0
loses the disk in shelf 1, bay 2, and a real SMTP server (aiosmtpd) that refuses the first try.
One email with the bay in its subject and a text and an HTML part; one "resolved" email when the
array heals; nothing lost and nothing twice; the channel's URL in no log line, page or error."""

from __future__ import annotations

import os
from pathlib import Path

from app.alerting.delivery import backoff
from app.demo.agent import to_toml
from tests.agent_hosts import rackpulse, stop, wait_for
from tests.alerting.test_serve_episodes import FAILED, HEALED
from tests.cli import run_cli
from tests.peers import free_port
from tests.peers.smtp import SmtpPeer

PATH = "pci-0000:03:00.0-sas-phy2-lun-0"
GROUP_WAIT = 1.0  # seconds the first notification waits for others of its host


def config(tmp: Path, port: int, smtp: int) -> tuple[Path, str]:
    url = f"mailto://127.0.0.1:{smtp}?from=rackpulse@nas.example&to=ops@mail.example"
    off = {"enabled": False}
    cfg = {"host": "nas", "host_root": str(tmp / "root"), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp / 'r.db'}"},
           "collectors": {**{n: off for n in ("smart", "frr", "bonding", "openvpn", "snmp", "nut", "hwmon", "heatpump",
                                              "host", "probes", "throughput", "zfs", "btrfs", "megaraid", "ceph")},
                          "mdraid": {"interval": 0.3, "detail": False}},
           "disks": {"bays": [{"label": "shelf 1, bay 2", "path": PATH}]},
           "alerts": {"interval": 0.3, "base_url": "http://rackpulse.example", "group_wait": GROUP_WAIT,
                      "channels": [{"name": "mail", "format": "apprise", "url": url, "timeout": 10}]}}
    path = tmp / "rackpulse.toml"
    path.write_text(to_toml(cfg))
    return path, url


def test_md0_failing_sends_one_email_with_the_bay_and_healing_one_resolved_though_smtp_refused_once(
        tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "mdstat").write_text(FAILED)
    by_path = root / "dev" / "disk" / "by-path"
    by_path.mkdir(parents=True)
    os.symlink("../../sdc", by_path / PATH)
    (by_path / f"{PATH}-part1").symlink_to("../../sdc1")
    smtp = SmtpPeer(tmp_path / "mail", free_port(), refuse=1)
    port = free_port()
    path, url = config(tmp_path, port, smtp.port)
    proc = rackpulse("serve", "--config", str(path), log=tmp_path / "serve.log")
    # The first try is refused (451): the retry comes after the courier's backoff for one attempt.
    patience = 30 + GROUP_WAIT + 1.25 * backoff(1)
    try:
        (first,) = wait_for(lambda: smtp.messages(), patience, "the first email")
        assert first["Subject"] == "[rackpulse] CRITICAL RAID array degraded md0: pull shelf 1, bay 2"
        assert first["To"] == "ops@mail.example" and first["From"] == "rackpulse@nas.example"
        plain = first.get_body(("plain",))
        rich = first.get_body(("html",))
        assert plain is not None and rich is not None
        text, page = plain.get_content(), rich.get_content()
        assert "md0 degraded (2/3): shelf 1, bay 2" in text and "md0 degraded (2/3): shelf 1, bay 2" in page
        assert "<th align=\"left\">Bay</th><td>shelf 1, bay 2</td>" in page
        assert 'href="http://rackpulse.example/alerts"' in page
        (root / "proc" / "mdstat").write_text(HEALED)
        second = wait_for(lambda: smtp.messages()[1:], patience, "the resolved email")
        assert second[0]["Subject"].startswith("[rackpulse] RESOLVED RAID array degraded md0 after ")
        import urllib.request

        alerts_page = urllib.request.urlopen(f"http://127.0.0.1:{port}/alerts", timeout=10).read().decode()  # noqa: S310
    finally:
        stop(proc)
        smtp.stop()
    assert len(smtp.messages()) == 2  # the refused one was sent again, once; nothing twice
    # The URL (it would hold a password or a token) is nowhere a person or a log can read it.
    said = (tmp_path / "serve.log").read_text() + alerts_page
    checked = run_cli("check-config", "--config", str(path))
    said += checked.stdout + checked.stderr
    for part in (url, "ops@mail.example", "rackpulse@nas.example", f"127.0.0.1:{smtp.port}"):  # the scheme may be said
        assert part not in said, part
