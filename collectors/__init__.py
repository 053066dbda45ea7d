"""The collectors: one package per source under its domain (host/, disks/, network/, home/),
each exporting a `CollectorPlugin` registered under the entry point group
`rackpulse.collectors` (see plugin.py). One name is the plug-in, the config section
([collectors.<name>]) and the scheduler's name for it."""

from __future__ import annotations

import functools
from typing import Any

from collectors.base import Collector, MetricSpec, Runner, run_command
from collectors.plugin import CollectorPlugin, discover


@functools.cache
def plugins() -> dict[str, CollectorPlugin]:
    return discover()


def build_collectors(cfg: Any, runner: Runner = run_command) -> dict[str, Collector]:
    """Every enabled collector, by name, in the order of the config's sections."""
    out = {}
    for name in type(cfg.collectors).model_fields:
        section = getattr(cfg.collectors, name)
        plugin = plugins().get(name)
        if plugin is None or not section.enabled:
            continue
        run = runner
        if runner is run_command:  # the real runner: with this collector's output cap
            run = functools.partial(run_command, max_bytes=section.command_max_bytes)
        out[name] = plugin.build(cfg, run)
    return out


def metric_specs(name: str) -> dict[str, MetricSpec]:
    """The declared metrics of collector ``name`` (for a server storing what agents collected:
    HELP, TYPE, whether to store); empty for a name this installation does not know."""
    plugin = plugins().get(name)
    return dict(plugin.collector.metrics) if plugin else {}
