"""The pages about a peer, fed by that peer for real: NUT upsd with dummy-ups for the power
page, net-snmp snmpd for switch ports, FRR bgpd for BGP sessions. What a person reads on the
page follows what the peer says, through the app's own collectors, scheduler and templates."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.alerting.conditions import Conditions
from app.config import load_config
from app.scheduler import Scheduler, Snapshot
from app.storage.db import upgrade
from app.web.app import create_app
from collectors import build_collectors, plugins
from tests.peers import running
from tests.peers.frr import FrrPair
from tests.peers.nut import NutPeer
from tests.peers.snmpd import Snmpd
from tests.test_web import fetch

OFF = {"enabled": False}
ALL = tuple(plugins())  # every installed collector: a Host turns on just one


class Host:
    """The app over one collector that talks to a real peer; collect() runs it once."""

    def __init__(self, tmp: Path, collector: str, section: dict[str, Any]) -> None:
        url = f"sqlite:///{tmp / 'r.db'}"
        upgrade(url)
        cfg = load_config(None, {"host": "nas", "storage": {"url": url},
                                 "collectors": {**{n: OFF for n in ALL if n != collector}, collector: section}})
        self.snap = Snapshot(host="nas")
        colls = build_collectors(cfg)
        self.sched = Scheduler(colls, {n: (60, 30) for n in colls}, self.snap)
        self.app = create_app(cfg, collect=False, snapshot=self.snap, migrate=False)

    def collect(self) -> None:
        asyncio.run(self.sched.run_all_once())

    def page(self, path: str) -> str:
        r = fetch(self.app, path)
        assert r.status_code == 200
        # as a person reads it: a value is bound to its unit by a no-break space ("13.6\u00a0V")
        return r.text.replace("\u00a0", " ").replace("&nbsp;", " ")


@pytest.fixture(scope="module")
def ups() -> Iterator[NutPeer]:
    with running(NutPeer, "nut") as peer:
        yield peer


def test_the_power_page_shows_what_upsd_reports_on_mains_and_on_a_low_battery(tmp_path: Path, ups: NutPeer) -> None:
    host = Host(tmp_path, "nut", {"upsd": [{"port": ups.port}]})
    ups.set_state("OL")
    host.collect()
    page = host.page("/power")
    assert "ups12v" in page and "Back-UPS ES 700G (simulated)" in page and "on mains" in page
    assert "battery 13.6 V" in page and "100 %" in page
    ups.set_state("OBLB")
    try:
        host.collect()
        overview = host.page("/")
        assert "UPS ups12v battery low: 8% charge" in overview
        assert {c.rule for c in Conditions().build(host.snap)} >= {"ups_low_battery", "ups_on_battery"}
        power = host.page("/power")
        assert "battery low" in power and "battery 11.1 V" in power and "8 %" in power
    finally:
        ups.set_state("OL")


@pytest.fixture(scope="module")
def switch() -> Iterator[Snmpd]:
    with running(Snmpd, "snmp") as agent:
        yield agent


def plain_cells(row: str) -> str:
    """A table row without the phone labels on its cells (app/web/stacked.py)."""
    return re.sub(r'<td data-label="[^"]*"', "<td", row)


def test_the_network_page_shows_a_switch_port_going_down_as_snmpd_reports_it(tmp_path: Path, switch: Snmpd) -> None:
    host = Host(tmp_path, "snmp", {"targets": [{"name": "rack-sw", "host": "127.0.0.1", "port": switch.port,
                                                "community": switch.community, "timeout": 1, "retries": 1}]})
    port = switch.veth[0]
    host.collect()
    row = plain_cells(host.page("/network").split(f">{port}<", 1)[1].split("</tr>", 1)[0])
    assert "<td>up</td><td>up</td>" in row  # admin up, oper up
    switch.set_link(False)
    try:
        deadline = time.monotonic() + 20  # the kernel takes a moment to carry the peer's state over
        while time.monotonic() < deadline:
            host.collect()
            row = plain_cells(host.page("/network").split(f">{port}<", 1)[1].split("</tr>", 1)[0])
            if "<td>up</td><td>up</td>" not in row:
                break
            time.sleep(0.3)
        assert "<td>up</td><td>down</td>" in row or "<td>up</td><td>lowerLayerDown</td>" in row, row
    finally:
        switch.set_link(True)


@pytest.fixture(scope="module")
def routers() -> Iterator[FrrPair]:
    with running(FrrPair, "frr") as pair:
        yield pair


def peer_row(page: str, peer: str) -> str:
    return page.split(peer, 1)[1].split("</tr>", 1)[0]


def test_the_network_page_follows_bgpd_from_established_to_down_and_names_the_peer(tmp_path: Path,
                                                                                  routers: FrrPair) -> None:
    host = Host(tmp_path, "frr", {"enabled": True, "vtysh": routers.vtysh("A"), "command_timeout": 10})
    deadline = time.monotonic() + 90  # bgpd's first OPEN exchange
    while time.monotonic() < deadline:
        host.collect()
        page = host.page("/network")
        if "10.199.0.2" in page and "Established" in peer_row(page, "10.199.0.2"):
            break
        time.sleep(1)
    assert "Established" in peer_row(page, "10.199.0.2") and "rtrB-v4" in page
    assert "Established" not in peer_row(page, "10.199.0.3")  # "never-up": nobody listens there
    routers.stop_b()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            host.collect()
            page = host.page("/network")
            if "Established" not in peer_row(page, "10.199.0.2"):
                break
            time.sleep(1)
        assert "Established" not in peer_row(page, "10.199.0.2")
        down = {c.subject for c in Conditions().build(host.snap) if c.rule == "bgp_peer_down"}
        assert any(s.endswith("/10.199.0.2") for s in down)
    finally:
        routers.start_b()


def test_a_guests_page_opens_with_the_alert_that_fires_for_it_not_a_green_stopped(tmp_path: Path) -> None:
    """While pve_guest_down fired for VM 107, /entity/pve_vm/107 opened with a green "✔ stopped":
    its headline was built from stored fields and never read the judgement."""
    from tests.peers.pve import TOKEN_ID, PveStandin

    with running(PveStandin, "pve") as api:
        api.write("nodes/pve2/qemu/103/config", {"name": "win11", "onboot": 1})  # stopped, set to start at boot
        host = Host(tmp_path, "proxmox", {"url": api.url, "token_id": TOKEN_ID, "token_secret_file":
                                          str(api.secret_file), "ca_file": str(api.ca_file)})
        host.sched.store = host.app.state.store
        host.collect()
        host.app.state.runtime.alert_tick()
        page = host.page("/entity/pve_vm/103")
        head = re.search(r'<p class="callout (\w+) headline"[^>]*>.*?<strong>(.*?)</strong>', page, re.S)
        assert head is not None
        assert head.group(1) == "failing", head.group(0)
        assert "is stopped; it is set to start at boot" in head.group(2)
        assert 'data-level="failing"' in page and 'data-subject="103"' in page
