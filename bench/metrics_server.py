"""A rackpulse web server whose snapshot holds N series (for the /metrics benchmark).

The exposition is rendered once, as the scheduler does after a collection; scrapes then
only send bytes. usage: python bench/metrics_server.py PORT [SERIES]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvicorn  # noqa: E402

from app.config import load_config  # noqa: E402
from app.exposition import render_families  # noqa: E402
from app.snapshot import CollectorStatus, Snapshot  # noqa: E402
from app.web.app import create_app  # noqa: E402
from collectors.base import Sample  # noqa: E402
from collectors.disks.smart.collector import SmartCollector  # noqa: E402


def main() -> None:
    port = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    d = tempfile.mkdtemp()
    cfg = load_config(None, {"host": "bench", "storage": {"url": f"sqlite:///{d}/m.db"}})
    snap = Snapshot(host="bench")
    samples = [Sample.of("rackpulse_disk_smart_attribute_raw", float(i % 97), serial=f"ZA{i // 10:05d}",
                         attribute=str(i % 10)) for i in range(n)]
    snap.blocks["smart"] = render_families(samples, SmartCollector.metrics, "bench")
    snap.statuses["smart"] = CollectorStatus("smart", 300, 60, up=True, last_success=1.0, duration=0.5)
    snap.rebuild_metrics()
    app = create_app(cfg, collect=False, snapshot=snap)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
