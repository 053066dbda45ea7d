"""A collector is a plug-in: a `CollectorPlugin` its module exports, registered under the
entry point group `rackpulse.collectors` (pyproject.toml's [project.entry-points]). A package
of its own can ship one the same way; its config section, [collectors.<name>], is validated
with the model it brings (a `CollectorBase` subclass)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from collectors.base import Collector, Runner
from collectors.config import CollectorBase

GROUP = "rackpulse.collectors"
log = logging.getLogger("rackpulse.collectors")


@dataclass(frozen=True)
class CollectorPlugin:
    name: str  # the config section, the scheduler's name, the metric subsystem
    collector: type[Collector]  # its declared metrics are read from here without building it
    build: Callable[[Any, Runner], Collector]  # (the app's validated Config, the command runner)
    config: type[CollectorBase] | None = None  # a plug-in from elsewhere brings its section's model


def discover() -> dict[str, CollectorPlugin]:
    """Every installed plug-in by name. One that fails to load is logged and left out: a
    broken third-party package must not stop the built-in collectors."""
    found: dict[str, CollectorPlugin] = {}
    for ep in entry_points(group=GROUP):
        try:
            plugin: Any = ep.load()
        except Exception as exc:  # noqa: BLE001
            log.error("collector plug-in %s (%s) failed to load: %s", ep.name, ep.value, exc)
            continue
        if not isinstance(plugin, CollectorPlugin) or plugin.name != ep.name:
            log.error("collector plug-in %s (%s) is not a CollectorPlugin named %r", ep.name, ep.value, ep.name)
            continue
        found.setdefault(ep.name, plugin)
    return found
