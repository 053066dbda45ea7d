"""Containers: Docker's or Podman's, through the Engine API socket (state, health, exits, OOM kills, restarts)."""

from pathlib import Path
from typing import Any

from collectors.host.containers import findings
from collectors.host.containers.collector import ContainersCollector, build
from collectors.host.containers.config import ContainersConfig
from collectors.host.containers.state import ContainersState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup


def write_scene(*args: Any, **kwargs: Any) -> Any:
    """The demo's scene (collectors/host/containers/demo.py), imported only when a demo asks."""
    from collectors.host.containers.demo import write_scene as scene

    return scene(*args, **kwargs)


SECTION: Section[ContainersState] = Section("host", "Host", Path(__file__).parent, findings.view)
# What it needs on the host (its README says it: `make docs`).
PERMISSIONS = ("Read and write access to the engine's socket (the docker group, or a socket proxy that allows only "
               "GET: the collector sends nothing else). Podman: `systemctl enable --now podman.socket`.")

PLUGIN = CollectorPlugin(
    "containers", ContainersCollector, build, ContainersConfig, ContainersState,
    domain="host", rank=1, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,  # after the host's basics on /host
    pages=Pages(section=SECTION, monitors=findings.monitors, nouns={"container": "container"}),
    setup=Setup(scene=write_scene))
