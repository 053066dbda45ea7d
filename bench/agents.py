"""(9) Many agents, one server: N simulated agents push batches over loopback HTTP to a real
`rackpulse serve` process, on PostgreSQL and on SQLite.

Each simulated agent is a thread with one keep-alive connection sending what a real agent
sends: rackpulse-batch/1, gzip, one collector run per batch with ``--series`` samples,
a state document and 20 inventory entities, sequence numbers from 1. Three phases:

  nominal   every agent sends one batch per ``--interval`` (50 x 500 every 15 s: the issue's load)
  target    the batch rate that makes ``--rate`` samples/s (default 20,000), open loop
  saturate  every agent sends back to back (closed loop): the most the server takes

The server runs with the default alert interval (15 s) and maintenance interval (300 s).
Printed per phase: batches, accepted samples/s, batch latency p50/p99 (request to answer),
server CPU (cores used: utime+stime over wall time, from /proc) and RSS (VmRSS, and VmHWM).

usage: python bench/agents.py [--db sqlite|postgresql|both] [--agents 50] [--series 500]
                              [--interval 15] [--rate 20000] [--seconds 30]
                              [--phases nominal,target,saturate]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import http.client
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, text  # noqa: E402

from app.ingest import agents  # noqa: E402
from app.storage.db import make_engine, upgrade  # noqa: E402
from tests.agent_hosts import free_port, get_json, rackpulse, server_config, stop, wait_for  # noqa: E402

PG_ADMIN = os.environ.get("RACKPULSE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
TICKS = os.sysconf("SC_CLK_TCK")


class SimAgent(threading.Thread):
    def __init__(self, host: str, token: str, port: int, series: int) -> None:
        super().__init__(daemon=True)
        self.host, self.token, self.port, self.series = host, token, port, series
        self.seq = 0
        self.instance = uuid.uuid4().hex[:16]
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.rnd = random.Random(host)
        self.labels = [{"sensor": f"s{i % 50}", "chip": f"chip{i // 50}"} for i in range(series)]
        # The hwmon collector's state as the server's power page reads it (rails, fans, sensors).
        self.state = {"rails": [{"name": f"rail{i}", "volts": 12.1, "ok": True, "min": 11.5, "max": 13.0,
                                 "source": f"chip0/in{i}"} for i in range(4)],
                      "fans": [{"name": f"fan{i}", "rpm": 1200.0, "stalled": False, "why": ""} for i in range(3)],
                      "sensors": [{"chip": f"chip{i // 50}", "name": f"temp{i}", "label": f"s{i % 50}", "kind": "temp",
                                   "value": 40.0, "attrs": {}} for i in range(50)]}
        self.entities = [["sensor", f"chip{i}/s{i}", {"label": f"s{i}", "chip": f"chip{i}"}] for i in range(20)]
        self.latencies: list[float] = []
        self.accepted = 0
        self.errors = 0
        self.schedule: tuple[float, float, float] | None = None  # (start, period, end); period 0 = closed loop

    def body(self) -> bytes:
        self.seq += 1
        now = time.time()
        # Samples are keyed by whole seconds: at saturation an agent sends several batches a
        # second, so its clock steps one second per batch (a real agent runs each collector
        # at most once a second), and every sample sent is a new one to store.
        self.clock = max(now, getattr(self, "clock", 0.0) + 1.0)
        rec = {"seq": self.seq, "kind": "run", "collector": "hwmon", "started": self.clock, "duration": 0.05, "ok": True,
               "interval": 15.0, "samples": [["rackpulse_hwmon_temperature_celsius", lab, round(self.rnd.uniform(0, 100), 2)]
                                             for lab in self.labels],
               "state": self.state, "entities": self.entities}
        batch = {"format": "rackpulse-batch/1", "host": self.host, "agent_version": "bench", "instance": self.instance,
                 "sent_at": now, "records": [rec]}
        return gzip.compress(json.dumps(batch, separators=(",", ":")).encode(), 5)

    def send(self) -> None:
        payload = self.body()
        t = time.perf_counter()
        for attempt in (1, 2):  # like the real agent: one retry on a fresh connection
            try:
                self.conn.request("POST", "/api/v1/ingest", body=payload, headers={
                    "Authorization": f"Bearer {self.token}", "Content-Encoding": "gzip",
                    "Content-Type": "application/json"})
                resp = self.conn.getresponse()
                data = resp.read()
                break
            except (OSError, http.client.HTTPException):
                self.conn.close()
                if attempt == 2:
                    self.errors += 1
                    return
        self.latencies.append(time.perf_counter() - t)
        if resp.status == 200:
            self.accepted += json.loads(data)["samples"]
        else:
            self.errors += 1

    def run(self) -> None:
        assert self.schedule is not None
        start, period, end = self.schedule
        nxt = start
        while True:
            now = time.time()
            if now >= end:
                return
            if period and now < nxt:
                time.sleep(nxt - now)
                continue
            self.send()
            nxt += period


def proc_stats(pid: int) -> tuple[float, float, float]:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS
    status = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    return cpu, int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def postgres_cpu() -> dict[int, float]:
    """CPU seconds of every postgres process on the machine (the server's backends, WAL writer, ...), by pid."""
    total: dict[int, float] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                head, rest = f.read().rsplit(")", 1)
            if head.split("(", 1)[1].startswith("postgres"):
                fields = rest.split()
                total[int(d)] = (int(fields[11]) + int(fields[12])) / TICKS
        except (OSError, IndexError):
            continue
    return total


def phase(name: str, pid: int, port: int, tokens: dict[str, str], series: int, period: float,
          seconds: float) -> None:
    sims = [SimAgent(h, t, port, series) for h, t in tokens.items()]
    for s in sims:  # continue each agent's numbering and clock from the previous phase
        s.instance = "bench-" + s.host
        s.seq, s.clock = PHASE_SEQ.get(s.host, 0), CLOCKS.get(s.host, 0.0)
    start = time.time() + 0.5
    for i, s in enumerate(sims):
        # spread the agents over the period, as real ones drift apart
        s.schedule = (start + (period * i / len(sims) if period else 0), period, start + seconds)
    cpu0, _, _ = proc_stats(pid)
    pg0, me0 = postgres_cpu(), time.process_time()
    t0 = time.time()
    for s in sims:
        s.start()
    for s in sims:
        s.join()
    wall = time.time() - t0
    cpu1, rss, hwm = proc_stats(pid)
    # processes that ended in between are not counted (an undercount, never negative)
    pg = sum(c - pg0.get(p, 0.0) for p, c in postgres_cpu().items()) / wall
    me = (time.process_time() - me0) / wall
    for s in sims:
        PHASE_SEQ[s.host], CLOCKS[s.host] = s.seq, s.clock
    lat = sorted(x for s in sims for x in s.latencies)
    acc = sum(s.accepted for s in sims)
    errs = sum(s.errors for s in sims)
    p = (lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000) if lat else (lambda q: float("nan"))
    print(f"  {name:<9} {len(lat):>6} batches  {acc / seconds:>9,.0f} samples/s accepted  "
          f"latency p50 {p(0.5):6.1f} ms  p99 {p(0.99):6.1f} ms  max {p(1.0):6.1f} ms  "
          f"server CPU {(cpu1 - cpu0) / wall:4.2f} cores  RSS {rss:5.0f} MB (peak {hwm:.0f})  errors {errs}  "
          f"[postgres {pg:4.2f}, load generator {me:4.2f} cores]", flush=True)


PHASE_SEQ: dict[str, int] = {}
CLOCKS: dict[str, float] = {}


@contextlib.contextmanager
def bench_database(kind: str, tmp: Path, hosts: int) -> Iterator[tuple[str, dict[str, str]]]:
    """A new database (SQLite in tmp, or a PostgreSQL database of its own, dropped after), migrated,
    with a token for each of `hosts` agent hosts: (url, host -> token)."""
    pg_name = None
    if kind == "sqlite":
        url = f"sqlite:///{tmp / 'server.db'}"
    else:
        pg_name = f"rackpulse_bench_{uuid.uuid4().hex[:8]}"
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{pg_name}"'))
        url = PG_ADMIN.rsplit("/", 1)[0] + f"/{pg_name}"
    try:
        upgrade(url)
        engine = make_engine(url)
        tokens = {f"agent-{i:03d}": agents.issue(engine, f"agent-{i:03d}") for i in range(hosts)}
        engine.dispose()
        yield url, tokens
    finally:
        if pg_name:
            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)'))
            admin.dispose()


