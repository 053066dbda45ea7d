"""[collectors.containers]: every container of a Docker or Podman engine, through its Engine API socket."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from collectors.config import CollectorBase, Seconds


class ContainersConfig(CollectorBase):
    interval: Seconds = 30.0
    # The Engine API's unix socket: Docker's, or Podman's (`systemctl enable --now podman.socket`:
    # /run/podman/podman.sock, or $XDG_RUNTIME_DIR/podman/podman.sock for a user's containers).
    socket: str = "/var/run/docker.sock"
    # One-shot CPU and memory per running container (one request each).
    stats: bool = True
    # More restarts than this within 10 minutes is container_restarting.
    restart_count: Annotated[int, Field(ge=1)] = 3
    # Containers left out, by name; * matches anything ("buildkit_*").
    ignore: list[str] = []
    # Containers whose name and uptime a public /status shows, by name ("media-jellyfin-*").
    public: list[str] = []
    # A container with restart policy always or unless-stopped that someone stopped (`docker stop`,
    # `podman stop`: the engine then leaves it stopped) is container_exited at this level, or not
    # at all with "ignore". One that exited on its own, or that the engine failed to restart, is
    # always critical.
    stopped_on_request: Literal["warning", "critical", "ignore"] = "warning"
    # How many containers are asked at once.
    parallel: Annotated[int, Field(ge=1, le=32)] = 4
