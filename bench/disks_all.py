"""Issue 29's figure: /disks/all with 500 disks over 20 agent hosts (25 each, the shapes real
smartctl captures give: ATA with its attribute table, one in ten NVMe, a few failing or testing),
rendered through the web app as a browser asks for it. Prints the median and p95 of 200 requests
for the page, the "needs attention" filter and the CSV.

usage: python bench/disks_all.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastapi.testclient import TestClient  # noqa: E402

from app.config import load_config  # noqa: E402
from app.snapshot import Snapshot  # noqa: E402
from app.storage.db import upgrade  # noqa: E402
from app.web.app import create_app  # noqa: E402
from collectors.disks.smart.collector import SmartCollector  # noqa: E402
from collectors.disks.smart.smartctl import parse_smartctl_json  # noqa: E402
from collectors.disks.smart.state import SmartState  # noqa: E402

FIX = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "smartctl"
CAPTURES = ["scrutiny__smart-ata.json", "smartctl_exporter__ST3500418AS_12.json", "scrutiny__smart-fail2.json",
            "telegraf__smartctl__megaraid__response.json", "smartctl_exporter__WDC_WD20EFRX-68EUZN0_17.json",
            "scrutiny__smart-megaraid0.json", "smartctl_exporter__HGST_HUS724020ALE640_28.json",
            "smartctl_exporter__ST3200820AS_16.json", "scrutiny__smart-nvme.json", "scrutiny__smart-ata-date2.json"]


def host_state(host: int, root: Path) -> SmartState:
    """25 disks as the real collector views them (judged, wear and self-tests read)."""
    c = SmartCollector(root)
    disks = []
    for i in range(25):
        parsed = parse_smartctl_json((FIX / CAPTURES[(host + i) % len(CAPTURES)]).read_text())
        view = c._view(parsed, {}, f"/dev/sd{chr(97 + i)}")
        disks.append(view.model_copy(update={"key": f"H{host:02d}D{i:02d}", "serial": f"H{host:02d}D{i:02d}",
                                             "bay": f"bay {i}"}))
    return SmartState(disks=disks)


def timed(client: TestClient, path: str, n: int = 200) -> tuple[float, float, int]:
    times = []
    size = 0
    for _ in range(n):
        t = time.perf_counter()
        r = client.get(path)
        times.append((time.perf_counter() - t) * 1000)
        assert r.status_code == 200, r.status_code
        size = len(r.content)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)], size


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        url = f"sqlite:///{root / 'db.sqlite'}"
        upgrade(url)
        cfg = load_config(None, {"host": "server", "storage": {"url": url}})
        app = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)
        site = app.state.site
        for h in range(20):
            site.agents.snapshots[f"node{h:02d}"] = Snapshot(host=f"node{h:02d}", states={"smart": host_state(h, root)})
        with TestClient(app, base_url="http://127.0.0.1") as client:
            for path in ("/disks/all", "/disks/all?attention=1", "/disks/all?sort=temperature&order=desc",
                         "/disks/all.csv"):
                timed(client, path, 20)  # warm up (templates compiled, plug-ins loaded)
                med, p95, size = timed(client, path)
                print(f"{path:42s} 500 disks / 20 hosts: median {med:6.1f} ms  p95 {p95:6.1f} ms  {size / 1024:6.1f} KiB")


if __name__ == "__main__":
    main()