def run_db(kind: str, args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="rackpulse-bench-agents-"))
    with bench_database(kind, tmp, args.agents) as (url, tokens):
        serve_and_push(kind, url, tokens, tmp, args)


def serve_and_push(kind: str, url: str, tokens: dict[str, str], tmp: Path, args: argparse.Namespace) -> None:
    port = free_port()
    server = rackpulse("serve", "--config", str(server_config(tmp / "server.toml", url, port, test_speed=False,
                                                            silent_after=60)),
                       log=tmp / "server.log")
    PHASE_SEQ.clear()
    CLOCKS.clear()
    try:
        wait_for(lambda: get_json(f"http://127.0.0.1:{port}/healthz"), what="server")
        print(f"{kind}: {args.agents} agents x {args.series} series; server pid {server.pid}", flush=True)
        periods = {"nominal": args.interval, "target": args.agents * args.series / args.rate, "saturate": 0}
        for name in args.phases.split(","):
            phase(name, server.pid, port, tokens, args.series, periods[name], args.seconds)
        eng = make_engine(url)
        with eng.connect() as c:
            n = c.execute(text("SELECT count(*) FROM sample")).scalar()
        eng.dispose()
        sent = sum(PHASE_SEQ.values())
        print(f"  stored {n:,} samples from {sent:,} batches ({n / max(sent, 1):.0f} per batch)", flush=True)
    finally:
        stop(server)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--agents", type=int, default=50)
    ap.add_argument("--series", type=int, default=500)
    ap.add_argument("--interval", type=float, default=15.0)
    ap.add_argument("--rate", type=float, default=20_000)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--phases", default="nominal,target,saturate",
                    help="which phases, in order (e.g. --phases target --seconds 330: sustained, across a rollup)")
    args = ap.parse_args()
    print("== bench/agents.py: simulated agents -> rackpulse serve over loopback HTTP")
    for kind in (("postgresql", "sqlite") if args.db == "both" else (args.db,)):
        run_db(kind, args)


if __name__ == "__main__":
    # `timeout 300 python bench/...` sends SIGTERM: as an exception, so the `finally` blocks stop
    # the servers and agents this bench started (they run in sessions of their own and would
    # otherwise be left running, as two once were for an hour).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
