"""What a real Prometheus spends on the very same samples, and what rackpulse's Gorilla codec
(app/storage/gorilla.py) spends on them: the yardstick for bench/db_size_year.py.

Prometheus's side, as a user would backfill: the samples written as OpenMetrics, made into
blocks with `promtool tsdb create-blocks-from openmetrics`, then a real `prometheus` started on
that directory to compact them (2-hour blocks into larger ones, its own minute-long cycle), and
the blocks' bytes (chunks, index, meta, tombstones) over the samples.

usage (alone): python bench/prom_tsdb.py [--days 3] — 20 sine-wave series at 30 s
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.storage import blocks, gorilla  # noqa: E402

# (metric, labels as rackpulse keeps them: JSON of sorted [key, value] pairs, times, values)
Series = tuple[str, str, Sequence[int], Sequence[float]]
COMPACTION_CYCLE = 60  # Prometheus's tsdb compacts once a minute (tsdb/db.go: the compaction ticker)


def gorilla_bytes(series: Iterable[Series], span: int = blocks.SPAN) -> tuple[int, int]:
    """(bytes, samples) of every series cut in rackpulse's raw spans and encoded."""
    total = samples = 0
    for _, _, times, values in series:
        start = 0
        while start < len(times):
            end = start
            key = times[start] // span
            while end < len(times) and times[end] // span == key:
                end += 1
            total += len(gorilla.encode(times[start:end], values[start:end]))
            samples += end - start
            start = end
    return total, samples


def _openmetrics(series: Iterable[Series], path: Path) -> int:
    by_metric: dict[str, list[Series]] = {}
    for s in series:
        by_metric.setdefault(s[0], []).append(s)
    n = 0
    with path.open("w") as f:
        for metric, group in by_metric.items():
            f.write(f"# TYPE {metric} gauge\n")
            for _, labels, times, values in group:
                lab = ",".join(f'{k}="{v}"' for k, v in json.loads(labels))
                name = f"{metric}{{{lab}}}" if lab else metric
                f.writelines(f"{name} {v!r} {t}\n" for t, v in zip(times, values, strict=True))
                n += len(times)
        f.write("# EOF\n")
    return n


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _blocks(db: Path) -> list[Path]:
    return [p for p in db.iterdir() if (p / "meta.json").exists()]


def prometheus_bytes(series: Iterable[Series], settle: float = COMPACTION_CYCLE) -> tuple[int, int, int, int]:
    """(bytes of the compacted blocks, samples, blocks made by promtool, blocks after compaction)."""
    work = Path(tempfile.mkdtemp(prefix="rackpulse-prom-"))
    try:
        om, db = work / "samples.om", work / "data"
        samples = _openmetrics(series, om)
        subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(om), str(db)],
                       check=True, stdout=subprocess.DEVNULL)
        om.unlink()
        made = len(_blocks(db))
        (work / "prometheus.yml").write_text("global: {}\n")
        port = _free_port()
        proc = subprocess.Popen(["prometheus", f"--config.file={work / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={db}", "--storage.tsdb.retention.time=100y",
                                 f"--web.listen-address=127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # Done when the block count has held for a whole compaction cycle (and a margin).
            last, since = len(_blocks(db)), time.monotonic()
            deadline = time.monotonic() + 10 * settle
            while time.monotonic() < deadline:
                time.sleep(2)
                now = len(_blocks(db))
                if now != last:
                    last, since = now, time.monotonic()
                elif time.monotonic() - since > settle + 15 and _compactions(port) > 0:
                    break
        finally:
            proc.terminate()
            proc.wait(30)
        size = sum(f.stat().st_size for b in _blocks(db) for f in b.rglob("*") if f.is_file())
        return size, samples, made, len(_blocks(db))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _compactions(port: int) -> float:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/metrics")
        for line in c.getresponse().read().decode().splitlines():
            if line.startswith("prometheus_tsdb_compactions_total "):
                return float(line.split()[1])
    except OSError:
        pass
    return 0.0


def compare(series: Callable[[], Iterable[Series]]) -> None:
    """Both lines, as db_size_year prints them; ``series`` is called once for each (a week of a
    host's raw samples is made again rather than held twice)."""
    g, n = gorilla_bytes(series())
    print(f"  {'gorilla':10} sample     bytes/sample= {g / n:.2f}  (rackpulse's codec alone, {n:,} samples in "
          f"{blocks.SPAN // 3600}-hour spans)")
    if shutil.which("promtool") is None or shutil.which("prometheus") is None:
        print("  prometheus: promtool or prometheus not installed (scripts/install-test-peers.sh installs them)")
        return
    size, samples, made, after = prometheus_bytes(series())
    print(f"  {'prometheus':10} sample     bytes/sample= {size / samples:.2f}  ({samples:,} samples; "
          f"promtool made {made} blocks, prometheus compacted them into {after})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=float, default=3)
    ap.add_argument("--series", type=int, default=20)
    args = ap.parse_args()
    end = 1_790_000_000 // 7200 * 7200
    times = list(range(end - int(args.days * 86400), end, 30))
    compare(lambda: (("bench_sine", json.dumps([["i", str(i)]]), times,
                      [round(50 + 10 * math.sin(t / 3600 + i), 2) for t in times]) for i in range(args.series)))


if __name__ == "__main__":
    os.environ.setdefault("TZ", "UTC")
    main()
