"""libvirt guests through virsh: `domstats --raw` for every guest's state and counters, and
`list --all --autostart --name` for which of them should be running. virsh, not libvirt-python:
its output is a documented contract, and the binding needs libvirt's headers to build from PyPI.

A host without libvirt (no virsh, or no daemon to connect to) is "no data", not a failure."""

from __future__ import annotations

import fnmatch
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    CommandNotFound,
    Entity,
    MetricSpec,
    NoData,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.host.libvirt.config import LibvirtConfig
from collectors.host.libvirt.state import DomainView, LibvirtState
from collectors.host.libvirt.virsh import STATES, DomainStats, VirshFormatError, parse_domstats, parse_names

# What virsh says when there is no hypervisor to reach on this host (libvirtd not installed or
# not running): the source is absent. Anything else (a permission, a wrong URI) is a failure.
ABSENT = ("Failed to connect socket", "No such file or directory", "no connection driver available")


class LibvirtCollector(Collector):
    name: ClassVar[str] = "libvirt"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_libvirt_domain_state": MetricSpec("A guest's state (virDomainState).", states=STATES),
        "rackpulse_libvirt_domain_expected": MetricSpec("1 when the guest should be running (autostart, or in "
                                                        "expect_running).", states=("optional", "expected")),
        "rackpulse_libvirt_domain_vcpus": MetricSpec("A guest's virtual CPUs now."),
        "rackpulse_libvirt_domain_cpu_seconds_total": MetricSpec("CPU time the guest used since it started.",
                                                                 "counter"),
        "rackpulse_libvirt_domain_memory_bytes": MetricSpec("The guest's memory now (its balloon's size)."),
        "rackpulse_libvirt_domain_memory_rss_bytes": MetricSpec("What the guest's process holds on the host."),
        "rackpulse_libvirt_domain_block_read_bytes_total": MetricSpec("Bytes the guest read from its disks.",
                                                                      "counter"),
        "rackpulse_libvirt_domain_block_write_bytes_total": MetricSpec("Bytes the guest wrote to its disks.",
                                                                       "counter"),
        "rackpulse_libvirt_domain_network_receive_bytes_total": MetricSpec("Bytes the guest's interfaces received.",
                                                                           "counter"),
        "rackpulse_libvirt_domain_network_transmit_bytes_total": MetricSpec("Bytes the guest's interfaces sent.",
                                                                            "counter"),
    }

    def __init__(self, cfg: LibvirtConfig, runner: Runner = run_command) -> None:
        self.cfg, self.runner = cfg, runner

    def _virsh(self, *args: str) -> str:
        argv = [*self.cfg.virsh, "-c", self.cfg.uri, *args]
        try:
            res = self.runner(argv, self.cfg.command_timeout)
        except CommandNotFound as exc:
            raise NoData(f"{exc} (no libvirt here)") from None
        err = res.stderr.decode("utf-8", "replace").strip()
        if res.returncode != 0:
            first = next((line for line in err.splitlines() if line.strip()), f"exit {res.returncode}")
            if any(a in err for a in ABSENT):
                raise NoData(f"no libvirt to connect to at {self.cfg.uri}: {first[:200]}")
            raise CollectorError(f"virsh {args[0]} ({self.cfg.uri}): {first[:300]}")
        return res.stdout.decode("utf-8", "replace")

    def collect(self) -> CollectResult:
        try:
            stats = parse_domstats(self._virsh("domstats", "--raw"))
        except VirshFormatError as exc:
            raise CollectorError(f"virsh domstats: {exc}") from None
        autostart = set(parse_names(self._virsh("list", "--all", "--autostart", "--name")))
        result = CollectResult()
        views = []
        for d in stats:
            if any(fnmatch.fnmatch(d.name, p) for p in self.cfg.ignore):
                continue
            v = view(d, d.name in autostart, d.name in autostart or d.name in self.cfg.expect_running)
            views.append(v)
            if d.bad:  # once per guest and run, every refused key in one line
                bad = ", ".join(f"{k}={val[:20]}" for k, val in sorted(d.bad.items())[:8])
                result.warnings.append(f"guest {d.name}: bad reads skipped (not a finite number of zero or more): "
                                       f"{bad}{' ...' if len(d.bad) > 8 else ''}")
            self._samples(v, d, result)
        missing = [n for n in self.cfg.expect_running if n not in {d.name for d in stats}]
        for name in missing:  # expected, and not even defined: as down as a guest can be
            v = DomainView(name=name, state="no state", reason="not defined", expected=True)
            views.append(v)
            result.samples.append(Sample.of("rackpulse_libvirt_domain_expected", 1, domain=name))
        views.sort(key=lambda v: (v.running, v.name))  # the ones not running first
        result.state = LibvirtState(uri=self.cfg.uri, domains=views)
        return result

    def _samples(self, v: DomainView, d: DomainStats, result: CollectResult) -> None:
        s = result.samples
        lab = {"domain": v.name}
        s.append(Sample.of("rackpulse_libvirt_domain_state", d.state, **lab))
        s.append(Sample.of("rackpulse_libvirt_domain_expected", 1 if v.expected else 0, **lab))
        for metric, value in (("vcpus", v.vcpus), ("cpu_seconds_total", v.cpu_seconds),
                              ("memory_bytes", v.memory_bytes), ("memory_rss_bytes", v.rss_bytes),
                              ("block_read_bytes_total", v.block_read_bytes),
                              ("block_write_bytes_total", v.block_write_bytes),
                              ("network_receive_bytes_total", v.net_rx_bytes),
                              ("network_transmit_bytes_total", v.net_tx_bytes)):
            if value is not None:
                s.append(Sample.of(f"rackpulse_libvirt_domain_{metric}", value, **lab))
        result.entities.append(Entity("vm", v.name, {"state": v.state, "expected": v.expected}))


def _kib(value: float | None) -> float | None:
    return value * 1024 if value is not None else None


def view(d: DomainStats, autostart: bool, expected: bool) -> DomainView:
    cpu_ns = d.number("cpu.time")
    vcpus = d.number("vcpu.current")
    return DomainView(name=d.name, state=d.state_word, reason=d.reason_word, autostart=autostart, expected=expected,
                      vcpus=int(vcpus) if vcpus is not None else None,
                      cpu_seconds=cpu_ns / 1e9 if cpu_ns is not None else None,
                      memory_bytes=_kib(d.number("balloon.current")), memory_max_bytes=_kib(d.number("balloon.maximum")),
                      rss_bytes=_kib(d.number("balloon.rss")),
                      block_read_bytes=d.total("block", "rd.bytes"), block_write_bytes=d.total("block", "wr.bytes"),
                      net_rx_bytes=d.total("net", "rx.bytes"), net_tx_bytes=d.total("net", "tx.bytes"))


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.libvirt]."""
    return LibvirtCollector(c, runner)
