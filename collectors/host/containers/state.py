"""What the containers collector knows of each container: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class ContainerView(Record):
    id: str  # the first 12 characters, as `docker ps` shows it
    name: str
    image: str = ""
    project: str | None = None  # com.docker.compose.project
    service: str | None = None  # com.docker.compose.service
    state: str = ""  # created, running, paused, restarting, exited, removing, dead
    health: str | None = None  # healthy, unhealthy, starting; None without a health check
    health_log: str | None = None  # the last health check's output, cut short
    failing_streak: int | None = None
    exit_code: int | None = None
    oom_killed: bool = False
    restart_count: int | None = None
    restarts_10m: int | None = None  # how many times it restarted in the last 10 minutes
    restart_policy: str | None = None  # no, always, unless-stopped, on-failure
    error: str | None = None  # why the engine could not (re)start it
    stopped_on_request: bool = False  # exited because someone stopped it (docker/podman stop)
    started_at: float | None = None  # epoch
    finished_at: float | None = None
    cpu_ratio: float | None = None  # of one CPU: 1.0 is a whole core
    memory_bytes: float | None = None
    memory_limit_bytes: float | None = None
    public: bool = False  # on /status (config: public = ["name*"])


class ContainersState(State):
    containers: list[ContainerView] = []
    engine: str | None = None  # "Docker 27.3.1", "Podman 5.2.2"
    restart_count: int | None = None  # the restarts in 10 minutes that make container_restarting
    stopped_on_request: str | None = None  # config: what a stop on request is (warning, critical, ignore)
