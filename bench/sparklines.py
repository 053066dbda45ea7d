"""(24) What the guests' 24-hour lines cost a page: 12 guests, CPU and memory each, from a store
holding two days of minute samples folded into 5-minute rollups. Cold: the first render after the
five minutes a line is kept (each read from the rollups and drawn); kept: every other render.

usage: python bench/sparklines.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.storage.db import make_engine, upgrade  # noqa: E402
from app.storage.store import Store  # noqa: E402
from app.web import sparkline  # noqa: E402
from app.web.sparkline import Sparks  # noqa: E402
from collectors.base import Sample  # noqa: E402

GUESTS = 12


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="rackpulse-bench-"))
    url = f"sqlite:///{tmp / 'r.db'}"
    upgrade(url)
    store = Store(make_engine(url), "nas")
    now = int(time.time())
    with store.engine.begin() as conn:
        for ts in range(now - 2 * 86400, now, 60):
            store.write_samples(conn, ts, [
                *(Sample.of("rackpulse_pve_guest_cpu_ratio", (ts % 600) / 600, vmid=str(v)) for v in range(GUESTS)),
                *(Sample.of("rackpulse_pve_guest_memory_used_bytes", 1e9 + ts % 1000, vmid=str(v)) for v in range(GUESTS))])
    store.make_rollups(now=now)

    def page() -> None:
        spark = Sparks(store)
        for v in range(GUESTS):
            spark("rackpulse_pve_guest_cpu_ratio", {"vmid": v}, "CPU")
            spark("rackpulse_pve_guest_memory_used_bytes", {"vmid": v}, "Memory")

    cold, kept = [], []
    for _ in range(5):
        sparkline._kept.clear()
        t = time.perf_counter()
        page()
        cold.append((time.perf_counter() - t) * 1000)
    for _ in range(50):
        t = time.perf_counter()
        page()
        kept.append((time.perf_counter() - t) * 1000)
    svg = Sparks(store)("rackpulse_pve_guest_cpu_ratio", {"vmid": 1}, "CPU")
    print(f"{2 * GUESTS} sparklines a page: cold {statistics.median(cold):.1f} ms (once per {sparkline.KEEP} s), "
          f"kept {statistics.median(kept):.3f} ms; one line {len(svg)} bytes of SVG")
    store.engine.dispose()


if __name__ == "__main__":
    main()
