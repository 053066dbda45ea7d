"""(30) What one compaction costs the server's memory: 981 series (the demo's two hosts) with four
hours of raw samples at 30 s, folded, then `Store.compact()` packing the two closed spans into
Gorilla blocks (app/storage/blocks.py). Printed: blocks written, seconds, RSS before and after.
A compaction runs each time the blocks' mark moves (every two hours on a live server); what it
leaves behind in RSS is a step of the soak (bench/soak.py).

usage: python bench/compact_rss.py [CHECKOUT]   (another checkout to compare, e.g. a worktree)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from app.storage.db import make_engine, upgrade  # noqa: E402
from app.storage.store import RES_1H, RES_5M, Store  # noqa: E402

NOW = 1_790_000_000 // 7200 * 7200
SERIES = 981


def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def main() -> None:
    url = f"sqlite:///{tempfile.mkdtemp()}/compact.db"
    upgrade(url)
    store = Store(make_engine(url), "nas")
    with store.engine.begin() as conn:
        ids = store.series_ids(conn, [(f"rackpulse_bench_{i}", "[]") for i in range(SERIES)])
    for start in range(NOW - 4 * 3600, NOW, 600):  # as the collectors write: every series each step
        store.write_rows([(sid, t, float(i % 7)) for t in range(start, start + 600, 30) for i, sid in enumerate(ids)])
    store.mark_folded({RES_5M: NOW, RES_1H: NOW + 3600})
    before = rss_mb()
    t0 = time.perf_counter()
    written = store.compact()
    print(f"compact_rss {ROOT.name}: series={SERIES} blocks={written} s={time.perf_counter() - t0:.1f} "
          f"rss_before_mb={before:.1f} rss_after_mb={rss_mb():.1f}")


if __name__ == "__main__":
    main()
