"""[collectors.systemd]: failed units, and the units and timers you name, from systemctl."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from collectors.config import Argv, CollectorBase, Seconds


class SystemdConfig(CollectorBase):
    interval: Seconds = 60.0
    systemctl: Argv = ["systemctl"]
    # Units to watch by name; * matches anything ("backup-*.timer"). Failed units are always shown.
    watch: list[str] = []
    # A watched timer whose service has not succeeded for this long is timer_stale (the nightly
    # backup did not run): 26 hours gives a daily job two hours of slack.
    stale_after: Seconds = 26 * 3600.0
    # More restarts than this within 10 minutes is unit_restarting.
    restart_count: Annotated[int, Field(ge=1)] = 3
    # Watched units whose name and uptime a public /status shows, by name ("nginx.service").
    public: list[str] = []
