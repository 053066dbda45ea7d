"""What the systemd collector knows of each unit: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class UnitView(Record):
    unit: str  # nginx.service, backup.timer
    description: str = ""
    active: str = ""  # active, inactive, failed, activating ...
    sub: str = ""  # running, exited, dead, failed, waiting ...
    result: str | None = None  # success, exit-code, signal, timeout ...
    exit_status: int | None = None
    restarts: int | None = None  # NRestarts
    restarts_10m: int | None = None
    watched: bool = False  # named in watch (else shown because it failed)
    since: float | None = None  # when it entered its state
    # Timers: the service they start, its last success, the last and next trigger.
    triggers: str | None = None
    last_trigger: float | None = None
    next_trigger: float | None = None
    last_success: float | None = None
    stale: bool = False  # a watched timer's service has not succeeded within stale_after
    public: bool = False  # on /status (config: public = ["nginx.service"])


class SystemdState(State):
    units: list[UnitView] = []
    stale_after: float | None = None
    restart_count: int | None = None
