"""Issue 5's figures: (1) one evaluation of every rule over a host with 2,000 series (the
built-in rules over the demo's domains plus user rules over 2,000 samples); (2) 1,000 queued
deliveries to a local HTTP receiver: deliveries per second. Issue 28's: (3) one tick (evaluate,
store, queue) of a storm of 500 failures behind a failing gateway, with and without the
dependency that explains them (the second evaluation it costs); (4) the same 1,000 events
delivered with grouping (alerts.group_wait): notifications sent and events per second.

usage: python bench/alerts.py
"""

from __future__ import annotations

import asyncio
import http.server
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.alerting.channels import Channel  # noqa: E402
from app.alerting.conditions import Conditions, MetricRule  # noqa: E402
from app.alerting.engine import Rule, evaluate  # noqa: E402
from app.alerting.service import Alerting  # noqa: E402
from app.config import load_config  # noqa: E402
from app.demo import story as demo  # noqa: E402
from app.scheduler import Scheduler, Snapshot  # noqa: E402
from app.storage.db import make_engine, upgrade  # noqa: E402
from collectors import build_collectors  # noqa: E402
from collectors.base import Sample  # noqa: E402


def demo_snapshot(root: Path) -> Snapshot:
    cfg = load_config(None, demo.demo_config(root, f"sqlite:///{root / 'd.db'}", 1, 1))
    snap = Snapshot(host=cfg.host)
    colls = {k: v for k, v in build_collectors(cfg).items() if k in ("mdraid", "smart", "bonding", "openvpn", "frr",
                                                                     "hwmon")}
    sched = Scheduler(colls, {n: (60, 30) for n in colls}, snap)
    demo.write_tree(root, demo.story_state(80))
    asyncio.run(sched.run_all_once())
    return snap


def bench_evaluation(root: Path) -> None:
    snap = demo_snapshot(root)
    have = sum(len(v) for v in snap.samples.values())
    # A healthy host: the synthetic sensors sit between 30 and 70 °C, under the user rules' 85.
    snap.samples["synthetic"] = [Sample.of("rackpulse_hwmon_temperature_celsius", 30 + i % 40, chip="c", sensor=f"s{i}")
                                 for i in range(max(0, 2000 - have))]
    n_series = sum(len(v) for v in snap.samples.values())
    user = [MetricRule(Rule(f"u{i}", "warning", 60), "rackpulse_hwmon_temperature_celsius", ">", 85, 80)
            for i in range(5)]
    from app.alerting.conditions import BUILTIN

    rules = {**BUILTIN, **{u.rule.name: u.rule for u in user}}
    conds = Conditions()
    prev: dict[Any, Any] = {}
    times = []
    for i in range(50):
        t0 = time.perf_counter()
        c = conds.build(snap, user, prev, now=1000.0 + i)
        prev, _ = evaluate(c, rules, prev, now=1000.0 + i)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    print(f"alerts_evaluation series={n_series} rules={len(rules)} conditions={len(c)} "
          f"median_ms={statistics.median(times):.2f} p95_ms={times[int(len(times) * 0.95) - 1]:.2f}")


def storm(n: int) -> Snapshot:
    snap = Snapshot(host="nas")
    snap.samples["x"] = [Sample.of("rackpulse_x", 1, thing=t) for t in ["gateway", *(f"svc{i}" for i in range(n))]]
    return snap


def bench_dependencies(root: Path) -> None:
    from app.alerting.dependencies import Dependency, Match

    rule = MetricRule(Rule("probe_down", "critical"), "rackpulse_x", ">", 0)
    dep = Dependency(Match("probe_down", "thing=gateway"), (Match("probe_*"),))
    for name, deps in (("without", []), ("with", [dep])):
        url = f"sqlite:///{root / f'dep-{name}.db'}"
        upgrade(url)
        a = Alerting(make_engine(url), "nas", {}, [rule], [Channel("hook", "http://127.0.0.1:9/")], dependencies=deps)
        a.deliver = lambda now=None: 0  # type: ignore[method-assign]  # queue only
        snap = storm(500)
        times = []
        for i in range(10):
            t0 = time.perf_counter()
            a.tick(snap, now=1000.0 + i)
            times.append((time.perf_counter() - t0) * 1000)
        from sqlalchemy import func, select

        from app.storage.models import outbox
        with a.engine.connect() as c:
            queued = c.execute(select(func.count()).select_from(outbox)).scalar()
        print(f"alerts_storm dependency={name} alerts=501 first_tick_ms={times[0]:.1f} "
              f"next_ticks_median_ms={statistics.median(times[1:]):.1f} notifications_queued={queued}")


def bench_delivery(root: Path, group_wait: float = 0.0) -> None:
    count = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            count[0] += 1
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"sqlite:///{root / f'deliver-{group_wait:g}.db'}"
    upgrade(url)
    rule = MetricRule(Rule("bad", "critical"), "rackpulse_x", ">", 0)
    a = Alerting(make_engine(url), "nas", {}, [rule],
                 [Channel("hook", f"http://127.0.0.1:{server.server_address[1]}/", timeout=5)], group_wait=group_wait)
    snap = Snapshot(host="nas")
    snap.samples["x"] = [Sample.of("rackpulse_x", 1, thing=str(i)) for i in range(1000)]
    a.deliver = lambda now=None: 0  # type: ignore[method-assign]  # queue only
    Alerting.tick(a, snap, now=1000.0)
    del a.deliver
    t0 = time.perf_counter()
    sent = 0
    while sent < 1000:
        n = a.deliver(now=2000.0)
        if n == 0:
            break
        sent += n
    el = time.perf_counter() - t0
    server.shutdown()
    server.server_close()
    print(f"alerts_delivery group_wait={group_wait:g} events=1000 notifications={count[0]} seconds={el:.2f} "
          f"events_per_s={1000 / el:,.0f}")


def main() -> None:
    root = Path(tempfile.mkdtemp())
    bench_evaluation(root)
    bench_delivery(root)
    bench_delivery(root, group_wait=30.0)
    bench_dependencies(root)


if __name__ == "__main__":
    main()
