"""Issue 16's cost: CPU time of one host-basics cycle (CPU, load, memory, PSI, filesystems,
interfaces, block devices; parse, samples, findings), on this machine's real /proc and on the
demo host's tree. Target: under 5 ms per cycle.
usage: python bench/host_cycle.py [--cycles 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collectors.findings import Judging  # noqa: E402
from collectors.host.basics.collector import HostCollector  # noqa: E402
from collectors.host.basics.demo import write_scene  # noqa: E402
from collectors.host.basics.findings import findings  # noqa: E402


def cycle_ms(collector: HostCollector, cycles: int) -> list[float]:
    out = []
    judging = Judging()
    collector.collect()
    for _ in range(cycles):
        t0 = time.process_time()
        r = collector.collect()
        findings(r.state, judging)
        out.append((time.process_time() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=200)
    args = ap.parse_args()
    demo_root = Path(tempfile.mkdtemp(prefix="rackpulse-bench-host-"))
    write_scene(demo_root, 150.0)
    for name, root in (("this machine's /proc", Path("/")), ("demo host tree", demo_root)):
        c = HostCollector(root)
        ms = sorted(cycle_ms(c, args.cycles))
        r = c.collect()
        print(f"{name}: {len(r.samples)} samples, {len(r.state['filesystems'])} filesystems, "
              f"{len(r.state['interfaces'])} interfaces, {len(r.state['blockdevs'])} block devices")
        print(f"  CPU per cycle: median {statistics.median(ms):.2f} ms, p95 {ms[int(len(ms) * 0.95)]:.2f} ms "
              f"(target < 5 ms)")


if __name__ == "__main__":
    main()
