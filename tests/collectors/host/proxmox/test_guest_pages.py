"""Each guest on the page: listed worst first, its CPU and memory of the last 24 hours as a small
line beside the value now, and a page of its own with its charts (/entity/pve_vm/<VMID>), through
the same HTTPS stand-in the collector tests read."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.config import load_config
from app.scheduler import Scheduler, Snapshot
from app.storage.db import upgrade
from app.web.app import create_app
from collectors import build_collectors, host_context
from collectors.base import run_command
from collectors.host.proxmox.collector import worst_first
from collectors.host.proxmox.state import PveBackup, PveGuest
from tests.peers import running
from tests.peers.pve import SECRET, TOKEN_ID, PveStandin
from tests.test_web import fetch

NOW = 1795000000.0
H = 3600.0


def guest(vmid: str, **kw: Any) -> PveGuest:
    values: dict[str, Any] = {"vmid": vmid, "name": f"g{vmid}", "type": "qemu", "node": "pve1", "status": "running",
                              "backup_expected": True, "backup": PveBackup(time=NOW - H, storage="pbs"), **kw}
    return PveGuest(**values)


def test_the_guests_are_listed_failing_first_then_warning_then_the_rest_each_by_vmid() -> None:
    guests = [guest("300"), guest("20"), guest("105", status="stopped", onboot=True, expected=True),
              guest("104", backup=PveBackup(time=NOW - 40 * H, storage="pbs")),
              guest("9", status="stopped"), guest("101", backup_failed="ERROR: job failed", backup_failed_at=NOW - H * 2)]
    order = [g.vmid for g in worst_first(guests, NOW, 26 * H)]
    assert order == ["101", "105", "104", "9", "20", "300"]


@pytest.fixture(scope="module")
def pve() -> Iterator[PveStandin]:
    with running(PveStandin, "pve") as peer:
        yield peer


@pytest.fixture(scope="module")
def app(pve: PveStandin, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server whose only collector reads the stand-in cluster, run twice (two points a series)."""
    root = tmp_path_factory.mktemp("guests")
    url = f"sqlite:///{root / 'db.sqlite'}"
    cfg = load_config(None, {"host": "pve-watch", "host_root": str(root), "storage": {"url": url},
                             "collectors": {"proxmox": {"url": pve.url, "token_id": TOKEN_ID,
                                                        "token_secret_file": str(pve.secret_file),
                                                        "ca_file": str(pve.ca_file)}}})
    upgrade(url)
    snap = Snapshot(host=cfg.host)
    server = create_app(cfg, collect=False, snapshot=snap, migrate=False)
    colls = build_collectors(cfg, run_command, host_context(cfg, server.state.site.saved_bays))
    sched = Scheduler(colls, {n: (60, 30) for n in colls}, snap)
    sched.store = server.state.store
    for _ in range(2):
        asyncio.run(sched.run_all_once())
    return server


def test_each_guests_row_links_its_page_and_draws_its_last_24_hours_of_cpu_and_memory(app: Any) -> None:
    page = fetch(app, "/host").text
    row = re.search(r"<tr[^>]*><td[^>]*><a href=\"/entity/pve_vm/100\">VM 100 home-assistant</a>.*?</tr>", page, re.S)
    assert row is not None, page[page.find("Guests"):][:2000]
    # a label's values are bound to their units by no-break spaces ("24\u00a0h"), read as spaces
    sparks = [x.replace("\u00a0", " ") for x in re.findall(r'<svg class="spark"[^>]*aria-label="([^"]+)"', row[0])]
    assert sparks[0].startswith("CPU of VM 100 (home-assistant), last 24 h: peak ") and ", latest " in sparks[0]
    assert re.fullmatch(r"Memory of VM 100 \(home-assistant\), last 24 h: peak [\d.]+ GB, latest [\d.]+ GB", sparks[1])
    assert "<polyline points=" in row[0] or "<circle" in row[0]
    assert '<a href="/entity/pve_ct/102">CT 102 pihole</a>' in page
    # a stopped guest has no CPU samples: no line, and the value says unknown
    stopped = re.search(r"<tr[^>]*><td[^>]*><a href=\"/entity/pve_vm/103\">.*?</tr>", page, re.S)
    assert stopped is not None and 'class="spark"' not in stopped[0]


def test_a_guests_page_draws_its_charts_and_its_counters_as_rates(app: Any) -> None:
    page = fetch(app, "/entity/pve_vm/100").text
    assert "Proxmox VM" in page and "home-assistant" in page
    charts = dict(re.findall(r'data-chart="([^"]+)" data-title="([^"]+)"', page))
    titles = {title: url for url, title in charts.items()}
    assert {"Running", "CPU", "Memory used", "Network received", "Network sent", "Disk read",
            "Disk written"} <= set(titles)
    assert "label=vmid%3D100" in titles["CPU"] and "rate=1" not in titles["CPU"]
    assert "rate=1" in titles["Network received"] and "rate=1" in titles["Disk written"]
    series = fetch(app, titles["CPU"].replace("&amp;", "&")).json()
    assert series["labels"] == {"vmid": "100"} and len(series["ts"]) >= 1


def test_a_container_has_its_page_too(app: Any) -> None:
    page = fetch(app, "/entity/pve_ct/102").text
    assert "Proxmox container" in page and 'data-title="CPU"' in page


def test_the_secret_is_on_no_page(app: Any) -> None:
    for path in ("/host", "/entity/pve_vm/100", "/collectors"):
        assert SECRET not in fetch(app, path).text


def test_a_guest_never_seen_has_no_page(app: Any, tmp_path: Path) -> None:
    assert fetch(app, "/entity/pve_vm/999").status_code == 404
