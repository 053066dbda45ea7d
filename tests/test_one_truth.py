"""One truth, through `rackpulse serve`: the tile, the disk's page and the alert say the same,
because each collection is judged once, with the configured thresholds and the host's memory.

Before, pages judged afresh on every render with default thresholds and no memory: a bond slave
that failed three times in an hour fired bond_slave_flapping while the Bonds tile said all clear,
and with alerts.disk_hot_celsius = 40 a disk at 45 °C was hot in its alert and fine on its page."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path

from app.demo import story
from app.demo.agent import to_toml
from tests.agent_hosts import get_json, rackpulse, stop, wait_for
from tests.peers import free_port

INTERVAL = 1.0  # the collectors' and the alerts' interval in this test: waits are counted in them


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - loopback
        return r.read().decode()


def failures(root: Path, slave: str, n: int) -> None:
    bond = root / "proc/net/bonding/bond0"
    text = bond.read_text()
    text = re.sub(rf"(Slave Interface: {slave}\n(?:.*\n)*?Link Failure Count: )\d+", rf"\g<1>{n}", text)
    bond.write_text(text)


def test_tile_page_and_alert_agree_on_a_flapping_bond_slave_and_a_hot_disk(tmp_path: Path) -> None:
    root = tmp_path / "root"
    story.write_tree(root, story.story_state(10))
    state = json.loads((root / "demo-state.json").read_text())
    state["disks"][0]["temp"] = 45.0  # sda, ZA1000AK: hot from 40 °C on in this config
    story.write_state(root, state)  # as the stand-ins read it
    port = free_port()
    cfg = story.demo_config(root, f"sqlite:///{tmp_path / 'r.db'}", port, INTERVAL)
    keep = {"smart", "bonding"}
    for name in list(cfg["collectors"]):
        if name not in keep:
            cfg["collectors"][name] = {"enabled": False}
    cfg["collectors"]["mdraid"] = {"enabled": False}
    cfg["alerts"] = {"interval": INTERVAL, "disk_hot_celsius": 40, "flap_count": 3,
                     "rules": {"disk_hot": {"for_seconds": 0}, "bond_slave_flapping": {"for_seconds": 0}}}
    (tmp_path / "rackpulse.toml").write_text(to_toml(cfg))
    proc = rackpulse("serve", "--config", str(tmp_path / "rackpulse.toml"), log=tmp_path / "serve.log")
    base = f"http://127.0.0.1:{port}"
    deadline = 60 * INTERVAL + 30  # start-up, then a few collections and evaluations
    try:
        def runs() -> dict[str, int]:
            return {c["name"]: c["runs"] for c in get_json(f"{base}/api/state")["collectors"]}

        wait_for(lambda: runs().get("bonding", 0) >= 1, deadline, "the first poll of the bond")
        for n in (4, 5, 6):  # eoip4 fails three more times within the hour
            failures(root, "eoip4", n)
            before = runs()["bonding"]
            wait_for(lambda b=before: runs()["bonding"] > b, deadline, "bonding to poll")

        def firing() -> dict[str, dict]:  # type: ignore[type-arg]
            active = get_json(f"{base}/api/alerts")["active"]
            got = {a["rule"]: a for a in active if a["state"] == "firing"}
            if not {"bond_slave_flapping", "disk_hot"} <= set(got):
                return {}
            # An evaluation after the last poll: the alert's words are the findings' now (one
            # evaluation earlier the alert said "failed 5 times" while the tile said 6).
            said = {f["text"] for f in get_json(f"{base}/api/state")["findings"]["bonding"]}
            return got if got["bond_slave_flapping"]["summary"] in said else {}

        alerts = wait_for(firing, deadline, "bond_slave_flapping and disk_hot to fire")
        overview = get_text(f"{base}/")
        flap = alerts["bond_slave_flapping"]["summary"]
        hot = alerts["disk_hot"]["summary"]
        assert "eoip4" in flap and "45 °C" in hot
        tiles = overview.split('aria-label="Health by domain"')[1].split("</section>")[0]
        # (a page binds a number to its unit with a no-break space: "45\u00a0°C" reads as "45 °C")
        tiles = tiles.replace("\u00a0", " ")
        assert flap in tiles.replace("&#39;", "'")  # the Bonds tile says what fires
        # The Disks tile shows its first three findings (three disks are hot): it reads the same list.
        assert hot in [f["text"] for f in get_json(f"{base}/api/state")["findings"]["smart"]]
        disks_tile = tiles.split("<strong>Disks</strong>")[0].rsplit("<a ", 1)[1]
        assert 'class="tile warning"' in disks_tile or 'class="tile failing"' in disks_tile
        page = get_text(f"{base}/disks/ZA1000AK").replace("\u00a0", " ")
        assert hot in page, page[:2000]  # the words of the alert, on the disk's page
        hosts = get_text(f"{base}/hosts")
        assert "all clear" not in hosts.split("<main")[1].lower()
    finally:
        stop(proc)
    time.sleep(0)  # nothing left running: serve stopped above


def test_a_host_card_with_a_collector_down_is_not_all_clear(tmp_path: Path) -> None:
    """The demo's agent host once had `collector openvpn down` firing while its card said all clear."""
    from fastapi.testclient import TestClient

    from app.config import load_config
    from app.ingest import agents
    from app.scheduler import Snapshot
    from app.storage.db import make_engine, upgrade
    from app.web.app import create_app
    from tests.test_agents import batch, body, post, run_record

    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    cfg = load_config(None, {"host": "server", "storage": {"url": url}})
    token = agents.issue(make_engine(url), "ceph1")
    app = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)
    now = time.time()
    with TestClient(app, base_url="http://127.0.0.1") as client:
        ok = run_record(1, now - 20)
        down = run_record(2, now - 10, collector="openvpn", ok=False, error="status file is 2874s old",
                          samples=[], state={})
        assert post(client, token, body(batch([ok, down]))).status_code == 200
        for page in ("/hosts", "/"):
            card = client.get(page).text.split("ceph1", 1)[1].split("</a>", 1)[0] if page == "/" else \
                client.get(page).text.split("ceph1", 1)[1].split("</tr>", 1)[0]
            assert "all clear" not in card, (page, card)
            assert "collector openvpn" in card and "2874s old" in card, (page, card)


def test_a_firing_alert_shows_the_value_now_and_the_value_it_fired_with(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from collectors.base import Sample
    from tests.security.test_web_guards import make_app

    app = make_app(tmp_path, password=False)
    snap = app.state.site.snap
    with TestClient(app, base_url="http://127.0.0.1") as client:
        snap.samples["x"] = [Sample.of("rackpulse_test_bad", 7, thing="a")]  # worse since it fired
        app.state.get_alerting().tick(snap, deliver=False)
        page = client.get("/alerts").text
        row = page.split("rackpulse_test_bad{thing=a} is 7", 1)[1].split("</td>", 1)[0]
        assert "Fired with: rackpulse_test_bad{thing=a} is 1" in row, row
