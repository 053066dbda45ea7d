"""The probes: every ping, HTTP and TCP check of [collectors.probes], run side by side each poll.

A probe that fails is a sample (rackpulse_probe_success 0) and a reason on the page, not a
collector error: the collector fails only when fping itself cannot run."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
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
from collectors.context import HostContext, SavedEntries
from collectors.probes.checks.config import HttpProbe, PingProbe, ProbesConfig, TcpProbe
from collectors.probes.checks.fping import PingResult, fping_argv, parse_fping
from collectors.probes.checks.reach import Reach, check_http, check_tcp
from collectors.probes.checks.state import Probe, ProbesState, Rtt

KINDS: dict[str, type[PingProbe | HttpProbe | TcpProbe]] = {"ping": PingProbe, "http": HttpProbe, "tcp": TcpProbe}


class ProbesCollector(Collector):
    name: ClassVar[str] = "probes"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_probe_success": MetricSpec("1 if the probe's last run succeeded (ping: at least one answer).",
                                              states=("down", "up")),
        "rackpulse_probe_duration_seconds": MetricSpec("How long the probe's last run took."),
        "rackpulse_probe_loss_ratio": MetricSpec("Share of pings without an answer in the last run, 0..1."),
        "rackpulse_probe_rtt_seconds": MetricSpec("Round-trip time of the answered pings: min, avg, max, p95."),
        "rackpulse_probe_http_status_code": MetricSpec("HTTP status of the last answer."),
        "rackpulse_probe_tls_cert_expiry_timestamp_seconds": MetricSpec("When the server's certificate expires."),
    }

    def __init__(self, cfg: ProbesConfig, runner: Runner = run_command,
                 http: Callable[..., Reach] = check_http, tcp: Callable[..., Reach] = check_tcp,
                 saved: SavedEntries | None = None) -> None:
        self.cfg = cfg
        self.runner = runner
        self.http, self.tcp = http, tcp
        self.saved = saved or SavedEntries()  # probes made in the browser (/monitors)

    def probes(self) -> tuple[list[PingProbe], list[HttpProbe], list[TcpProbe], list[str]]:
        """The config file's probes, then the ones made in the browser (validated by the same
        models); one the config file already names is left out, with a warning saying so."""
        ping, http, tcp = list(self.cfg.ping), list(self.cfg.http), list(self.cfg.tcp)
        names = {p.name for p in ping} | {p.name for p in http} | {p.name for p in tcp}
        saved, warnings = self.saved.checked("probes", KINDS, names, "probe")
        for probe in saved:
            if isinstance(probe, PingProbe):
                ping.append(probe)
            elif isinstance(probe, HttpProbe):
                http.append(probe)
            elif isinstance(probe, TcpProbe):
                tcp.append(probe)
        return ping, http, tcp, warnings

    def collect(self) -> CollectResult:
        cfg = self.cfg
        ping, http, tcp, warnings = self.probes()
        jobs: list[tuple[Callable[[Any], Probe], Any]] = [
            *((self._ping, p) for p in ping), *((self._http, p) for p in http), *((self._tcp, p) for p in tcp)]
        if not jobs:
            raise NoData("no probes configured ([[collectors.probes.ping]], .http, .tcp)")
        with ThreadPoolExecutor(max_workers=min(cfg.parallel, len(jobs)), thread_name_prefix="probe") as pool:
            views = list(pool.map(lambda job: job[0](job[1]), jobs))
        if all(v.kind == "ping" and v.tool_error for v in views):
            raise CollectorError(views[0].tool_error or "fping cannot run")  # only pings, and fping cannot run
        result = CollectResult()
        result.warnings.extend(warnings)
        for v in views:
            result.samples.extend(probe_samples(v))
            if v.tool_error:
                result.warnings.append(f"{v.name}: {v.tool_error}")
        result.state = ProbesState(probes=views, tls_warning_days=cfg.tls_warning_days, checked_at=time.time())
        return result

    def _ping(self, p: PingProbe) -> Probe:
        view = Probe(kind="ping", name=p.name, target=p.target, interface=p.interface, count=p.count,
                     loss_warning=p.loss_warning, rtt_warning_ms=p.rtt_warning_ms)
        argv = fping_argv(self.cfg.fping, [p.target], p.count, p.interval_ms, p.interface,
                          timeout_ms=min(2000, max(100, p.interval_ms * 2)))
        t0 = time.perf_counter()
        try:
            res = self.runner(argv, self.cfg.command_timeout)
        except CollectorError as exc:
            return view.model_copy(update={"ok": False, "seconds": time.perf_counter() - t0, "error": str(exc),
                                           "tool_error": str(exc)})
        seconds = time.perf_counter() - t0
        text = (res.stderr or b"").decode("utf-8", "replace") + "\n" + (res.stdout or b"").decode("utf-8", "replace")
        try:
            answer: PingResult | None = parse_fping(text).get(p.target)
        except CollectorError as exc:
            # fping's exit status 3 is a usage error, 4 a failed system call (-I on a missing
            # interface): the probe cannot run, and fping's own words say why.
            first = text.strip().splitlines()[0] if text.strip() else f"exit {res.returncode}"
            why = f"fping failed (exit {res.returncode}): {first[:200]}" if res.returncode >= 2 else str(exc)
            return view.model_copy(update={"ok": False, "seconds": seconds, "error": why,
                                           "tool_error": why if res.returncode >= 3 else None})
        if answer is None:
            return view.model_copy(update={"ok": False, "seconds": seconds,
                                           "error": "fping said nothing about this target"})
        return view.model_copy(update={
            "ok": answer.received > 0, "seconds": seconds, "sent": answer.sent, "received": answer.received,
            "loss": round(answer.loss, 4),
            "rtt_ms": Rtt(min=answer.min_ms, avg=answer.avg_ms, max=answer.max_ms, p95=answer.p95_ms),
            "rtts_ms": list(answer.rtts_ms), "error": None if answer.received else f"no answer to {answer.sent} pings"})

    def _http(self, p: HttpProbe) -> Probe:
        r = self.http(p.url, p.expect_status, p.expect_text, p.timeout, p.verify_tls)
        return reach_view("http", p.name, p.url, r)

    def _tcp(self, p: TcpProbe) -> Probe:
        r = self.tcp(p.host, p.port, p.tls, p.timeout, p.verify_tls)
        return reach_view("tcp", p.name, f"{p.host}:{p.port}" + (" (TLS)" if p.tls else ""), r)


def reach_view(kind: str, name: str, target: str, r: Reach) -> Probe:
    return Probe(kind=kind, name=name, target=target, ok=r.ok, seconds=r.seconds, error=r.error, status=r.status,
                 cert_expires=r.cert_expires, cert_subject=r.cert_subject)


def probe_samples(v: Probe) -> Sequence[Sample]:
    name, kind = v.name, v.kind
    out = [Sample.of("rackpulse_probe_success", 1 if v.ok else 0, probe=name, kind=kind)]
    if v.seconds is not None:
        out.append(Sample.of("rackpulse_probe_duration_seconds", round(v.seconds, 6), probe=name, kind=kind))
    if kind == "ping" and v.loss is not None:
        out.append(Sample.of("rackpulse_probe_loss_ratio", v.loss, probe=name))
        for stat, ms in (("min", v.rtt_ms.min), ("avg", v.rtt_ms.avg), ("max", v.rtt_ms.max), ("p95", v.rtt_ms.p95)):
            if ms is not None:
                out.append(Sample.of("rackpulse_probe_rtt_seconds", ms / 1000, probe=name, stat=stat))
    if v.status is not None:
        out.append(Sample.of("rackpulse_probe_http_status_code", v.status, probe=name))
    if v.cert_expires is not None:
        out.append(Sample.of("rackpulse_probe_tls_cert_expiry_timestamp_seconds", v.cert_expires, probe=name))
    return out


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.probes]."""
    return ProbesCollector(c, runner, saved=host.saved)
