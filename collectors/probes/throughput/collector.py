"""Scheduled iperf3 tests: each test runs when its own interval has passed, one test at a time
on this host (two at once would share the link and both read low), and its last result stays
on the page and in /metrics until the next run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    MetricSpec,
    NoData,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.probes.throughput.config import ThroughputConfig, ThroughputTest
from collectors.probes.throughput.iperf3 import iperf3_argv, parse_iperf3
from collectors.probes.throughput.state import IperfRun, ThroughputState
from collectors.state import State

# One iperf3 test at a time in this process, whichever collector instance asks.
ONE_AT_A_TIME = threading.Lock()


class ThroughputCollector(Collector):
    name: ClassVar[str] = "throughput"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_throughput_bytes_per_second": MetricSpec("Throughput of the test's last run, as received, in "
                                                             "bytes per second (x 8 for bit/s)."),
        "rackpulse_throughput_retransmits": MetricSpec("TCP retransmits in the test's last run."),
        "rackpulse_throughput_baseline_ratio": MetricSpec("Last throughput as a share of the test's baseline."),
        "rackpulse_throughput_success": MetricSpec("1 if the test's last run finished.", states=("failed", "ran")),
        "rackpulse_throughput_last_run_timestamp_seconds": MetricSpec("When the test last ran."),
    }

    def __init__(self, cfg: ThroughputConfig, runner: Runner = run_command,
                 clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.runner, self.clock = cfg, runner, clock
        self._last: dict[str, IperfRun] = {}  # test name -> its last run

    def restore(self, state: State) -> None:
        """After a restart, tests keep their schedule: a 6-hourly test does not run again at once."""
        if isinstance(state, ThroughputState):
            for t in state.tests:
                if t.ran_at:
                    self._last[t.name] = t

    def due(self, test: ThroughputTest, now: float) -> bool:
        last = self._last.get(test.name)
        return last is None or last.ran_at is None or now - last.ran_at >= test.interval

    def collect(self) -> CollectResult:
        if not self.cfg.tests:
            raise NoData("no throughput tests configured ([[collectors.throughput]])")
        for test in self.cfg.tests:
            if self.due(test, self.clock()):
                with ONE_AT_A_TIME:
                    self._last[test.name] = self._run(test)
        result = CollectResult()
        views = []
        for test in self.cfg.tests:
            last = self._last.get(test.name)
            if last is None:
                continue
            view = last.model_copy(update={"next_at": (last.ran_at or 0.0) + test.interval})
            views.append(view)
            result.samples.extend(test_samples(view))
        result.state = ThroughputState(tests=views)
        return result

    def _run(self, test: ThroughputTest) -> IperfRun:
        direction = "download" if test.reverse else "upload"
        view = IperfRun(name=test.name, server=f"{test.server}:{test.port}", direction=direction,
                       baseline_mbps=test.baseline_mbps, low_ratio=test.low_ratio, ran_at=self.clock())
        argv = iperf3_argv(self.cfg.iperf3, test.server, test.port, test.duration, test.reverse)
        try:
            res = self.runner(argv, test.duration + 30)
            # iperf3 prints its JSON (with "error" when it failed) on standard output.
            got = parse_iperf3(res.stdout if res.stdout.strip() else res.stderr)
        except CollectorError as exc:
            return view.model_copy(update={"error": str(exc)})
        mbps = got.received_bps / 1e6
        return view.model_copy(update={"ok": True, "mbps": round(mbps, 3), "retransmits": got.retransmits,
                                       "ratio": round(mbps / test.baseline_mbps, 4) if test.baseline_mbps else None})


def test_samples(v: IperfRun) -> list[Sample]:
    name = v.name
    out = [Sample.of("rackpulse_throughput_success", 1 if v.ok else 0, test=name)]
    if v.ran_at is not None:
        out.append(Sample.of("rackpulse_throughput_last_run_timestamp_seconds", v.ran_at, test=name))
    if v.ok:
        if v.mbps is not None:
            out.append(Sample.of("rackpulse_throughput_bytes_per_second", v.mbps * 1e6 / 8, test=name,
                                 direction=v.direction))
        if v.retransmits is not None:
            out.append(Sample.of("rackpulse_throughput_retransmits", v.retransmits, test=name))
        if v.ratio is not None:
            out.append(Sample.of("rackpulse_throughput_baseline_ratio", v.ratio, test=name))
    return out


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.throughput]."""
    return ThroughputCollector(c, runner)
