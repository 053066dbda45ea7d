"""The collectors: one package per source under its domain (host/, disks/, network/, home/),
each exporting a `CollectorPlugin` registered under the entry point group
`rackpulse.collectors` (see plugin.py). One name is the plug-in, the config section
([collectors.<name>]) and the scheduler's name for it."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

from collectors.base import Collector, MetricSpec, Runner, run_command
from collectors.context import BayRules, HostConfig, HostContext, PingBook, SavedEntries
from collectors.location import BayRule, bay_rules
from collectors.plugin import CollectorPlugin, discover

_only: frozenset[str] | None = None


def load_only(names: Iterable[str]) -> None:
    """From now on this process knows only these plug-ins: an agent imports the plug-ins its
    config enables and no other (each costs its host memory: typed states, configs)."""
    global _only
    _only = frozenset(names)
    plugins.cache_clear()
    all_metric_specs.cache_clear()


@functools.cache
def plugins() -> dict[str, CollectorPlugin]:
    return discover(_only)


def host_context(cfg: HostConfig, saved: Iterable[BayRule] | BayRules = (), entries: SavedEntries | None = None,
                 pings: PingBook | None = None, states: Mapping[str, object] | None = None) -> HostContext:
    """What the plug-ins may know of this host, from the app's Config (which they never see), the
    bay labels saved from disk pages and the config entries made in the browser (`entries`)."""
    bays = saved if isinstance(saved, BayRules) else BayRules(saved=saved)
    bays.configured = bay_rules(b.model_dump() for b in cfg.disks.bays)
    accepted: dict[str, dict[str, float]] = {}
    for a in cfg.disks.accept:
        accepted.setdefault(a.serial, {})[a.attribute] = a.value
    return HostContext(cfg.host, Path(cfg.host_root), bays, accepted, cfg.disk_hot_celsius(),
                       entries if entries is not None else SavedEntries(), pings if pings is not None else PingBook(),
                       states if states is not None else {})


def build_collectors(cfg: HostConfig, runner: Runner = run_command, host: HostContext | None = None,
                     keep: Mapping[str, Collector] | None = None) -> dict[str, Collector]:
    """Every enabled collector, by name, in the order of the config's sections. Each gets its own
    section, the host (`host_context`) and the runner: `build(section, host, runner)`; one
    named in `keep` (a reload: its section did not change) is that object, not built again."""
    host = host or host_context(cfg)
    out = {}
    for name in type(cfg.collectors).model_fields:
        section = getattr(cfg.collectors, name)
        plugin = plugins().get(name)
        if plugin is None or not section.enabled:
            continue
        if keep and name in keep:
            out[name] = keep[name]
            continue
        run = runner
        if runner is run_command:  # the real runner: with this collector's output cap
            run = functools.partial(run_command, max_bytes=section.command_max_bytes)
        out[name] = plugin.build(section, host, run)
    return out


@functools.cache
def all_metric_specs() -> dict[str, MetricSpec]:
    """Every installed plug-in's declared metrics, by metric name."""
    return {m: spec for p in plugins().values() for m, spec in p.collector.metrics.items()}


def metric_specs(name: str) -> dict[str, MetricSpec]:
    """The declared metrics of collector ``name`` (for a server storing what agents collected:
    HELP, TYPE, whether to store); empty for a name this installation does not know."""
    plugin = plugins().get(name)
    return dict(plugin.collector.metrics) if plugin else {}
