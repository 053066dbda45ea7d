"""Issue 18's remote write cost: CPU per 10,000 samples (read from SQLite, protobuf, snappy,
POST) and samples per second sent, against a local receiver that accepts everything (a
Prometheus would measure its own ingestion instead). A day of 1,000 series at 30 s is sent
from the watermark, as after a day-long outage.
usage: python bench/remote_write.py [--series 1000] [--hours 24]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config import RemoteWriteConfig  # noqa: E402
from app.export.remote_write import RemoteWrite, compress, encode_write_request  # noqa: E402
from app.storage.db import make_engine, upgrade  # noqa: E402
from app.storage.store import Store  # noqa: E402
from collectors.base import Sample  # noqa: E402


class Sink(BaseHTTPRequestHandler):
    bytes_in = 0

    def do_POST(self) -> None:  # noqa: N802
        Sink.bytes_in += len(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=1000)
    ap.add_argument("--hours", type=float, default=24)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp())
    url = f"sqlite:///{folder / 'bench.db'}"
    upgrade(url)
    st = Store(make_engine(url), "nas")
    now = int(time.time())
    start = now - int(args.hours * 3600)
    samples = [Sample.of("rackpulse_disk_temperature_celsius", 30, serial=f"S{i:05d}") for i in range(args.series)]
    with st.engine.begin() as c:
        for ts in range(start, now, 30):
            st.write_samples(c, ts, samples)
    total = args.series * len(range(start, now, 30))

    body = encode_write_request(((("__name__", "m"), ("host", "nas"), ("serial", f"S{i}")), [(t * 1000, 30.0)
                                 for t in range(10)]) for i in range(1000))
    t0 = time.process_time()
    for _ in range(10):
        compress(encode_write_request(((("__name__", "m"), ("host", "nas"), ("serial", f"S{i}")),
                                       [(t * 1000, 30.0) for t in range(10)]) for i in range(1000)))
    encode_ms = (time.process_time() - t0) * 1000 / 10
    print(f"encode + snappy, 10k samples: {encode_ms:.1f} ms CPU ({len(body)} B protobuf -> "
          f"{len(compress(body))} B on the wire)")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    rw = RemoteWrite(RemoteWriteConfig(url=f"http://127.0.0.1:{server.server_port}/api/v1/write",
                                       max_backlog_hours=args.hours + 1), st.engine)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    sent = 0
    while sent < total:
        n = rw.tick(now=now + 60, budget_seconds=3600)
        if n == 0:
            break
        sent += n
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    server.shutdown()
    print(f"catch-up of {args.hours:g} h x {args.series} series: {sent} of {total} samples in {wall:.1f} s "
          f"({sent / wall:,.0f} samples/s), {cpu * 1000 / (sent / 10_000):.1f} ms CPU per 10k samples "
          f"(read + encode + compress + POST), {rw.stats.requests} requests, {Sink.bytes_in / 1e6:.1f} MB sent")


if __name__ == "__main__":
    main()
