"""What hostile agent batches cost a real `rackpulse serve` in memory (issue 25's cases):

1. one 15.6 MB body carrying 700,000 series (under max_batch_bytes, over max_batch_items);
2. four such bodies at once; 3. two at once, with /healthz latency meanwhile;
4. an honest 4 MiB batch (what an agent sends by default), for comparison;
5. 10,000 collector names and 400,000 entities sent in batches within the item limit;
6. a batch of 25,000 new series, over max_series_per_host (20,000), refused once, and twenty times in a row.

Each case on a fresh server; figures are the server's peak (VmHWM) and resident memory after.
Prints figures; asserts nothing. Run: .venv/bin/python bench/ingest_memory.py
"""

from __future__ import annotations

import gzip
import http.client
import json
import sys
import threading
import time
from pathlib import Path
from tempfile import TemporaryDirectory

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.batch import FORMAT  # noqa: E402
from tests.agent_hosts import issue_token, rackpulse, rss_mb, server_config, stop, wait_for  # noqa: E402
from tests.peers import free_port  # noqa: E402


def hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def batch(seq: int, samples: list, collector: str = "smart", entities: list | None = None, runs: int = 1) -> bytes:
    recs = [{"seq": seq + k, "kind": "run", "collector": collector, "started": time.time() - 600 + k * 5,
             "duration": 0.1, "ok": True, "samples": samples, "state": {}, "entities": entities or []}
            for k in range(runs)]
    doc = {"format": FORMAT, "host": "ceph1", "agent_version": "bench", "instance": "bench-aaaa1111",
           "sent_at": time.time(), "records": recs}
    return json.dumps(doc, separators=(",", ":")).encode()


def post(port: int, token: str, raw: bytes) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request("POST", "/api/v1/ingest", body=gzip.compress(raw, 1),
                     headers={"Authorization": f"Bearer {token}", "Content-Encoding": "gzip",
                              "Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


def server(tmp: Path) -> tuple[object, int, str]:
    port = free_port()
    cfg = server_config(tmp / "s.toml", f"sqlite:///{tmp / 's.db'}", port, test_speed=False)
    proc = rackpulse("serve", "--config", str(cfg), log=tmp / "s.log")
    wait_for(lambda: http_ok(port), 60, "server")
    return proc, port, issue_token(cfg, "ceph1")


def http_ok(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status == 200
    finally:
        conn.close()


def healthz_ms(port: int) -> float:
    t = time.perf_counter()
    http_ok(port)
    return (time.perf_counter() - t) * 1000


def case(name: str, at_once: int, raw: bytes, probe: bool = False, times: int = 1) -> None:
    with TemporaryDirectory() as d:
        proc, port, token = server(Path(d))
        pid = proc.pid  # type: ignore[attr-defined]
        base = rss_mb(pid)
        codes: list[int] = []
        lat: list[float] = []
        for _ in range(times - 1):
            codes.append(post(port, token, raw))
        threads = [threading.Thread(target=lambda: codes.append(post(port, token, raw))) for _ in range(at_once)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        while probe and any(t.is_alive() for t in threads):
            lat.append(healthz_ms(port))
            time.sleep(0.02)
        for t in threads:
            t.join()
        took = time.perf_counter() - t0
        extra = ""
        if lat:
            lat.sort()
            extra = f"; /healthz meanwhile p50 {lat[len(lat) // 2]:.1f} ms, p99 {lat[int(len(lat) * .99)]:.1f} ms"
        print(f"{name}: answers {sorted(codes)} in {took:.2f} s; RSS {base:.0f} MB before, peak {hwm_mb(pid):.0f} MB, "
              f"{rss_mb(pid):.0f} MB after{extra}")
        stop(proc)  # type: ignore[arg-type]


def names_and_entities() -> None:
    with TemporaryDirectory() as d:
        proc, port, token = server(Path(d))
        pid = proc.pid  # type: ignore[attr-defined]
        base = rss_mb(pid)
        codes: dict[int, int] = {}
        seq = 0
        for i in range(100):  # 10,000 collector names, 100 a batch
            seq += 1
            recs = [{"seq": seq * 100 + j, "kind": "run", "collector": f"c{i * 100 + j}", "started": time.time() - 5,
                     "duration": 0.1, "ok": True} for j in range(100)]
            doc = {"format": FORMAT, "host": "ceph1", "agent_version": "bench", "instance": "bench-aaaa1111",
                   "sent_at": time.time(), "records": recs}
            c = post(port, token, json.dumps(doc).encode())
            codes[c] = codes.get(c, 0) + 1
        for i in range(40):  # 400,000 entities, 10,000 a batch
            seq += 1
            ents = [["disk", f"S{i}-{j}", {"bay": str(j)}] for j in range(10_000)]
            c = post(port, token, batch(seq * 100, [], entities=ents))
            codes[c] = codes.get(c, 0) + 1
        db = Path(d) / "s.db"
        print(f"10,000 collector names + 400,000 entities: answers {dict(sorted(codes.items()))}; RSS {base:.0f} MB "
              f"before, peak {hwm_mb(pid):.0f} MB, {rss_mb(pid):.0f} MB after; database {db.stat().st_size / 1e6:.1f} MB")
        stop(proc)  # type: ignore[arg-type]


def main() -> None:
    hostile = batch(1, [["x", {"i": f"{i:x}"}, 1] for i in range(700_000)])
    print(f"hostile body: {len(hostile) / 1e6:.1f} MB, 700,000 series (under max_batch_bytes, 16.8 MB)")
    # What an agent's backlog batch looks like: many runs of the same few hundred series.
    honest = batch(1, [["rackpulse_disk_temperature_celsius", {"serial": f"ZA{i:06d}K"}, 36.0] for i in range(500)],
                   runs=120)
    print(f"honest body: {len(honest) / 1e6:.1f} MB, 120 runs of 500 series (60,000 samples)")
    case("one hostile body", 1, hostile)
    case("four hostile bodies at once", 4, hostile)
    case("two hostile bodies at once", 2, hostile, probe=True)
    case("one honest 4 MiB batch", 1, honest)
    names_and_entities()
    over = batch(1, [["rackpulse_disk_temperature_celsius", {"serial": f"ZB{i:06d}K"}, 36.0] for i in range(25_000)])
    # once against twenty times: what stays after the first is the allocator keeping its high-water
    # mark (pages of freed objects it reuses), what grows with each refusal would be a leak
    case("a 25,000-series batch over max_series_per_host, once", 1, over, times=1)
    case("a 25,000-series batch over max_series_per_host, twenty times", 1, over, times=20)


if __name__ == "__main__":
    main()
